/**
 * Push benchmark (issue #13): what waiting for a scan costs and how fast it ends, when devices wait
 * on the long poll or the event stream (docs/behaviour.md B-wait-1…4) instead of polling.
 *
 *   npx tsx --conditions=@scanauth/source bench/push.ts          # this section alone, printed
 *   BENCH_QUICK=1 npx tsx --conditions=@scanauth/source bench/push.ts   # a short check that it works
 *   BENCH_PUSH_PARTS=phone,pay npx tsx --conditions=@scanauth/source bench/push.ts   # only these parts (also under npm run bench)
 *
 * Parts (`BENCH_PUSH_PARTS`, comma-separated; default all): `scan`, `pay`, `phone` (the latency rows),
 * `connections`, `requests`, `client`. With it set the section is incomplete, so `npm run bench` only
 * prints it and leaves docs/benchmarks.md alone.
 *
 * Three parts, each in its own file:
 * - `bench/push-latency.ts`: scan → waiting device, p50/p99, in one instance (MemoryStore, SQLite,
 *   Redis, PostgreSQL) and across two processes (SQLite file, Redis, PostgreSQL); and paid → device on
 *   its event stream, through the WeChat Pay emulator and Express (`bench/push-pay.ts`): a pay code
 *   (Native, issue 18) on SQLite and Redis, and on the phone that scanned (JSAPI, issue 27) on every store;
 * - `bench/push-connections.ts`: 10,000 waiting event streams held by one Express process (memory
 *   per stream, CPU while idle), the server and the devices in two child processes;
 * - `bench/push-requests.ts`: requests per login against polling every second, counted;
 * - `bench/push-client.ts` (issue 19): a login with `@scanauth/client` against the raw event stream,
 *   in one run on SQLite behind Express, scanned by the WeChat emulator: requests per login, and
 *   scan → device p50/p99 (its rows join the latency table).
 *
 * @module
 */
import { pathToFileURL } from 'node:url'
import { QUICK } from './lib'
import { benchClient, clientRequestsTable, type ClientResult } from './push-client'
import { benchConnections, connectionsTable, type ConnectionsResult } from './push-connections'
import { latencyTable, type LatencyRow } from './latency-rows'
import { benchLatency } from './push-latency'
import { benchRequests, requestsTable, type RequestsResult } from './push-requests'

/** Everything the push section measured. */
export interface PushResults {
  latency: LatencyRow[]
  connections: ConnectionsResult
  requests: RequestsResult
  /** Issue 19: a login with `@scanauth/client` against the raw event stream (requests, scan → device). */
  client: ClientResult
}

/** The parts of the push section, for `BENCH_PUSH_PARTS`. */
export const PUSH_PARTS = ['scan', 'pay', 'phone', 'connections', 'requests', 'client'] as const
/** A part of the push section. */
export type PushPart = (typeof PUSH_PARTS)[number]

/** `BENCH_PUSH_PARTS`, checked: the parts to run, or undefined for all of them. */
export const ONLY_PUSH_PARTS: PushPart[] | undefined = (() => {
  const names = process.env.BENCH_PUSH_PARTS?.split(',').map((s) => s.trim()).filter(Boolean)
  if (names === undefined || names.length === 0) return undefined
  for (const name of names) {
    if (!(PUSH_PARTS as readonly string[]).includes(name)) throw new Error(`BENCH_PUSH_PARTS: unknown part '${name}' (parts: ${PUSH_PARTS.join(', ')})`)
  }
  return names as PushPart[]
})()

/** What a run of some of the parts measured: the latency rows it made, and the other parts it ran. */
export type PushRun = Pick<PushResults, 'latency'> & Partial<Omit<PushResults, 'latency'>>

/** Whether the parts the report cannot do without ran (the latency rows may be fewer; `bench/run.ts` writes no report when parts were chosen). */
export const isCompletePush = (run: PushRun): run is PushResults => run.connections !== undefined && run.requests !== undefined && run.client !== undefined

/** Options of {@link benchPush}; the defaults are the full run, `quick` a short check. */
export interface BenchPushOptions {
  quick?: boolean
  /** The parts to run. Default: `BENCH_PUSH_PARTS`, else all. */
  parts?: readonly PushPart[]
}

/**
 * Runs the push benchmark: about 3.5 minutes in full (500 latency samples per scan row, 200 per paid row,
 * 10,000 streams with 15 s of idle CPU, a real login run scanned after 20 s, 200 client and 200 raw logins),
 * some 40 s when quick.
 */
export async function benchPush(options: BenchPushOptions = {}): Promise<PushRun> {
  const quick = options.quick ?? QUICK
  const parts = options.parts ?? ONLY_PUSH_PARTS ?? PUSH_PARTS
  const latencyParts = parts.filter((p): p is 'scan' | 'pay' | 'phone' => p === 'scan' || p === 'pay' || p === 'phone')
  const run: PushRun = { latency: [] }
  if (latencyParts.length > 0) run.latency = await benchLatency({ ...(quick ? { samples: 40, warmup: 5, paySamples: 20 } : {}), parts: latencyParts })
  if (parts.includes('connections')) run.connections = await benchConnections(quick ? { connections: 1000, idleSeconds: 3 } : {})
  if (parts.includes('requests')) run.requests = await benchRequests({ runAfterSeconds: quick ? 3 : 20 })
  if (parts.includes('client')) run.client = await benchClient(quick ? { samples: 20, warmup: 3 } : {})
  return run
}

/** The section's tables, as printed by `bench/run.ts` (those of the parts that ran). */
export function pushTables(r: PushRun): string {
  const latency = [...r.latency, ...(r.client?.latency ?? [])]
  return [
    latency.length > 0 ? latencyTable(latency) : undefined,
    r.connections === undefined ? undefined : connectionsTable(r.connections),
    r.requests === undefined ? undefined : requestsTable(r.requests),
    r.client === undefined ? undefined : clientRequestsTable(r.client),
  ]
    .filter((table) => table !== undefined)
    .join('\n\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  console.log(pushTables(await benchPush()))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}${QUICK ? ', BENCH_QUICK' : ''}${ONLY_PUSH_PARTS ? `, BENCH_PUSH_PARTS=${ONLY_PUSH_PARTS.join(',')}` : ''})`)
}
