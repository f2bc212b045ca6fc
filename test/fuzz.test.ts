// A fuzz test of our own (issue 12): a seeded stream of malformed requests against the Express and
// Koa examples and a Hono app on the Fetch handlers, over loopback. Every answer is a 2xx or 4xx,
// with JSON {detail} for errors on scanauth's routes and WeChat's text format on the callback; none
// is a 5xx, none hangs, and nothing is logged as an error. Then the Express example, in a process of
// its own, takes 50,000 more bad requests after a warm-up without its memory growing by 20 MB.
//
// Bounded by default; for a longer run: SCANAUTH_FUZZ_REQUESTS (per app, default 2000),
// SCANAUTH_FUZZ_MEMORY_REQUESTS (default 50000), SCANAUTH_FUZZ_SEED (to replay a stream).
import { spawn, type ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { runStream, type FuzzFailure } from './support/fuzz-client'
import { FUZZ_TARGETS } from './support/fuzz-apps'
import { nextRequest, seededRandom } from './support/fuzz-requests'
import { REPO_ROOT } from './support/markdown'
import type { MemoryReport } from './support/memory-app'

const number = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number`)
  return value
}
const SEED = number('SCANAUTH_FUZZ_SEED', 12)
const REQUESTS = number('SCANAUTH_FUZZ_REQUESTS', 2000)
const MEMORY_REQUESTS = number('SCANAUTH_FUZZ_MEMORY_REQUESTS', 50_000)
const WARM_UP = 5000
const MB = 1024 * 1024
/** Far above any answer's time over loopback: only a request that hangs reaches it. */
const TIMEOUT_MS = 10_000

/** The first failures, one a line, for the assertion message. */
const report = (failures: FuzzFailure[]) => failures.slice(0, 15).map((f) => `#${f.index} ${f.problem}\n    ${f.request}`).join('\n')

describe(`fuzz (seed ${SEED})`, () => {
  for (const [name, start] of Object.entries(FUZZ_TARGETS)) {
    it(`${name}: ${REQUESTS} malformed requests get a 2xx or 4xx in the right format, none hangs, nothing logged as an error`, async () => {
      const target = await start()
      try {
        const random = seededRandom(SEED)
        const { failures, statuses } = await runStream({
          base: target.url,
          count: REQUESTS,
          concurrency: 8,
          timeoutMs: TIMEOUT_MS,
          next: () => nextRequest(random, { maxBodyBytes: 1_200_000 }),
        })
        expect(failures, `${failures.length} of ${REQUESTS} failed (seed ${SEED}):\n${report(failures)}`).toEqual([])
        // The stream reaches past the parsers: scanauth's own refusals are among the answers.
        expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([400, 401, 404, 405]))
        expect(target.lines.filter((line) => /internal error|error on |callback error/.test(line))).toEqual([])
      } finally {
        await target.close()
      }
    }, 120_000)
  }

  it(`the Express example's memory stays flat: ${MEMORY_REQUESTS} bad requests after a warm-up grow its RSS by less than 20 MB`, async () => {
    const app = await MemoryApp.start()
    try {
      const random = seededRandom(SEED + 1)
      // Small bodies: the point is many requests, and big ones only slow the stream down.
      const stream = (count: number) => runStream({ base: app.url, count, concurrency: 32, timeoutMs: TIMEOUT_MS, judge: false, next: () => nextRequest(random, { maxBodyBytes: 16_384 }) })

      const warm = await stream(WARM_UP)
      const before = await app.measure()
      const abuse = await stream(MEMORY_REQUESTS)
      const after = await app.measure()

      const grown = after.memory.rss - before.memory.rss
      const summary = `RSS ${mb(before.memory.rss)} → ${mb(after.memory.rss)}, heap ${mb(before.memory.heapUsed)} → ${mb(after.memory.heapUsed)}`
      console.info(`memory after ${WARM_UP} + ${MEMORY_REQUESTS} bad requests: ${summary}`)
      expect([...warm.failures, ...abuse.failures], report([...warm.failures, ...abuse.failures])).toEqual([])
      expect(grown, summary).toBeLessThan(20 * MB)
      expect(after.errorLines).toBe(0)
    } finally {
      await app.stop()
    }
  }, 90_000)
})

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`

/** `test/support/memory-app.ts` in a child process with `--expose-gc`, spoken to over IPC. */
class MemoryApp {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly output: () => string,
  ) {}

  static start(): Promise<MemoryApp> {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--conditions=@scanauth/source', 'test/support/memory-app.ts'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`the memory app did not start within 30 s:\n${output}`))
      }, 30_000)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the memory app exited (${code}) before it listened:\n${output}`))
      })
      child.once('message', (message: { ready?: string }) => {
        clearTimeout(timer)
        if (typeof message.ready === 'string') resolve(new MemoryApp(child, message.ready, () => output))
        else reject(new Error(`unexpected first message ${JSON.stringify(message)}`))
      })
    })
  }

  measure(): Promise<MemoryReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no measurement within 10 s:\n${this.output()}`)), 10_000)
      this.child.once('message', (message) => {
        clearTimeout(timer)
        resolve(message as MemoryReport)
      })
      this.child.send('measure')
    })
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((done) => this.child.once('exit', done))
    this.child.send('stop')
    const force = setTimeout(() => this.child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(force)
  }
}
