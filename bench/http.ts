/**
 * HTTP benchmark: the polls as devices make them (`GET /auth/status?scene=…` of a pending scene and
 * of an authorized one) through the Express and the Koa middleware, each beside a bare route of the
 * same framework that answers the same JSON body, under load from autocannon on 127.0.0.1. On a
 * MemoryStore: the pending poll through Express and Koa, the authorized poll through Express; on
 * the SQLite, the Redis and the PostgreSQL store (`bench/stores.ts`), both polls through Express:
 * what users run. And on those three stores the guard (issue 19), which runs on every request of an
 * app that adopts it: the app's own route `GET /api/report` behind `requireAuthorization()` of
 * `@scanauth/express`, called with a live session's `Authorization: Bearer` (a time authorization, the
 * free trial), against the same route and handler unguarded, sent the same header (target ≥ 0.7). On
 * Redis and PostgreSQL the server process also counts the store's round trips per response, as the
 * store sections count them (commands on the client, statements on the pool). And on those three
 * stores, through Express, the opt-in modes of issue 20 together (`confirm: 'link'` with its
 * `confirmation`, and `requirePollSecret: true`, in a server process of their own; see
 * `bench/http-server.ts`): the pending poll of a scene made by `create_scene` (a masked client address
 * and a poll secret digest stored) and the authorized poll of a scene confirmed on the phone, both
 * sent with `X-Scanauth-Poll-Secret`, against the same bare route (sent the same header); no target:
 * the rows say what the modes cost the polls beside the plain rows of the same store.
 *
 * And OpenTelemetry (issue 21), on the SQLite store through Express: the pending poll in a server
 * process that registered an SDK before it created its app (`bench/http-telemetry.ts`: tracer and
 * meter providers, target ≥ 0.9), then the same with NodeSDK's `AsyncLocalStorageContextManager`, and
 * the poll inside an HTTP server span (as `@opentelemetry/instrumentation-http` makes one) with that
 * SDK. Their baseline is not the bare route but the same poll in another server process of the same
 * code without an SDK (the API installed, as core finds it; for the traced row, inside the no-op
 * tracer's span): the two processes take the alternating slices, and each side's CPU is its own
 * process's. The SDK process counts the spans its exporter is handed (per response in the row).
 *
 *   npx tsx --conditions=@scanauth/source bench/http.ts
 *   BENCH_QUICK=1 npx tsx --conditions=@scanauth/source bench/http.ts    # short slices: a check that it works
 *   BENCH_HTTP_STORES=memory npx tsx --conditions=@scanauth/source bench/http.ts   # only the rows on these stores
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
import type { ChildProcess } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { ask, startChild, stopChild } from './child'
import type { HttpFramework, HttpMode, ServerCpu, ServerReady } from './http-server'
import type { HttpTelemetry } from './http-telemetry'
import { markdownTable, QUICK, row, summarize, type BenchRow, type Measurement } from './lib'
import { STORE_LABEL, type StoreKind } from './stores'

/**
 * A row of this benchmark: the common row plus the CPU the server used. Its `ratio` is the median
 * over the measured rounds of (our slice's req/s ÷ the adjacent bare slice's req/s), which a burst of
 * background load in one slice cannot move much; `totalsRatio` is req/s ÷ baseline req/s over all
 * slices.
 */
export interface HttpBenchRow extends BenchRow {
  /** The store behind the middleware. */
  backend: StoreKind
  /** Which request: a poll of a pending scene or of an authorized one, or the app's own guarded route. */
  poll: RequestKind
  /** How the instance is configured: the defaults, or the opt-in modes of issue 20 (confirm on the phone and the poll secret). */
  mode: HttpMode
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
  /** OpenTelemetry rows (issue 21): what the measured process registered, and how the request runs; see {@link TelemetryRow}. */
  telemetry?: TelemetryRow
  /** OpenTelemetry rows: spans the SDK process's exporter was handed per response (over the measured slices). */
  spansPerOp?: number
  /**
   * Store round trips per response, counted in the server process as the store sections count them
   * (Redis commands on the client, PostgreSQL statements on the pool); on Redis and PostgreSQL only.
   */
  roundTripsPerOp?: number
  /** The same for the baseline (0: the bare route reads no store). */
  baselineRoundTripsPerOp?: number
}

