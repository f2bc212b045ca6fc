/**
 * TypeScript over the consumer project: each tsconfig of the fixture under each compiler a user may
 * have. The consumer installs TypeScript 5.9 as `typescript` and TypeScript 7 (the native compiler,
 * what `npm i -D typescript` gives a new project) beside it under the alias `typescript7`; each one's
 * `bin/tsc` is run by path. Every check runs with `--explainFiles`, so the test also knows which
 * files made up the program and why each one is in it.
 */
import { join } from 'node:path'
import { run, type Ran } from './run'

/** The compilers: the folder under `node_modules/` each is installed in, its range, what its `--version` prints. */
export const COMPILERS = {
  'TypeScript 5.9': { folder: 'typescript', range: '~5.9', version: /^Version 5\.9\./ },
  'TypeScript 7': { folder: 'typescript7', range: 'npm:typescript@^7.0.2', version: /^Version 7\./ },
} as const

/** `TypeScript 5.9` or `TypeScript 7`. */
export type CompilerName = keyof typeof COMPILERS

/** The consumer's devDependencies that install the compilers. */
export function compilerDependencies(): Record<string, string> {
  return Object.fromEntries(Object.values(COMPILERS).map((c) => [c.folder, c.range]))
}

/** One TypeScript problem, as tsc printed it (`--pretty false`), with its continuation lines. */
export interface TscProblem {
  /** The file relative to the consumer (`src/x.ts`, `node_modules/...`); empty for a problem tied to no file. */
  file: string
  line: number
  /** `TS2591` */
  code: string
  /** The message, continuation lines included. */
  message: string
  /** The whole text as printed: `file(line,col): error TS…: message`. */
  text: string
}

/** A file of the program and why tsc took it in (`--explainFiles`): `Imported via '…' from file '…'`, … */
export interface ProgramFile {
  file: string
  reasons: string[]
}

/** One tsc run over the consumer. */
export interface TscCheck {
  compiler: CompilerName
  tsconfig: string
  ran: Ran
  /** Problems in our sources, our tarballs' `.d.ts`/`.d.cts`, or tied to no file: these fail the test. */
  ours: TscProblem[]
  /** Problems inside another project's published types: recorded, not failed on. */
  thirdParty: TscProblem[]
  /** Every file of the program. */
  files: ProgramFile[]
}

const DIAGNOSTIC = /^(?:(.+?)\((\d+),\d+\): )?error (TS\d+): (.*)$/

/**
 * Splits tsc's output: diagnostics (`file(line,col): error TS…: message`, continuation lines
 * indented) and the explained files (a path at column 0, its reasons indented below it).
 */
export function parseTscOutput(stdout: string): { problems: TscProblem[]; files: ProgramFile[] } {
  const problems: TscProblem[] = []
  const files: ProgramFile[] = []
  let last: 'problem' | 'file' | undefined
  for (const line of stdout.split(/\r?\n/)) {
    if (line.trim() === '') continue
    const match = DIAGNOSTIC.exec(line)
    if (match !== null) {
      problems.push({ file: match[1] ?? '', line: Number(match[2] ?? 0), code: match[3] ?? '', message: match[4] ?? '', text: line })
      last = 'problem'
    } else if (!/^\s/.test(line)) {
      files.push({ file: line, reasons: [] })
      last = 'file'
    } else if (last === 'problem') {
      const problem = problems.at(-1)!
      problem.text += `\n${line}`
      problem.message += `\n${line.trim()}`
    } else {
      files.at(-1)?.reasons.push(line.trim())
    }
  }
  return { problems, files }
}

/** The compiler's `--version` line (`Version 7.0.2`), or what it printed instead. */
export async function compilerVersion(dir: string, compiler: CompilerName): Promise<string> {
  const ran = await run(process.execPath, [tscOf(dir, compiler), '--version'], { cwd: dir, timeoutMs: 60_000 })
  return (ran.stdout + ran.stderr).trim()
}

function tscOf(dir: string, compiler: CompilerName): string {
  return join(dir, 'node_modules', COMPILERS[compiler].folder, 'bin', 'tsc')
}

/**
 * `tsc -p <tsconfig>` with one of the consumer's compilers; `extraArgs` such as `--noEmit`. Its
 * problems split by whose they are, and the files of its program.
 */
export async function typecheck(dir: string, tsconfig: string, compiler: CompilerName, extraArgs: string[] = []): Promise<TscCheck> {
  const args = [tscOf(dir, compiler), '-p', tsconfig, '--pretty', 'false', '--explainFiles', ...extraArgs]
  const ran = await run(process.execPath, args, { cwd: dir, timeoutMs: 3 * 60_000 })
  const { problems, files } = parseTscOutput(ran.stdout)
  if (problems.length === 0 && (ran.code !== 0 || ran.timedOut)) {
    const text = `tsc failed (exit ${ran.code}${ran.timedOut ? ', timed out' : ''}): ${ran.stderr || ran.stdout}`
    problems.push({ file: '', line: 0, code: '', message: text, text })
  }
  // Problems inside another project's published types (a DefinitelyTyped package disagreeing with
  // the version of a library npm hoisted) are reported but are not ours to fail on. Everything else
  // is: our sources, our tarballs' .d.ts/.d.cts, and problems tied to no file.
  const thirdParty = (p: TscProblem) => p.file.startsWith('node_modules/') && !p.file.startsWith('node_modules/@scanauth/')
  return { compiler, tsconfig, ran, ours: problems.filter((p) => !thirdParty(p)), thirdParty: problems.filter(thirdParty), files }
}

/**
 * How `@types/node` got into a program that asked for no types: for each of its files taken in from
 * outside `@types/node` itself, `file: reason` (e.g. a `/// <reference types="node" />` in one of our
 * `.d.ts`, or a dependency whose types import Node's). Empty when Node's types are not in it.
 * (Reasons that say what a file is, `File is CommonJS module because …`, say nothing of how it came.)
 */
export function nodeTypesReached(files: ProgramFile[]): string[] {
  const isNodeTypes = (file: string) => /(^|\/)node_modules\/(@types\/node|undici-types)\//.test(file)
  return files
    .filter((f) => isNodeTypes(f.file))
    .flatMap((f) => f.reasons.filter((reason) => !reason.startsWith('File is ') && !isNodeTypes(/from file '([^']+)'/.exec(reason)?.[1] ?? '')).map((reason) => `${f.file}: ${reason}`))
}

/** The problems as a list for a failure message: `file:line TS…: message`, one per problem. */
export function listProblems(problems: TscProblem[]): string {
  return problems.map((p) => `  ${p.file === '' ? '(no file)' : `${p.file}:${p.line}`} ${p.code}: ${p.message.replace(/\n/g, '\n      ')}`).join('\n')
}
