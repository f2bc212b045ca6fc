/**
 * HTTP benchmark: the pending poll (`GET /auth/status?scene=<pending scene>`) through the Express
 * and the Koa middleware (MemoryStore), each beside a bare route of the same framework that answers
 * a similar small JSON body, under load from autocannon on 127.0.0.1.
 *
 *   npx tsx --conditions=@scanauth/source bench/http.ts
 *
 * The servers run in a child process (`bench/http-server.ts`), autocannon in this one. On the same
 * event loop the load generator would take turns with the server on one core, and its own
 * per-request cost (writing the request, parsing the response) would be added to both sides of the
 * ratio, pulling it towards 1; in a child process the server has a core to itself and the figures
 * are the server's capacity. Each framework's two targets are measured in alternating one-second
 * slices (after a warm-up slice each), with a fixed number of connections, so background load on
 * the shared machine lands on both sides of the ratio. Throughput is 2xx responses per wall-clock
 * second over the slices; the ratio is the median of the per-round ratios of adjacent slices (see
 * {@link HttpBenchRow}); latencies are per response, measured by autocannon (microsecond precision,
 * from its `response` events); server CPU is the child's `process.cpuUsage()` over the measured
 * slices.
 *
 * @module
 */
import autocannon from 'autocannon'
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { HttpFramework, ServerReady } from './http-server'
import { markdownTable, row, summarize, type BenchRow, type Measurement } from './lib'

/**
 * A row of this benchmark: the common row plus the CPU the server used. Its `ratio` is the median
 * over the measured rounds of (our slice's req/s ÷ the adjacent bare slice's req/s), which a burst of
 * background load in one slice cannot move much; `totalsRatio` is req/s ÷ baseline req/s over all
 * slices.
 */
export interface HttpBenchRow extends BenchRow {
  /** `opsPerSec / baseline.opsPerSec` over all slices (the plain ratio of the table's req/s). */
  totalsRatio: number
  /**
   * Server CPU time per request, bare route ÷ ours (median over rounds): the ratio in work done,
   * which other load on the machine disturbs less than throughput.
   */
  cpuRatio: number
  /** Server CPU while serving the operation, in % of one core. */
  serverCpuPercent: number
  /** The same for the baseline. */
  baselineServerCpuPercent: number
  /** Load generator (this process) CPU while measuring the operation, in % of one core. */
  clientCpuPercent: number
  /** Responses that were not 2xx, or errors, on either side (should be 0). */
  failures: number
}

/** Options of {@link benchHttp}. */
export interface BenchHttpOptions {
  /** Connections autocannon keeps open. Default 16. */
  connections?: number
  /** Measured slices per target. Default 8. */
  slices?: number
  /** Length of a slice, seconds. Default 1 (so 8 s per target). */
  sliceSeconds?: number
}