/** The two polls a device makes: while it waits, and once the scene is authorized. */
export type PollKind = 'pending' | 'authorized'

/**
 * What a row requests: one of the polls, or `guarded`: the app's own route `GET /api/report` behind
 * `requireAuthorization()` with a live session's `Authorization: Bearer`, against the same route
 * unguarded (issue 19).
 */
export type RequestKind = PollKind | 'guarded'

/**
 * The OpenTelemetry rows (issue 21), each against the same poll in a process without an SDK: `sdk`, a
 * registered SDK (tracer and meter providers); `sdk+context`, the same with NodeSDK's
 * `AsyncLocalStorageContextManager`; `traced`, that SDK with each request in an HTTP server span
 * (against the no-op tracer's span without an SDK).
 */
export type TelemetryRow = 'sdk' | 'sdk+context' | 'traced'

/** What is measured: one poll through one framework on one store, and the goal when there is one. */
interface HttpTarget {
  framework: HttpFramework
  label: string
  store: StoreKind
  poll: RequestKind
  /** Default `plain`; `opt-in` runs in a server process of its own (`bench/http-server.ts`). */
  mode?: HttpMode
  /** An OpenTelemetry row: measured across two server processes (see {@link TelemetryRow}). */
  telemetry?: TelemetryRow
  target?: number
}

/** Issue 21: the pending poll with a registered OpenTelemetry SDK at least 0.9 of the same poll without one. */
export const TELEMETRY_TARGET = 0.9

/** Issue 19: a route behind `requireAuthorization()` at least 0.7 of the same route unguarded. */
export const GUARD_TARGET = 0.7

/** Every row, grouped by server process (framework, store and mode) in this order. */
const TARGETS: HttpTarget[] = [
  { framework: 'express', label: 'Express 5', store: 'memory', poll: 'pending', target: 0.9 },
  // Issue #13: at least 0.85 of a bare Express route (it was 0.68 before).
  { framework: 'express', label: 'Express 5', store: 'memory', poll: 'authorized', target: 0.85 },
  { framework: 'koa', label: 'Koa 3', store: 'memory', poll: 'pending', target: 0.85 },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'pending' },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'authorized' },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'guarded', target: GUARD_TARGET },
  // Issue 20, here and on Redis and PostgreSQL: the store's two polls with confirm on the phone and the
  // poll secret, beside its plain rows above (no target, as the plain polls on these stores have none).
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'pending', mode: 'opt-in' },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'authorized', mode: 'opt-in' },
  // Issue 21: against the same poll in a process without an SDK (two server processes, see benchHttp).
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'pending', telemetry: 'sdk', target: TELEMETRY_TARGET },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'pending', telemetry: 'sdk+context' },
  { framework: 'express', label: 'Express 5', store: 'sqlite', poll: 'pending', telemetry: 'traced' },
  { framework: 'express', label: 'Express 5', store: 'redis', poll: 'pending' },
  { framework: 'express', label: 'Express 5', store: 'redis', poll: 'authorized' },
  { framework: 'express', label: 'Express 5', store: 'redis', poll: 'guarded', target: GUARD_TARGET },
  { framework: 'express', label: 'Express 5', store: 'redis', poll: 'pending', mode: 'opt-in' },
  { framework: 'express', label: 'Express 5', store: 'redis', poll: 'authorized', mode: 'opt-in' },
  { framework: 'express', label: 'Express 5', store: 'postgres', poll: 'pending' },
  { framework: 'express', label: 'Express 5', store: 'postgres', poll: 'authorized' },
  { framework: 'express', label: 'Express 5', store: 'postgres', poll: 'guarded', target: GUARD_TARGET },
  { framework: 'express', label: 'Express 5', store: 'postgres', poll: 'pending', mode: 'opt-in' },
  { framework: 'express', label: 'Express 5', store: 'postgres', poll: 'authorized', mode: 'opt-in' },
]

/** The name of a guarded row's operation, before its store: `why.ts` keys its note on it. */
export const GUARDED_OPERATION = 'route behind requireAuthorization()'

/** What the name of an `opt-in` row says after the poll: what the poll pays for in that mode. */
export const OPT_IN_LABEL: Record<PollKind, string> = { pending: 'confirm on the phone + poll secret', authorized: 'poll secret' }

