/**
 * A fixture app (`out/express-app.js`, `out/koa-app.js`) running in its own `node` process from the
 * consumer folder, so it loads the packages exactly as installed there. The app prints one line
 * `{"ready":{"app":…,"emulator":…}}` once it listens; the test talks to both over real sockets.
 */
import { spawn } from 'node:child_process'
import { childEnv } from './run'

/** A started app and its emulated WeChat. */
export interface RunningApp {
  /** The app's base URL, `http://127.0.0.1:<port>`. */
  app: string
  /** The emulator's base URL. */
  emulator: string
  /** What the process printed so far (for failure messages). */
  output(): string
  /** Ends the process and waits until it has exited. */
  stop(): Promise<void>
}

/** Starts `node <script>` in `cwd` and waits for its ready line (at most `timeoutMs`). */
export function startApp(cwd: string, script: string, timeoutMs = 30_000): Promise<RunningApp> {
  const child = spawn(process.execPath, [script], { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (why: string): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void stop().then(() => reject(new Error(`${script} ${why}\n--- output\n${output}`)))
    }
    const timer = setTimeout(() => fail(`printed no ready line within ${timeoutMs} ms`), timeoutMs)
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
      const line = output.split('\n').find((l) => l.startsWith('{"ready"'))
      if (line === undefined || settled) return
      settled = true
      clearTimeout(timer)
      const { ready } = JSON.parse(line) as { ready: { app: string; emulator: string } }
      resolve({ ...ready, output: () => output, stop })
    })
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before it was ready`))
  })
}
