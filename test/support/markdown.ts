/**
 * Finding the Markdown files whose code blocks are checked, and reading the fenced blocks out of
 * them with the Markdown line each one starts on.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

/** The repository root (this file is `test/support/markdown.ts`). */
export const REPO_ROOT = join(import.meta.dirname, '..', '..')

/** One fenced code block of a Markdown file. */
export interface FencedBlock {
  /** The info string's first word (`ts`, `sh`, `text`), or `''` for a bare fence. */
  lang: string
  /** 1-based line of the opening fence in the Markdown file. */
  fenceLine: number
  /** The block's content, its list indentation removed. */
  code: string
}

/** Folders never searched: dependencies, build output, the generated API reference. */
const SKIPPED = new Set(['node_modules', 'dist', 'api', '.snippets'])

/** Every `.md` file under `dir` (absolute paths), skipping dependencies and build output. */
function markdownUnder(dir: string, onlyReadmes: boolean): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...markdownUnder(path, onlyReadmes))
    else if (entry.name.endsWith('.md') && (!onlyReadmes || entry.name === 'README.md')) found.push(path)
  }
  return found
}

function existingDir(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * The Markdown files whose blocks are checked, as paths relative to the repository root with `/`:
 * `docs/**\/*.md`, the root `README.md`, `packages/*\/README.md` and `examples/**\/README.md`.
 */
export function checkedMarkdownFiles(root = REPO_ROOT): string[] {
  const files = [join(root, 'README.md')]
  if (existingDir(join(root, 'docs'))) files.push(...markdownUnder(join(root, 'docs'), false))
  for (const pkg of readdirSync(join(root, 'packages'), { withFileTypes: true })) {
    const readme = join(root, 'packages', pkg.name, 'README.md')
    if (pkg.isDirectory() && statSync(readme, { throwIfNoEntry: false })?.isFile()) files.push(readme)
  }
  if (existingDir(join(root, 'examples'))) files.push(...markdownUnder(join(root, 'examples'), true))
  return files.map((f) => relative(root, f).split(sep).join('/')).sort()
}

/** An opening or closing fence: indentation, three or more backticks or tildes, the info string. */
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/

/**
 * The fenced code blocks of a Markdown text, in order. A block opened inside a list item may be
 * indented; that indentation is removed from its lines. An unclosed block runs to the end.
 */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split(/\r?\n/)
  const blocks: FencedBlock[] = []
  let open: { indent: number; marker: string; lang: string; fenceLine: number; body: string[] } | null = null
  for (const [index, line] of lines.entries()) {
    const match = FENCE.exec(line)
    if (open === null) {
      if (match === null) continue
      const [, indent = '', marker = '', info = ''] = match
      // A backtick fence's info string may not contain backticks (that is inline code, not a fence).
      if (marker.startsWith('`') && info.includes('`')) continue
      open = { indent: indent.length, marker, lang: info.trim().split(/\s+/)[0] ?? '', fenceLine: index + 1, body: [] }
      continue
    }
    const [, , marker = '', info = ''] = match ?? []
    if (match !== null && marker[0] === open.marker[0] && marker.length >= open.marker.length && info.trim() === '') {
      blocks.push({ lang: open.lang, fenceLine: open.fenceLine, code: open.body.join('\n') })
      open = null
      continue
    }
    const strip = Math.min(open.indent, line.length - line.trimStart().length)
    open.body.push(line.slice(strip))
  }
  if (open !== null) blocks.push({ lang: open.lang, fenceLine: open.fenceLine, code: open.body.join('\n') })
  return blocks
}

/** The blocks of one checked Markdown file (path relative to the repository root). */
export function blocksOf(file: string, root = REPO_ROOT): FencedBlock[] {
  return fencedBlocks(readFileSync(join(root, file), 'utf8'))
}
