/**
 * Scaling benchmark: createScene, pending polls, scans and authorized polls per second with 1, 2
 * and 4 app processes (`bench/scaling-worker.ts`, forked) against one Redis (`REDIS_URL`, default
 * redis://127.0.0.1:6379), each process a `createScanAuth` on a `RedisStore` with the same unique key
 * prefix, deleted afterwards (SCAN + DEL).
 *
 *   npx tsx --conditions=@scanauth/source bench/scaling.ts
 *
 * Every process runs the same number of concurrent callers (16), so adding processes adds load the
 * way adding app instances does. Each phase runs in all processes at once for a fixed time; the
 * figures are calls completed per second summed over the processes, per-call latency over all of
 * them, and where the CPU went during the phase: redis-server (from `INFO cpu` deltas, in % of one
 * core: Redis runs commands on one thread, so 100% is its ceiling), the app processes (their
 * `process.cpuUsage()`), and the whole machine (`/proc/stat`, in % of all cores, other work on the
 * machine included).
 *
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { summarize } from './lib'
import type { PhaseReport, ScalingCommand, ScalingPhase } from './scaling-worker'

/** One line of the scaling table. */
export interface ScalingRow {
  /** App processes. */
  processes: number
  /** What was measured. */
  phase: ScalingPhase
  /** Calls per second, all processes together. */
  opsPerSec: number
  /** `opsPerSec` divided by the one-process figure of the same phase. */
  speedup: number
  /** Median latency of a call, µs. */
  p50Us: number
  /** 99th percentile, µs. */
  p99Us: number
  /** redis-server CPU, % of one core (its command thread's ceiling is 100). */
  redisCpuPercent: number
  /** App processes' CPU together, % of one core. */
  appCpuPercent: number
  /** Whole machine busy, % of all its cores (other work included). */
  machineBusyPercent: number
  /** Commands Redis processed per second. */
  redisCommandsPerSec: number
  /** True when a process ran out of scenes to scan before the phase's time was up. */
  exhausted: boolean
}

/** Options of {@link benchScaling}. */
export interface BenchScalingOptions {
  /** Process counts to measure. Default `[1, 2, 4]`. */
  processes?: number[]
  /** Concurrent callers per process. Default 16. */
  lanes?: number
  /** Length of each phase, ms. Default 1500. */
  phaseMs?: number
  /** Times each process count is measured (alternating order), averaged. Default 2. */
  rounds?: number
}

const PHASES: ScalingPhase[] = ['createScene', 'pending poll', 'scan', 'authorized poll']
const here = fileURLToPath(new URL('.', import.meta.url))

/** Busy and total jiffies of the whole machine, from the first line of /proc/stat. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? []
  const total = fields.reduce((a, b) => a + b, 0)
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0) // idle + iowait
  return { busy: total - idle, total }
}

/** redis-server's CPU seconds (user + sys, main thread and children) and commands processed so far. */
async function redisCounters(client: Redis): Promise<{ cpuSeconds: number; commands: number }> {
  const [cpu, stats] = await Promise.all([client.info('cpu'), client.info('stats')])
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0)
  return { cpuSeconds: field(cpu, 'used_cpu_sys') + field(cpu, 'used_cpu_user'), commands: field(stats, 'total_commands_processed') }
}

/** Deletes every key under `prefix` (SCAN + DEL; the prefix has no glob characters). */
async function deletePrefix(client: Redis, prefix: string): Promise<number> {
  let cursor = '0'
  let deleted = 0
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) deleted += await client.del(...keys)
    cursor = next
  } while (cursor !== '0')
  return deleted
}

