// Every ```ts block in docs/, the root README, the package READMEs and the examples' READMEs is a
// complete module that type-checks against the packages as they are: the docs cannot drift from the
// code unnoticed. Blocks that are not TypeScript say what they are (```sh, ```text); a bare fence
// fails, so a block cannot skip the check by leaving its language out.
import { beforeAll, describe, expect, it } from 'vitest'
import { blocksOf, checkedMarkdownFiles } from './support/markdown'
import { typecheckSnippets, type Snippet, type SnippetProblem } from './support/typecheck'

const TYPESCRIPT = new Set(['ts', 'typescript'])

const files = checkedMarkdownFiles()
const blocks = new Map(files.map((file) => [file, blocksOf(file)]))
const snippets: Snippet[] = files.flatMap((file) =>
  (blocks.get(file) ?? []).filter((b) => TYPESCRIPT.has(b.lang)).map((b) => ({ markdownFile: file, fenceLine: b.fenceLine, code: b.code })),
)

let problems: SnippetProblem[] | undefined

describe('TypeScript blocks in the docs', () => {
  beforeAll(() => {
    problems = typecheckSnippets(snippets)
  })

  it('finds the docs and their blocks', () => {
    expect(files).toContain('README.md')
    expect(files).toContain('docs/getting-started.md')
    expect(snippets.length).toBeGreaterThan(10)
  })

  it.each(files)('%s', (file) => {
    const bare = (blocks.get(file) ?? []).filter((b) => b.lang === '').map((b) => `${file}:${b.fenceLine} a code block without a language (use ts, sh or text)`)
    if (problems === undefined) throw new Error('the snippets were not type-checked')
    const found = problems.filter((p) => p.markdownFile === file).map((p) => p.text)
    expect([...bare, ...found], `${file} has blocks that do not check`).toEqual([])
  })
})
