/**
 * Runs the command line as a child process: `node test-output/scanauth.mjs …`, the bin the global
 * setup built from the sources (build-bin.ts), with an environment of the test's own (the runner's
 * `SCANAUTH_STORE`, `REDIS_URL` and so on never leak in).
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect } from 'vitest'
import { BUILT_BIN } from './build-bin'

/** What one run of `scanauth` did. */
export interface CliRun {
  /** The command line, for messages. */
  argv: string[]
  /** Exit status. */
  status: number
  stdout: string
  stderr: string
}

/** Options of one run. */
export interface CliOptions {
  /** Environment variables besides PATH and HOME. */
  env?: Record<string, string>
  /** Working folder (default: this package's). */
  cwd?: string
}

/** Runs `scanauth …argv` to its end. */
export function scanauth(argv: string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUILT_BIN, ...argv], {
      cwd: options.cwd ?? join(import.meta.dirname, '..', '..'),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', reject)
    child.once('close', (code, signal) => {
      if (code === null) reject(new Error(`scanauth ${argv.join(' ')} ended by ${signal}`))
      else resolve({ argv, status: code, stdout, stderr })
    })
  })
}

/** Runs and expects success (exit 0, nothing on standard error); answers the run. */
export async function succeeds(argv: string[], options?: CliOptions): Promise<CliRun> {
  const run = await scanauth(argv, options)
  expect({ argv, status: run.status, stderr: run.stderr }).toEqual({ argv, status: 0, stderr: '' })
  return run
}

/** Runs with `--json` and expects success; answers the parsed output. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- outputs are checked field by field
export async function json(argv: string[], options?: CliOptions): Promise<any> {
  const run = await succeeds([...argv, '--json'], options)
  return JSON.parse(run.stdout)
}

/**
 * Expects a refusal: the exit status, nothing on standard output, and exactly one line on
 * standard error, `scanauth: …`, without a stack trace. Answers that line.
 */
export function expectRefusal(run: CliRun, status: 1 | 2, pattern?: RegExp): string {
  const lines = run.stderr.split('\n')
  expect({ argv: run.argv, status: run.status, stdout: run.stdout, lineCount: lines.length, last: lines[1] }).toEqual({
    argv: run.argv,
    status,
    stdout: '',
    lineCount: 2,
    last: '',
  })
  const line = lines[0] as string
  expect(line).toMatch(/^scanauth: \S/)
  // No stack trace: no "(file:line:column)" frame, nothing of Node's internals.
  expect(line).not.toMatch(/\(\S+:\d+:\d+\)|node:internal/)
  if (pattern !== undefined) expect(line).toMatch(pattern)
  return line
}