/** What the name of an OpenTelemetry row says after the poll (each ends with a comma, so that none prefixes another in `why.ts`). */
export const TELEMETRY_LABEL: Record<TelemetryRow, string> = {
  sdk: 'OpenTelemetry SDK registered',
  'sdk+context': 'OpenTelemetry SDK + AsyncLocalStorage context manager',
  traced: 'in an HTTP server span, OpenTelemetry SDK + context manager',
}

/** The baseline of an OpenTelemetry row: the same poll in a server process without an SDK. */
const TELEMETRY_BASELINE: Record<TelemetryRow, string> = {
  sdk: 'the same poll, no SDK',
  'sdk+context': 'the same poll, no SDK',
  traced: "the same poll in the no-op tracer's span, no SDK",
}

/** The SDK the measured process of an OpenTelemetry row registers (the baseline's registers none). */
const TELEMETRY_SDK: Record<TelemetryRow, HttpTelemetry> = { sdk: 'sdk', 'sdk+context': 'sdk+context', traced: 'sdk+context' }

/**
 * The operation's name in the tables, e.g. `authorized poll, MemoryStore`, in the opt-in mode
 * `pending poll, confirm on the phone + poll secret, RedisStore`, or for an OpenTelemetry row
 * `pending poll, OpenTelemetry SDK registered, SqliteStore`.
 */
export const operationName = (poll: RequestKind, store: StoreKind, mode: HttpMode = 'plain', telemetry?: TelemetryRow) =>
  poll === 'guarded'
    ? `${GUARDED_OPERATION}, ${STORE_LABEL[store]}`
    : `${poll} poll, ${mode === 'opt-in' ? `${OPT_IN_LABEL[poll]}, ` : ''}${telemetry === undefined ? '' : `${TELEMETRY_LABEL[telemetry]}, `}${STORE_LABEL[store]}`

