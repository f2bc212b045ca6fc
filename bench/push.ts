/**
 * Push benchmark (issue #13): what waiting for a scan costs and how fast it ends, when devices wait
 * on the long poll or the event stream (docs/behaviour.md B-wait-1…4) instead of polling.
 *
 *   npx tsx --conditions=@scanauth/source bench/push.ts          # this section alone, printed
 *   BENCH_QUICK=1 npx tsx --conditions=@scanauth/source bench/push.ts   # a short check that it works
 *
 * Three parts, each in its own file:
 * - `bench/push-latency.ts`: scan → waiting device, p50/p99, in one instance (MemoryStore, SQLite,
 *   Redis) and across two processes (SQLite file, Redis); and pay code paid → device on its event
 *   stream, through the WeChat Pay emulator and Express (`bench/push-pay.ts`, issue 18);
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

/** Options of {@link benchPush}; the defaults are the full run, `quick` a short check. */
export interface BenchPushOptions {
  quick?: boolean
}

/**
 * Runs the push benchmark: about 2.5 minutes in full (500 latency samples per row, 10,000 streams with
 * 15 s of idle CPU, a real login run scanned after 20 s, 200 client and 200 raw logins), some 30 s when quick.
 */
export async function benchPush(options: BenchPushOptions = {}): Promise<PushResults> {
  const quick = options.quick ?? QUICK
  const latency = await benchLatency(quick ? { samples: 40, warmup: 5, paySamples: 20 } : {})
  const connections = await benchConnections(quick ? { connections: 1000, idleSeconds: 3 } : {})
  const requests = await benchRequests({ runAfterSeconds: quick ? 3 : 20 })
  const client = await benchClient(quick ? { samples: 20, warmup: 3 } : {})
  return { latency, connections, requests, client }
}

/** The section's tables, as printed by `bench/run.ts`. */
export function pushTables(r: PushResults): string {
  return [
    latencyTable([...r.latency, ...r.client.latency]),
    '',
    connectionsTable(r.connections),
    '',
    requestsTable(r.requests),
    '',
    clientRequestsTable(r.client),
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  console.log(pushTables(await benchPush()))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}${QUICK ? ', BENCH_QUICK' : ''})`)
}
