/**
 * What watching a SQLite file costs (docs/sqlite.md, "Waiting for a scan"): not a test, a
 * measurement, run by hand and recorded in the docs.
 *
 *   node --import tsx --conditions=@scanauth/source packages/sqlite/test/measure/watch-cost.ts [changePollMs ...]
 *
 * For each `changePollMs` (default 25): the CPU time this process uses over 10 s while one
 * listener watches and nothing changes, against 10 s with no listener; then the delay from a
 * commit in another process (this file, forked as the writer) to the listener here being told,
 * over 200 commits at random moments. Both processes read the same clock
 * (`performance.timeOrigin + performance.now()`).
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { createScanAuth } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'

const IDLE_MS = 10_000
const SAMPLES = 200

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const clock = () => performance.timeOrigin + performance.now()

/** CPU milliseconds (user + system) this process spends over `ms` of idling. */
async function cpuOver(ms: number): Promise<number> {
  const start = process.cpuUsage()
  // A referenced timer keeps the process alive: the store's own timer is unref'd.
  await pause(ms)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}

async function measure(changePollMs: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-watch-cost-'))
  const filename = join(dir, 'scanauth.db')
  const watcher = new SqliteStore({ filename, changePollMs })
  try {
    const idle = await cpuOver(IDLE_MS)
    const stopIdle = watcher.watchScenes(() => undefined)
    const watching = await cpuOver(IDLE_MS)
    stopIdle()

    const toldAt = new Map<string, number>()
    const stop = watcher.watchScenes((sceneStr) => {
      if (!toldAt.has(sceneStr)) toldAt.set(sceneStr, clock())
    })
    const writer = fork(fileURLToPath(import.meta.url), ['--writer', filename, String(changePollMs)], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const [commits] = (await once(writer, 'message')) as [Array<{ sceneStr: string; at: number }>]
    while (commits.some((c) => !toldAt.has(c.sceneStr))) await pause(changePollMs)
    stop()
    const delays = commits.map((c) => (toldAt.get(c.sceneStr) as number) - c.at).sort((a, b) => a - b)
    console.log(
      `changePollMs ${changePollMs}: CPU over ${IDLE_MS / 1000} s idle ${idle.toFixed(1)} ms without a listener, ` +
        `${watching.toFixed(1)} ms with one (${(((watching - idle) / IDLE_MS) * 100).toFixed(3)} % of a core more); ` +
        `commit in another process → listener here, over ${SAMPLES}: p50 ${percentile(delays, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(delays, 99).toFixed(1)} ms, max ${(delays[delays.length - 1] as number).toFixed(1)} ms`,
    )
  } finally {
    await watcher.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** The writer process: SAMPLES scene creations at random moments, then their commit times to the parent. */
async function write(filename: string, changePollMs: number): Promise<void> {
  const store = new SqliteStore({ filename })
  const auth = createScanAuth({ store, qr: { createQr: async () => ({ url: 'https://qr.example.test/x' }) } })
  const commits: Array<{ sceneStr: string; at: number }> = []
  for (let i = 0; i < SAMPLES; i++) {
    await pause(Math.random() * 2 * changePollMs)
    const { sceneStr } = await auth.createScene({ deviceId: `device-${i}` })
    commits.push({ sceneStr, at: clock() })
  }
  await store.close()
  process.send?.(commits, () => process.disconnect())
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === '--writer') await write(rest[0] as string, Number(rest[1]))
else {
  const intervals = [mode, ...rest].filter((a) => a !== undefined).map(Number)
  // A first, unrecorded second of idling, so that start-up work is not counted as idle CPU.
  await cpuOver(1000)
  for (const changePollMs of intervals.length > 0 ? intervals : [25]) await measure(changePollMs)
}