/** Options of {@link benchHttp}. */
export interface BenchHttpOptions {
  /** Connections autocannon keeps open. Default 16. */
  connections?: number
  /** Measured slices per target. Default 8 (2 with `BENCH_QUICK=1`). */
  slices?: number
  /** Length of a slice, seconds. Default 1 (so 8 s per target). */
  sliceSeconds?: number
  /** Only the rows on these stores. Default all. */
  stores?: StoreKind[]
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
  /** Responses (any status) and the store round trips the server sent meanwhile. */
  responses: number
  roundTrips: number
  /** The spans the server's exporter was handed meanwhile (OpenTelemetry rows). */
  spans: number
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/**
 * Starts `bench/http-server.ts` for `framework` on `store` in `mode` (with `telemetry`, an OpenTelemetry
 * process) in a child process and waits until it listens.
 */
async function startServers(framework: HttpFramework, store: StoreKind, mode: HttpMode, telemetry?: HttpTelemetry): Promise<Server> {
  const { child, ready } = await startChild<ServerReady>('http-server.ts', [framework, store, mode, ...(telemetry === undefined ? [] : [telemetry])])
  return { child, ready }
}

/** A server process and what it said once it listened. */
interface Server {
  child: ChildProcess
  ready: ServerReady
}

/** The child's CPU time so far, in microseconds, its store's round trips so far (0 in process) and the spans it exported. */
async function serverCpu(child: ChildProcess): Promise<{ cpuUs: number; roundTrips: number; spans: number }> {
  const { usage, roundTrips, spans } = await ask<ServerCpu>(child, { type: 'cpu' }, 'cpu')
  return { cpuUs: usage.user + usage.system, roundTrips: roundTrips ?? 0, spans: spans ?? 0 }
}

/** One slice of load on `url` (with `headers` on every request); its figures are added to `side` when `side` is given. */
async function slice(url: string, headers: Record<string, string>, child: ChildProcess, connections: number, seconds: number, side?: Side): Promise<void> {
  const samples: number[] = []
  let failures = 0
  const before = await serverCpu(child)
  const clientBefore = process.cpuUsage()
  const began = performance.now()
  // Bounded in time and in requests (far above what one core serves in a slice).
  const instance = autocannon({ url, headers, connections, pipelining: 1, duration: seconds, maxOverallRequests: 200_000 * seconds, timeout: 10 })
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    if (statusCode >= 200 && statusCode < 300) samples.push(responseTimeMs * 1000)
    else failures++
  })
  const result = await instance
  const wallMs = performance.now() - began
  const client = process.cpuUsage(clientBefore)
  const after = await serverCpu(child)
  const cpuBefore = before.cpuUs
  const cpuAfter = after.cpuUs
  if (side) {
    side.responses += samples.length + failures
    side.roundTrips += after.roundTrips - before.roundTrips
    side.spans += after.spans - before.spans
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
 * Runs the HTTP benchmark (about 6½ minutes with the defaults: some 18 s per row) and returns one
 * row per target. Each server process is stopped whatever happens.
 */
export async function benchHttp(options: BenchHttpOptions = {}): Promise<HttpBenchRow[]> {
  const { connections = 16, slices = QUICK ? 2 : 8, sliceSeconds = 1, stores } = options
  const rows: HttpBenchRow[] = []
  const wanted = TARGETS.filter((t) => stores === undefined || stores.includes(t.store))
  // The OpenTelemetry rows share one group: a process without an SDK (their baseline) and one per SDK.
  const groupOf = (t: HttpTarget) => `${t.framework}|${t.store}|${t.mode ?? 'plain'}${t.telemetry === undefined ? '' : '|telemetry'}`
  const groups = [...new Set(wanted.map(groupOf))]
  for (const group of groups) {
    const inGroup = wanted.filter((t) => groupOf(t) === group)
    const { framework, store, mode = 'plain' } = inGroup[0] as HttpTarget
    const sdks = inGroup.flatMap((t) => (t.telemetry === undefined ? [] : [TELEMETRY_SDK[t.telemetry]]))
    const kinds: Array<HttpTelemetry | undefined> = sdks.length === 0 ? [undefined] : ['none', ...new Set(sdks)]
    const servers = new Map<HttpTelemetry | undefined, Server>()
    try {
      for (const kind of kinds) servers.set(kind, await startServers(framework, store, mode, kind))
      for (const target of inGroup) {
        const server = servers.get(target.telemetry === undefined ? undefined : TELEMETRY_SDK[target.telemetry]) as Server
        const baseline = target.telemetry === undefined ? undefined : (servers.get('none') as Server)
        rows.push(await measureTarget(target, server, baseline, { connections, slices, sliceSeconds }))
      }
    } finally {
      for (const { child } of servers.values()) await stopServers(child)
    }
  }
  return rows
}

/**
 * One row: `target`'s poll beside its bare route (on `server`), or for an OpenTelemetry row beside
 * the same request on `baseline`, the process without an SDK, in alternating slices after a warm-up
 * slice each.
 */
async function measureTarget(
  target: HttpTarget,
  { child, ready }: Server,
  baseline: Server | undefined,
  { connections, slices, sliceSeconds }: { connections: number; slices: number; sliceSeconds: number },
): Promise<HttpBenchRow> {
  const mode = target.mode ?? 'plain'
  const scene = target.poll === 'pending' ? ready.scene : ready.authorizedScene
  const guarded = target.poll === 'guarded'
  const secret = mode === 'opt-in' ? (target.poll === 'pending' ? ready.pollSecrets?.scene : ready.pollSecrets?.authorizedScene) : undefined
  if (mode === 'opt-in' && secret === undefined) throw new Error('bench/http.ts: the opt-in server sent no poll secrets')
  // Both sides get the same request: the guarded route and its unguarded twin the session's Bearer,
  // an opt-in poll and its bare route the scene's poll secret (as `@scanauth/client` sends it).
  const headers: Record<string, string> = guarded
    ? { authorization: `Bearer ${ready.sessionToken}` }
    : secret === undefined
      ? {}
      : { 'x-scanauth-poll-secret': secret }
  // An OpenTelemetry row polls the same app (or the traced one) of both processes, each its own pending scene.
  const telemetryUrl = (r: ServerReady) => {
    const port = target.telemetry === 'traced' ? r.ports.traced : r.ports.scanauth
    if (port === undefined) throw new Error('bench/http.ts: a telemetry server has no traced app')
    return `http://127.0.0.1:${port}/auth/status?scene=${r.scene}`
  }
  const targets: Array<[string, ChildProcess]> =
    target.telemetry !== undefined && baseline !== undefined
      ? [
          [telemetryUrl(ready), child],
          [telemetryUrl(baseline.ready), baseline.child],
        ]
      : guarded
        ? [
            [`http://127.0.0.1:${ready.ports.scanauth}/api/report`, child],
            [`http://127.0.0.1:${ready.ports.bare}/api/report`, child],
          ]
        : [
            [`http://127.0.0.1:${ready.ports.scanauth}/auth/status?scene=${scene}`, child],
            [`http://127.0.0.1:${ready.ports.bare}/bare/${target.poll === 'pending' ? 'status' : 'authorized'}?scene=${scene}`, child],
          ]
  const sides: Side[] = targets.map(() => ({
    samplesUs: [],
    wallMs: 0,
    serverCpuUs: 0,
    clientCpuUs: 0,
    failures: 0,
    sliceRps: [],
    sliceCpuPerResponse: [],
    responses: 0,
    roundTrips: 0,
    spans: 0,
  }))
  for (const [url, server] of targets) await slice(url, headers, server, connections, sliceSeconds)
  for (let i = 0; i < slices; i++) {
    // Alternate which side goes first, so a trend in background load does not favour one.
    const order = i % 2 === 0 ? [0, 1] : [1, 0]
    for (const k of order) {
      const [url, server] = targets[k] as [string, ChildProcess]
      await slice(url, headers, server, connections, sliceSeconds, sides[k])
    }
  }
  const [ours, bare] = sides as [Side, Side]
  const cpu = (side: Side) => (side.serverCpuUs / 1000 / side.wallMs) * 100
  const baselineName =
    target.telemetry !== undefined ? TELEMETRY_BASELINE[target.telemetry] : guarded ? `the same ${target.label} route, unguarded` : `bare ${target.label} route`
  const operation = operationName(target.poll, target.store, mode, target.telemetry)
  const plain = row(target.framework, operation, figures(ours), { name: baselineName, ...figures(bare) }, target.target)
  const counted = target.store === 'redis' || target.store === 'postgres'
  const perResponse = (side: Side) => side.roundTrips / Math.max(1, side.responses)
  return {
    ...plain,
    backend: target.store,
    poll: target.poll,
    mode,
    ratio: median(ours.sliceRps.map((rps, i) => rps / (bare.sliceRps[i] as number))),
    totalsRatio: plain.ratio as number,
    cpuRatio: median(ours.sliceCpuPerResponse.map((us, i) => (bare.sliceCpuPerResponse[i] as number) / us)),
    serverCpuPercent: cpu(ours),
    baselineServerCpuPercent: cpu(bare),
    clientCpuPercent: (ours.clientCpuUs / 1000 / ours.wallMs) * 100,
    failures: ours.failures + bare.failures,
    ...(counted ? { roundTripsPerOp: perResponse(ours), baselineRoundTripsPerOp: perResponse(bare) } : {}),
    ...(target.telemetry === undefined ? {} : { telemetry: target.telemetry, spansPerOp: ours.spans / Math.max(1, ours.responses) }),
  }
}

/** Asks the child to close its servers and exit; kills it if it is still there after 3 s. */
const stopServers = (child: ChildProcess) => stopChild(child)

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const stores = process.env.BENCH_HTTP_STORES?.split(',') as StoreKind[] | undefined
  const rows = await benchHttp(stores === undefined ? {} : { stores })
  console.log(markdownTable(rows))
  for (const r of rows) {
    const trips =
      (r.roundTripsPerOp === undefined ? '' : `, store round trips per request ${r.roundTripsPerOp.toFixed(2)} (bare ${r.baselineRoundTripsPerOp?.toFixed(2)})`) +
      (r.spansPerOp === undefined ? '' : `, spans exported per request ${r.spansPerOp.toFixed(2)}`)
    console.log(
      `${r.store} ${r.operation}: ratio of totals ${r.totalsRatio.toFixed(2)}, CPU-per-request ratio ${r.cpuRatio.toFixed(2)}, ` +
        `server CPU ${r.serverCpuPercent.toFixed(0)}% (bare ${r.baselineServerCpuPercent.toFixed(0)}%), ` +
        `autocannon CPU ${r.clientCpuPercent.toFixed(0)}%, failures ${r.failures}${trips}`,
    )
  }
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version})`)
}
