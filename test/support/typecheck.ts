/**
 * Type-checking the TypeScript blocks of Markdown files: each block becomes its own module file in a
 * temporary folder inside the repository (so `@scanauth/*` resolve through `node_modules` to their
 * sources, by the `@scanauth/source` condition of the root tsconfig), and one TypeScript program
 * checks them all. Problems are reported at the Markdown file and line they come from.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { REPO_ROOT } from './markdown'

/** One TypeScript block to check. */
export interface Snippet {
  /** The Markdown file, relative to the repository root (`docs/getting-started.md`). */
  markdownFile: string
  /** 1-based line of the block's opening fence. */
  fenceLine: number
  /** The block's content. */
  code: string
}

/** A problem TypeScript found, placed in the Markdown file. */
export interface SnippetProblem {
  markdownFile: string
  /** 1-based Markdown line of the problem. */
  line: number
  /** `docs/x.md:31:7 TS2304 Cannot find name 'qr'.` */
  text: string
}

/** Where the temporary snippet folders go (gitignored). */
export const SNIPPETS_DIR = join(REPO_ROOT, 'test', '.snippets')

/** The module file name of a snippet: where it came from, e.g. `docs_getting-started.md_L27.ts`. */
export function snippetFileName(snippet: Pick<Snippet, 'markdownFile' | 'fenceLine'>): string {
  return `${snippet.markdownFile.replaceAll('/', '_')}_L${snippet.fenceLine}.ts`
}

/** The root tsconfig's compiler options, made to check separate modules without emitting. */
function compilerOptions(): ts.CompilerOptions {
  const configPath = join(REPO_ROOT, 'tsconfig.json')
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path))
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, REPO_ROOT, undefined, configPath)
  return {
    ...parsed.options,
    noEmit: true,
    declaration: false,
    // Every block is a module of its own, even one without imports: its names never meet another block's.
    moduleDetection: ts.ModuleDetectionKind.Force,
  }
}

/** Type-checks every snippet in one program and returns the problems (an empty list when all pass). */
export function typecheckSnippets(snippets: readonly Snippet[]): SnippetProblem[] {
  mkdirSync(SNIPPETS_DIR, { recursive: true })
  // A folder of this run's own, so two runs at once (two terminals, the full suite) never collide.
  const dir = mkdtempSync(join(SNIPPETS_DIR, 'run-'))
  try {
    const byPath = new Map<string, Snippet>()
    for (const snippet of snippets) {
      const path = join(dir, snippetFileName(snippet))
      writeFileSync(path, `${snippet.code}\n`)
      byPath.set(ts.sys.resolvePath(path), snippet)
    }
    const program = ts.createProgram({ rootNames: [...byPath.keys()], options: compilerOptions() })
    const general = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
    if (general.length > 0) throw new Error(ts.formatDiagnostics(general, formatHost))
    const problems: SnippetProblem[] = []
    for (const [path, snippet] of byPath) {
      const source = program.getSourceFile(path)
      if (source === undefined) throw new Error(`TypeScript did not read ${path}`)
      const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
      for (const diagnostic of diagnostics) problems.push(place(diagnostic, source, snippet))
    }
    return problems
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => REPO_ROOT,
  getNewLine: () => '\n',
}

/** A diagnostic of a snippet file, moved to its Markdown file and line. */
function place(diagnostic: ts.Diagnostic, source: ts.SourceFile, snippet: Snippet): SnippetProblem {
  const at = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
  // The block's first line is the one after the fence.
  const line = snippet.fenceLine + 1 + at.line
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
  return {
    markdownFile: snippet.markdownFile,
    line,
    text: `${snippet.markdownFile}:${line}:${at.character + 1} TS${diagnostic.code} ${message}`,
  }
}