/** Forks one worker and waits until its Redis connection is up. */
async function startWorker(prefix: string, index: number, lanes: number): Promise<ChildProcess> {
  const child = fork(`${here}scaling-worker.ts`, [prefix, String(index), String(lanes)], {
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench/scaling-worker.ts exited (${code}) before it was ready`)))
    child.once('message', () => resolve())
  })
  child.removeAllListeners('exit')
  return child
}

/** Sends a phase to a worker and waits for its report. */
function runPhase(child: ChildProcess, phase: ScalingPhase, durationMs: number): Promise<PhaseReport> {
  return new Promise((resolve, reject) => {
    child.once('message', (message: PhaseReport | { type: 'error'; message: string }) =>
      message.type === 'done' ? resolve(message) : reject(new Error(`worker failed in ${phase}: ${message.message}`)),
    )
    child.send({ type: 'phase', phase, durationMs } satisfies ScalingCommand)
  })
}

/** Stops workers: asks them to close, then kills any that is still there after 3 s. */
async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      if (child.connected) child.send({ type: 'close' } satisfies ScalingCommand)
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))])
      if (child.exitCode === null && child.signalCode === null) child.kill()
    }),
  )
}

/** What one phase at one process count measured, summed over rounds. */
interface Tally {
  samplesUs: number[]
  /** Sum over rounds of the processes' calls per second. */
  opsPerSecSum: number
  rounds: number
  wallMs: number
  appCpuUs: number
  redisCpuSeconds: number
  redisCommands: number
  machineBusy: number
  machineTotal: number
  exhausted: boolean
}

/**
 * Runs the scaling benchmark (about 50 s with the defaults) and returns one row per process count
 * and phase. The process counts are measured `rounds` times, in alternating order (1, 2, 4, then
 * 4, 2, 1), and averaged, so a change in background load during the run does not land on one count
 * only. Workers and keys are removed whatever happens.
 */
export async function benchScaling(options: BenchScalingOptions = {}): Promise<ScalingRow[]> {
  const { processes = [1, 2, 4], lanes = 16, phaseMs = 1500, rounds = 2 } = options
  const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const prefix = `scanauth:bench-scaling:${randomBytes(4).toString('hex')}:{sc}:`
  const tallies = new Map<string, Tally>()
  const workers: ChildProcess[] = []
  try {
    for (let round = 0; round < rounds; round++) {
      for (const n of round % 2 === 0 ? processes : [...processes].reverse()) {
        for (let i = 0; i < n; i++) workers.push(await startWorker(prefix, i, lanes))
        for (const phase of PHASES) {
          const [redisBefore, machineBefore] = await Promise.all([redisCounters(admin), machineTicks()])
          const began = performance.now()
          const reports = await Promise.all(workers.map((w) => runPhase(w, phase, phaseMs)))
          const wallMs = performance.now() - began
          const [redisAfter, machineAfter] = await Promise.all([redisCounters(admin), machineTicks()])
          const key = `${n}|${phase}`
          const tally: Tally = tallies.get(key) ?? {
            samplesUs: [], opsPerSecSum: 0, rounds: 0, wallMs: 0, appCpuUs: 0, redisCpuSeconds: 0, redisCommands: 0, machineBusy: 0, machineTotal: 0, exhausted: false,
          }
          for (const r of reports) for (const x of r.samplesUs) tally.samplesUs.push(x)
          tally.opsPerSecSum += reports.reduce((sum, r) => sum + (r.count / r.wallMs) * 1000, 0)
          tally.rounds++
          tally.wallMs += wallMs
          tally.appCpuUs += reports.reduce((sum, r) => sum + r.cpuUs, 0)
          tally.redisCpuSeconds += redisAfter.cpuSeconds - redisBefore.cpuSeconds
          tally.redisCommands += redisAfter.commands - redisBefore.commands
          tally.machineBusy += machineAfter.busy - machineBefore.busy
          tally.machineTotal += machineAfter.total - machineBefore.total
          tally.exhausted ||= reports.some((r) => r.exhausted)
          tallies.set(key, tally)
        }
        await stopWorkers(workers.splice(0))
      }
    }
    const rows: ScalingRow[] = []
    for (const n of processes) {
      for (const phase of PHASES) {
        const t = tallies.get(`${n}|${phase}`) as Tally
        const single = tallies.get(`${processes[0]}|${phase}`) as Tally
        const figures = summarize(t.samplesUs)
        const seconds = t.wallMs / 1000
        rows.push({
          processes: n,
          phase,
          opsPerSec: t.opsPerSecSum / t.rounds,
          speedup: t.opsPerSecSum / t.rounds / (single.opsPerSecSum / single.rounds),
          p50Us: figures.p50Us,
          p99Us: figures.p99Us,
          redisCpuPercent: (t.redisCpuSeconds / seconds) * 100,
          appCpuPercent: (t.appCpuUs / 1000 / t.wallMs) * 100,
          machineBusyPercent: (t.machineBusy / Math.max(1, t.machineTotal)) * 100,
          redisCommandsPerSec: t.redisCommands / seconds,
          exhausted: t.exhausted,
        })
      }
    }
    return rows
  } finally {
    await stopWorkers(workers)
    await deletePrefix(admin, prefix)
    await admin.quit()
  }
}

/** The rows as a Markdown table. */
export function scalingTable(rows: ScalingRow[]): string {
  const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const lines = [
    '| app processes | operation | ops/s | × 1 process | p50 µs | p99 µs | redis-server CPU (% of 1 core) | app CPU (% of 1 core) | machine busy (% of all cores) | Redis commands/s (script calls included) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const phase of PHASES) {
    for (const r of rows.filter((x) => x.phase === phase)) {
      lines.push(
        `| ${r.processes} | ${r.phase}${r.exhausted ? ' (pool ran out)' : ''} | ${n(r.opsPerSec)} | ${n(r.speedup, 2)} | ${n(r.p50Us)} | ${n(r.p99Us)} | ` +
          `${n(r.redisCpuPercent)} | ${n(r.appCpuPercent)} | ${n(r.machineBusyPercent)} | ${n(r.redisCommandsPerSec)} |`,
      )
    }
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const rows = await benchScaling()
  console.log(scalingTable(rows))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, ${cpus().length} cores, Node ${process.version})`)
}
