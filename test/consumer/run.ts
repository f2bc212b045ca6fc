/**
 * Running commands for the consumer test: child processes with their output collected, and a time
 * limit that kills a hung one instead of letting the test wait forever.
 */
import { spawn } from 'node:child_process'

/** How a command ended and what it printed. */
export interface Ran {
  /** The command line, for messages. */
  command: string
  /** Exit code; null when a signal ended it. */
  code: number | null
  stdout: string
  stderr: string
  /** True when it was killed for running past its time limit. */
  timedOut: boolean
}

/**
 * The environment for the commands: ours, less what would tie a child to this test run. npm sets
 * `npm_package_*`, `npm_lifecycle_*`, `npm_config_local_prefix` and friends for the `npm test` that
 * started us; a nested npm in the consumer folder must find its own project, not the repository.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    const lower = name.toLowerCase()
    const tiedToUs =
      lower.startsWith('npm_package_') ||
      lower.startsWith('npm_lifecycle_') ||
      ['npm_config_local_prefix', 'npm_command', 'npm_execpath', 'npm_node_execpath', 'init_cwd', 'node_options'].includes(lower) ||
      lower.startsWith('vitest')
    if (!tiedToUs) env[name] = value
  }
  return env
}

/** Runs `command args` in `cwd`; resolves when it ends (never rejects for a non-zero exit). */
export function run(command: string, args: string[], options: { cwd: string; timeoutMs: number }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, options.timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ command: [command, ...args].join(' '), code, stdout, stderr, timedOut })
    })
  })
}

/** The command's stdout; throws with everything it printed when it failed or timed out. */
export function succeeded(ran: Ran): string {
  if (ran.code === 0 && !ran.timedOut) return ran.stdout
  const how = ran.timedOut ? 'ran past its time limit' : `exited with ${ran.code}`
  throw new Error(`\`${ran.command}\` ${how}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`)
}

/** The last line of `stdout` that parses as JSON. */
export function lastJsonLine(stdout: string): unknown {
  const lines = stdout.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('{') || line.startsWith('['))
  const last = lines.at(-1)
  if (last === undefined) throw new Error(`no JSON line in the output:\n${stdout}`)
  return JSON.parse(last)
}
