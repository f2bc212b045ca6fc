/**
 * The notes of `docs/benchmarks.md` that say why an operation is as far from its baseline as it is,
 * from profiling: one paragraph per operation, completed with the gap the figures show.
 *
 * @module
 */
import type { HttpBenchRow } from './http'
import type { BenchRow } from './lib'

/**
 * Why an operation is as far from its baseline as it is, from profiling; keyed by
 * `store|operation` (the first key that prefixes the row's operation wins).
 */
const WHY: Array<[string, string]> = [
  [
    'memory|consume',
    'the baseline is one `Map.get` and a decrement (well under a microsecond). A consume through the ' +
      'library validates its input (zod), loads the session and then its user (two awaited loads, each ' +
      'copying records), runs the activation step over the user\'s live authorizations, builds a change set, ' +
      'commits it with a version check (copying again) and answers a full `Authorization` view with ISO ' +
      'timestamps. That fixed work buys correctness across processes (versions, retries) that a ' +
      'single-process `Map` does not need; against any real store it is small (compare the SQLite and ' +
      'Redis rows, where the same library code runs beside the raw driver).',
  ],
  [
    'memory|authorized poll',
    'the baseline reads four `Map`s; the library also loads the user aggregate (copied), runs the ' +
      'activation step to find the current authorization, and formats the answer (ISO `end_at`). The ' +
      'difference is a few microseconds of fixed work per poll.',
  ],
  [
    'memory|scan',
    'both sides draw a 256-bit session token from the CSPRNG; the library adds input validation, the ' +
      'load of scene and user, the planning (free trial, activation step, session), the version-checked ' +
      'commit and the `onScan` hook call.',
  ],
  [
    'memory|pending poll',
    'a `Map.get` against a validated, async `getStatus` (pattern check of the scene string, one awaited ' +
      'load with a record copy, the poll decision).',
  ],
  ['memory|createScene', 'the random scene_str and the QR call are on both sides; the library adds validation, the scene record and its insert-if-absent commit.'],
  [
    'sqlite|scan',
    'with `synchronous = FULL` both sides pay an fsync per commit, so the ratio is mostly how many pages ' +
      'each commit writes: a scan must write a user, a scene and a session with their index entries ' +
      '(about 7 WAL pages) against one row for the one-update baseline; the second scan row, against a raw ' +
      'transaction doing exactly the scan\'s writes, shows what is left (see `bench/results/sqlite.md`).',
  ],
  ['sqlite|consume', 'the store reads session and user and checks the user\'s version inside the transaction; the baseline reads one row and updates it. The fsync per commit dominates both.'],
  ['sqlite|authorized poll', 'three indexed selects on both sides; the store also builds records from rows and runs the activation step.'],
  ['sqlite|pending poll', 'one indexed select on both sides; the store adds the service\'s validation and record building.'],
  ['sqlite|createScene', 'one autocommit INSERT on both sides (with its fsync).'],
  [
    'redis|pending poll',
    'one `GET` on both sides, and the benchmark\'s client process, not Redis, is the bottleneck (it ' +
      'spends more CPU per call than Redis does), so all of core\'s per-call work shows in the ratio: ' +
      'validation, the scene-string check, decoding the packed scene, the poll decision, the answer ' +
      'object, and the promise hops between them. The row `store.load({ sceneStr }) alone` is the ' +
      'store\'s own share; the rest is `getStatus` in core (and, under tsx, esbuild\'s `keepNames` ' +
      'helper on core\'s closures). `bench/results/redis.md` has the profiling.',
  ],
  [
    'redis|scan',
    'both sides make the same two round trips; the cost is outside them. On the server the commit script ' +
      'makes 5–9 `redis.call`s (version checks, `HINCRBY` ids, writes with TTLs, the commit receipt) against ' +
      'one for the baseline script; on the client, core validates, draws the session token from the CSPRNG, ' +
      'plans the scan (free trial, activation step, session) and encodes a 20–30 argument script call. With ' +
      '32 calls in flight the client process\'s CPU is the bottleneck, so its work shows in full ' +
      '(profiling in `bench/results/redis.md`).',
  ],
  [
    'redis|',
    'each side pays the same round trips to Redis (counted, see the round-trip table); the difference is ' +
      'the work inside the commit script (version checks, packed records, TTLs, the commit receipt) and ' +
      'the service\'s planning between the load and the commit.',
  ],
  [
    'postgres|pending poll',
    'one statement on both sides, and the same plan (an index scan of `scanauth_scenes_scene_str_key`, ' +
      'three buffers; the store wraps the row in `json_build_array`, which the server builds and the client ' +
      'parses). The row `store.load({ sceneStr }) alone` is the store\'s own share; the rest is `getStatus` ' +
      'in core (validation, the scene-string check, the poll decision, the answer), paid in the benchmark\'s ' +
      'one Node process, which with 32 calls in flight shares the 2 cores with the PostgreSQL backends.',
  ],
  [
    'postgres|store.load',
    'one statement on both sides on the same index; the store returns the row as one JSON array (built on ' +
      'the server, parsed on the client) where the baseline reads plain columns.',
  ],
  [
    'postgres|authorized poll',
    'two statements one after the other on both sides (the scene; then the user with its active ' +
      'authorizations and the head of its queue, and the scene\'s latest session); the store also builds ' +
      'its records from JSON and runs the activation step, and core builds the answer.',
  ],
  [
    'postgres|scan',
    'the scan waits for two statements (a load, then one `scanauth_commit` call) against the baseline\'s four, and ' +
      'each side commits once, waiting for its WAL flush; the commit function writes the scene, the user and a ' +
      'session where the baseline updates one row, and core plans in the same Node process, which shares the ' +
      'two cores with PostgreSQL. The notification goes after the commit, batched and committed asynchronously ' +
      '(docs/postgres.md, "Waiting for a scan"): inside the commit it held PostgreSQL\'s server-wide notify lock ' +
      'through the WAL flush, and scans ran at 0.2–0.3 (`bench/results/postgres.md`).',
  ],
  [
    'postgres|createScene',
    'one commit on both sides; the store also checks the scene string is free inside its function and sends ' +
      'the notification of the new scene after the commit, in a statement of its own shared with other writes.',
  ],
  [
    'postgres|consume',
    'three statements (the session, then its user, then the commit) against the baseline\'s four; the ' +
      'commit writes no scene, so it sends no notification and its WAL flush is shared with other commits, ' +
      'as the baseline\'s is. The rest is the commit function\'s work (the user\'s version check, the ' +
      'authorization update, a ledger entry) and core\'s planning.',
  ],
  [
    'postgres|queue',
    'the store reads the active authorizations and the head of the queue from the front of ' +
      '`scanauth_authorizations_by_user`, whatever the queue\'s length.',
  ],
  [
    'postgres|',
    'each side sends the statements counted in the round-trip table; the difference is the work inside ' +
      'them (the JSON the store builds and parses, the commit function) and the service\'s planning.',
  ],
  [
    'express|pending poll, MemoryStore',
    'the middleware answers with the JSON text and its length written directly (`res.end`), where the bare ' +
      'route uses `res.json`, whose ETag (a SHA-1 of every body) and freshness check are wasted on a ' +
      '`no-store` answer; that saving outweighs core\'s own work (routing, `getStatus`, the `no-store` headers) ' +
      'and the second router the mount adds. Before this fix the middleware used `res.json` too and measured ' +
      '0.80 in an A/B run of both versions (0.97 after).',
  ],
  [
    'express|authorized poll, MemoryStore',
    'the authorized poll reads the scene, then the user with its live authorizations and the scene\'s ' +
      'latest session (two awaited loads, records copied), runs the activation step, and builds the answer ' +
      'with an ISO `end_at`; the bare route answers the same JSON from a constant object. As for the pending ' +
      'poll, the middleware writes its JSON and length directly where the bare route pays `res.json`\'s ETag ' +
      '(a SHA-1 of the body, here some 150 bytes) and freshness check; the two roughly cancel out.',
  ],
  [
    'express|pending poll, SqliteStore',
    'one indexed `SELECT` of the scene per poll; better-sqlite3 runs it synchronously on the server\'s one ' +
      'thread, so its time (and building the record) adds directly to every request, where the bare route ' +
      'reads nothing.',
  ],
  [
    'express|authorized poll, SqliteStore',
    'three indexed `SELECT`s per poll (the scene; the user with its active authorization and the head of ' +
      'its queue; the latest session), synchronous on the server\'s thread, plus the activation step and the ' +
      'answer; the bare route reads nothing.',
  ],
  [
    'express|pending poll, RedisStore',
    'one `GET` round trip per poll. The server\'s thread is free while it waits, but ioredis encodes the ' +
      'command and parses the reply on it, and with 16 connections each request also waits its turn for ' +
      'Redis on a machine the load generator and redis-server share.',
  ],
  [
    'express|authorized poll, RedisStore',
    'two round trips per poll, one after the other: the scene (a `GET`), then, knowing its user, one call ' +
      'of the store\'s load script for the user, its authorizations and the latest session. Each connection\'s ' +
      'requests wait for both, so throughput at 16 connections follows their latency more than the server\'s ' +
      'CPU (compare the server CPU columns). A bare route that reads nothing cannot be matched by a poll ' +
      'that must read a store over the network; the pending poll (one round trip) shows the difference one ' +
      'round trip makes.',
  ],
  [
    'express|pending poll, PostgresStore',
    'one statement per poll (an index lookup of the scene) on a pool of 10 connections. The server\'s thread ' +
      'is free while it waits, but node-postgres writes the statement and parses the row on it, and the ' +
      'PostgreSQL backend answering it shares the machine\'s 2 cores with the server and the load generator.',
  ],
  [
    'express|authorized poll, PostgresStore',
    'two statements per poll, one after the other: the scene, then the user with its live authorizations ' +
      'and the latest session. Each connection\'s requests wait for both, so throughput at 16 connections ' +
      'follows their latency more than the server\'s CPU; a bare route that reads nothing cannot be matched ' +
      'by a poll that must read a database over the network.',
  ],
  [
    'koa|',
    'what limits it is core\'s own work per poll — the handler\'s routing and request reading, `getStatus` ' +
      '(validation, one awaited load that copies the record, the poll decision, the answer) and, under tsx, ' +
      'esbuild\'s `keepNames` helper on core\'s closures — about 4–6 µs of server CPU against a bare route that ' +
      'costs Koa some 40–50 µs here. The middleware itself sets the headers directly and hands Koa the JSON ' +
      'text: Koa\'s `ctx.set(object)` and its object-body path (content sniffing, stream/Blob/Response checks, ' +
      'JSON at send time) cost about a tenth of the request and were the gap before this fix.',
  ],
]

/** Why `r` is as far from its baseline as it is, with the gap in µs or CPU per request where it can be told. */
export function why(r: BenchRow): string {
  const key = `${r.store}|${r.operation}`
  const text = WHY.find(([prefix]) => key.startsWith(prefix))?.[1] ?? 'see the benchmark file for what the baseline covers.'
  // One call in flight (memory, SQLite): the time per call is 1 / ops/s, so the gap is a duration.
  if ((r.store === 'memory' || r.store === 'sqlite') && r.baseline && r.opsPerSec > 0 && r.baseline.opsPerSec > 0) {
    return `${text} Here that is ${n(1e6 / r.opsPerSec - 1e6 / r.baseline.opsPerSec, 1)} µs per call more than the baseline.`
  }
  if ('serverCpuPercent' in r) {
    const h = r as HttpBenchRow
    const perRequest = (cpu: number, rps: number) => (cpu / 100) * (1e6 / rps)
    return `${text} Server CPU per request: ${n(perRequest(h.serverCpuPercent, h.opsPerSec), 1)} µs, against ${n(perRequest(h.baselineServerCpuPercent, h.baseline?.opsPerSec ?? 1), 1)} µs for the bare route.`
  }
  return text
}

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