/** What one target's slices add up to. */
interface Side {
  samplesUs: number[]
  wallMs: number
  serverCpuUs: number
  clientCpuUs: number
  failures: number
  /** Per measured slice: 2xx responses per second. */
  sliceRps: number[]
  /** Per measured slice: server CPU µs per response. */
  sliceCpuPerResponse: number[]
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const here = fileURLToPath(new URL('.', import.meta.url))

/** Starts `bench/http-server.ts` for `framework` in a child process and waits until it listens. */
async function startServers(framework: HttpFramework): Promise<{ child: ChildProcess; ready: ServerReady }> {
  const child = fork(`${here}http-server.ts`, [framework], {
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench/http-server.ts exited (${code}) before it was ready`)))
    child.once('message', (message) => resolve(message as ServerReady))
  })
  child.removeAllListeners('exit')
  return { child, ready }
}

/** The child's CPU time so far, in microseconds. */
async function serverCpu(child: ChildProcess): Promise<number> {
  const answer = once(child, 'message') as Promise<[{ usage: NodeJS.CpuUsage }]>
  child.send({ type: 'cpu' })
  const [{ usage }] = await answer
  return usage.user + usage.system
}

/** One slice of load on `url`; its figures are added to `side` when `side` is given. */
async function slice(url: string, child: ChildProcess, connections: number, seconds: number, side?: Side): Promise<void> {
  const samples: number[] = []
  let failures = 0
  const cpuBefore = await serverCpu(child)
  const clientBefore = process.cpuUsage()
  const began = performance.now()
  // Bounded in time and in requests (far above what one core serves in a slice).
  const instance = autocannon({ url, connections, pipelining: 1, duration: seconds, maxOverallRequests: 200_000 * seconds, timeout: 10 })
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    if (statusCode >= 200 && statusCode < 300) samples.push(responseTimeMs * 1000)
    else failures++
  })
  const result = await instance
  const wallMs = performance.now() - began
  const client = process.cpuUsage(clientBefore)
  const cpuAfter = await serverCpu(child)
  if (side) {
    side.samplesUs.push(...samples)
    side.wallMs += wallMs
    side.serverCpuUs += cpuAfter - cpuBefore
    side.clientCpuUs += client.user + client.system
    side.failures += failures + result.errors + result.timeouts
    side.sliceRps.push((samples.length / wallMs) * 1000)
    side.sliceCpuPerResponse.push((cpuAfter - cpuBefore) / Math.max(1, samples.length))
  }
}

/** The figures of a side: responses per wall-clock second, per-response latencies. */
function figures(side: Side): Measurement {
  return { ...summarize(side.samplesUs), opsPerSec: (side.samplesUs.length / side.wallMs) * 1000 }
}

/**
 * Runs the HTTP benchmark (about 40 s with the defaults) and returns one row per framework. Each
 * framework's child process is stopped whatever happens.
 */
export async function benchHttp(options: BenchHttpOptions = {}): Promise<HttpBenchRow[]> {
  const { connections = 16, slices = 8, sliceSeconds = 1 } = options
  const frameworks = [
    { name: 'express', label: 'Express 5', target: 0.9 },
    { name: 'koa', label: 'Koa 3', target: 0.85 },
  ] as const
  const rows: HttpBenchRow[] = []
  for (const framework of frameworks) {
    const { child, ready } = await startServers(framework.name)
    try {
      const targets = [
        `http://127.0.0.1:${ready.ports.scanauth}/auth/status?scene=${ready.scene}`,
        `http://127.0.0.1:${ready.ports.bare}/bare/status?scene=${ready.scene}`,
      ]
      const sides: Side[] = targets.map(() => ({ samplesUs: [], wallMs: 0, serverCpuUs: 0, clientCpuUs: 0, failures: 0, sliceRps: [], sliceCpuPerResponse: [] }))
      for (const target of targets) await slice(target, child, connections, sliceSeconds)
      for (let i = 0; i < slices; i++) {
        // Alternate which side goes first, so a trend in background load does not favour one.
        const order = i % 2 === 0 ? [0, 1] : [1, 0]
        for (const k of order) await slice(targets[k] as string, child, connections, sliceSeconds, sides[k])
      }
      const [ours, bare] = sides as [Side, Side]
      const cpu = (side: Side) => (side.serverCpuUs / 1000 / side.wallMs) * 100
      const plain = row(framework.name, 'pending poll, GET /auth/status', figures(ours), { name: `bare ${framework.label} route`, ...figures(bare) }, framework.target)
      rows.push({
        ...plain,
        ratio: median(ours.sliceRps.map((rps, i) => rps / (bare.sliceRps[i] as number))),
        totalsRatio: plain.ratio as number,
        cpuRatio: median(ours.sliceCpuPerResponse.map((us, i) => (bare.sliceCpuPerResponse[i] as number) / us)),
        serverCpuPercent: cpu(ours),
        baselineServerCpuPercent: cpu(bare),
        clientCpuPercent: (ours.clientCpuUs / 1000 / ours.wallMs) * 100,
        failures: ours.failures + bare.failures,
      })
    } finally {
      await stopServers(child)
    }
  }
  return rows
}

/** Asks the child to close its servers and exit; kills it if it is still there after 3 s. */
async function stopServers(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  if (child.connected) child.send({ type: 'close' })
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))])
  if (child.exitCode === null && child.signalCode === null) child.kill()
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const rows = await benchHttp()
  console.log(markdownTable(rows))
  for (const r of rows) {
    console.log(
      `${r.store}: ratio of totals ${r.totalsRatio.toFixed(2)}, CPU-per-request ratio ${r.cpuRatio.toFixed(2)}, ` +
        `server CPU ${r.serverCpuPercent.toFixed(0)}% (bare ${r.baselineServerCpuPercent.toFixed(0)}%), ` +
        `autocannon CPU ${r.clientCpuPercent.toFixed(0)}%, failures ${r.failures}`,
    )
  }
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version})`)
}
