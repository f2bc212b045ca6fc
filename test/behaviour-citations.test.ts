// Code and docs cite the rules by the ids of docs/behaviour.md (`B-scan-5`, `D-free-stale`): every
// cited id must exist there, so renaming or dropping a rule cannot leave a citation pointing nowhere.
// And no comment cites "specification section N" or "spec §…", which a reader of this repository
// cannot open.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkedMarkdownFiles, REPO_ROOT } from './support/markdown'

/** A rule id as behaviour.md defines it (in bold) and as citations write it. */
const RULE_ID = /\b[BD]-[a-z]+(?:-[0-9a-z]+)*\b/g
const DEFINED = /\*\*([BD]-[a-z]+(?:-[0-9a-z]+)*)\*\*/g
/** Citations of a text this repository does not hold. */
const UNREADABLE_CITATION = /specification,? section \d|\bspec(?:ification)?\.? ?§|section \d+ of the spec/i

/** Every `.ts` file under the given top-level folders (relative paths), without dependencies or builds. */
function typescriptFiles(...tops: string[]): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts')) found.push(relative(REPO_ROOT, path).split(sep).join('/'))
    }
  }
  for (const top of tops) walk(join(REPO_ROOT, top))
  return found.sort()
}

const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8')

describe('citations of docs/behaviour.md', () => {
  const defined = new Set([...read('docs/behaviour.md').matchAll(DEFINED)].map((m) => m[1]))
  const sources = typescriptFiles('packages', 'examples', 'bench')
  const citing = [...sources, ...checkedMarkdownFiles().filter((f) => f !== 'docs/behaviour.md')]

  it('behaviour.md defines its rule ids, each once', () => {
    const all = [...read('docs/behaviour.md').matchAll(DEFINED)].map((m) => m[1])
    expect(defined.size).toBeGreaterThan(50)
    expect(all.filter((id, i) => all.indexOf(id) !== i)).toEqual([])
  })

  it('every cited rule id exists in behaviour.md', () => {
    const missing: string[] = []
    for (const file of citing) {
      read(file).split('\n').forEach((line, i) => {
        for (const [id] of line.matchAll(RULE_ID)) if (!defined.has(id)) missing.push(`${file}:${i + 1} cites ${id}`)
      })
    }
    expect(missing).toEqual([])
  })

  it('no code cites the specification by section', () => {
    const found: string[] = []
    for (const file of sources) {
      read(file).split('\n').forEach((line, i) => {
        if (UNREADABLE_CITATION.test(line)) found.push(`${file}:${i + 1} ${line.trim()}`)
      })
    }
    expect(found, 'cite docs/behaviour.md and a rule id instead').toEqual([])
  })
})
