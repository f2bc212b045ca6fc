/**
 * The notes of `docs/benchmarks.md` that say why an operation is as far from its baseline as it is,
 * from profiling: one paragraph per operation, completed with the gap the figures show.
 *
 * @module
 */
import type { HttpBenchRow } from './http'
import type { BenchRow } from './lib'
import { NOTIFY_BASELINE, NOTIFY_OPERATION } from './payments'
import { FAIR_BASELINE_PREFIX } from './payments-baselines'

/** What the profile of a payment notification says on every store (the same handler and core on each). */
const PAYMENT_PROFILE =
  ' Profiled (`node --cpu-prof`; `bench/payments.ts` run alone takes the handler apart on a MemoryStore, where ' +
  'storing costs nothing): even there a notification costs 4–7 times the bare cryptography. The parse (headers, ' +
  'strict base64 checks, the signed message copied into one buffer, the JSON twice) takes about twice the ' +
  'cryptography, and `applyPayment` about as much again (input validation, the order read, the user loaded, the ' +
  'grant planned and committed, an `Authorization` view with ISO dates that only its id is taken from), so 0.5 is ' +
  'out of reach on any store; on these three the store\'s work comes on top and is most of the time.'

/**
 * Why issue 18's target (≥ 0.5 of the bare cryptography) cannot be met by a handler that keeps what
 * it grants, whatever the store: said once in the report, above the store sections.
 */
const PAYMENT_TARGET =
  'a granted payment must be stored before the notification is answered (or a crash after the 204 loses ' +
  'what was paid for, and WeChat Pay does not send it again): the authorization, its ledger entry, the ' +
  'idempotency record keyed by the order (so that a repeated notification grants nothing) and the order ' +
  'marked paid, durably. The bare cryptography writes nothing, and one durable write costs many times the ' +
  'cryptography (an fsync on SQLite, a WAL flush on PostgreSQL, round trips on Redis), so the baseline plus ' +
  'the least a hand-written integration with the raw driver must write (the second row of each store) already ' +
  'runs far below half its rate:'

/**
 * Why a handled notification is as far from the fair baseline as it is: what the store and core do
 * beyond the raw driver's one write transaction. Keyed like {@link WHY}.
 */
const FAIR_PAYMENT: Array<[string, string]> = [
  [
    'sqlite',
    'the baseline commits once (one fsync with `synchronous = FULL`), the handler twice: the grant\'s commit ' +
      '(the user\'s version, the authorization, its ledger entry, the idempotency record, the scene and its ' +
      'change-log row, so that the waiting device hears of it) and then the order\'s own write, an autocommit ' +
      'statement with its fsync (the order is its own aggregate, written apart from the grant by `saveOrder`\'s one statement). ' +
      'On top come the handler\'s parsing and core\'s planning, as on the MemoryStore.',
  ],
  [
    'redis',
    'four round trips one after another (the order, the grant\'s load and commit scripts, the order\'s save ' +
      'script) against the baseline\'s two, and more work inside the scripts: the commit checks versions, ' +
      'writes the user, the scene (and publishes it), the queue and the commit receipt, and the save script ' +
      'keeps the three open-order indexes in step. With 32 in flight the benchmark\'s one process is the ' +
      'bottleneck, so core\'s planning and ioredis\'s encoding of the longer script calls show in full. Redis ' +
      'here runs without an append-only file (`appendonly no`), on both sides alike.',
  ],
  [
    'postgres',
    'four statements one after another (the order, the grant\'s load, the commit function, the order\'s ' +
      'update) against the baseline\'s seven, but two commits against one, each waiting for its WAL flush, and ' +
      'the commit function also writes the user and the scene (then the scene\'s notification, batched after ' +
      'the commit); the PostgreSQL backends share the machine\'s 2 cores with the benchmark\'s process.',
  ],
]

/** What every guarded row shares: the work of the guard beyond the store's read, and what the baseline is. */
const GUARD_COMMON =
  ' Both sides answer the same JSON with `res.json` and are sent the same `Authorization` header; the guarded ' +
  'app also has the `/auth` mount in front of the route, as an app that adopts the guard has, and core ' +
  'validates the token and builds the session view (with the authorization\'s ISO `end_at`) on every request.'

/** What every opt-in pending poll shares (issue 20): the modes add no step to it. */
const OPT_IN_PENDING =
  ' A pending poll never checks the secret (only the `authorized` answer, which carries the session token, is ' +
  'withheld without it: B-secret-2), and `confirm: \'link\'` only lets the poll decision answer `scanned` and ' +
  '`denied` too; core\'s handler looks for `X-Scanauth-Poll-Secret` on every poll, and here finds it. Both sides ' +
  'are sent that header. What the modes add is a longer scene record, not a step: compare the plain pending ' +
  'poll of the same store.'

/** What every opt-in authorized poll shares (issue 20): the secret is checked without a read. */
const OPT_IN_AUTHORIZED =
  ' The secret costs no read: `getStatus` checks it against the digest on the scene it has just read ' +
  '(`readStatus` hands the digest on with the answer), one SHA-256 of the 43-character secret and a ' +
  'constant-time comparison. Only `waitForStatus` (the long poll and the event stream) reads the scene once ' +
  'more before an `authorized` answer, as its waiters keep no record; the plain poll measured here does not. ' +
  'Both sides are sent the same `X-Scanauth-Poll-Secret` header; compare the plain authorized poll of the same store.'

/** What every OpenTelemetry row shares (issue 21): what its baseline is. */
const TELEMETRY_BASELINE_NOTE =
  ' The baseline is not the bare route: it is the same app, store and poll in a second server process of the ' +
  'same code that registered no SDK (`@opentelemetry/api` is installed there too, so core loads it and holds ' +
  'the API\'s proxy tracer: both processes run the same telemetry code up to the SDK); the two processes take ' +
  'the alternating slices, each side\'s CPU is its own process\'s, and each polls its own pending scene in its ' +
  'own SQLite file. On this shared 2-core machine the load generator and other work take turns with the server, ' +
  'so a few hundredths either way are noise.'

/** Why a context manager costs what it does (issue 21): every await in the process, not scanauth\'s. */
const CONTEXT_MANAGER_NOTE =
  ' The `AsyncLocalStorageContextManager` (which NodeSDK always registers) makes the active context follow ' +
  'async calls. On Node 20 `AsyncLocalStorage` is built on async_hooks: from its first `run` (here the setup\'s ' +
  '`scanauth.create_scene` and `scanauth.scan` spans, made active so that store spans nest; in an instrumented ' +
  'app the first request) the process tracks every promise, so each `async` call, each `await` and each ' +
  'promise of Express, core and better-sqlite3\'s callers runs an init hook that gives it an async id and ' +
  'copies the current store onto it. That is a cost of the whole process, on every await, not of scanauth: the ' +
  'baseline process registered no context manager, and had it one it would pay the same on its bare routes ' +
  'too. (Node 24 builds `AsyncLocalStorage` on `AsyncContextFrame` instead, without the promise hook.)'

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
    'sqlite|payment notification',
    'the baseline is the cryptography alone. A handled notification also reads the headers and the JSON ' +
      '(envelope and resource) and checks the transaction, and `auth.applyPayment` reads the order, loads the ' +
      'user with the order\'s idempotency key and scene, commits the grant (authorization, ledger entry, ' +
      'idempotency record, scene) and then writes the order: two commits, each waiting for its fsync ' +
      '(`synchronous = FULL`), which is most of the gap (about three quarters of the time in the profile); the ' +
      'cryptography is about a twentieth.' +
      PAYMENT_PROFILE,
  ],
  [
    'redis|payment notification',
    'four round trips one after another (see the round-trip table): the order (`HGETALL`), the grant\'s load ' +
      'and commit scripts, and the order\'s save script; the baseline makes none. With 32 in flight the ' +
      'benchmark\'s one process does the work that matters: per notification the cryptography, the parsing, ' +
      'core\'s planning and four commands encoded, written to the socket and parsed by ioredis (in the profile ' +
      'the store and ioredis take about three times the cryptography).' +
      PAYMENT_PROFILE,
  ],
  [
    'postgres|payment notification',
    'four statements one after another (see the round-trip table: the order, the grant\'s load and commit, and ' +
      'the order\'s update; the scene\'s notification is batched after the commit) and two commits, each ' +
      'waiting for its WAL flush, on a machine whose 2 cores the PostgreSQL backends share with the benchmark; the ' +
      'baseline is the cryptography alone, in process.' +
      PAYMENT_PROFILE,
  ],
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
    'express|route behind requireAuthorization(), SqliteStore',
    'the guard parses the Bearer header and calls `auth.verifySession`: one load of the session by its token ' +
      'and of its user with the live authorizations (indexed selects, run synchronously on the server\'s one ' +
      'thread by better-sqlite3, no round trip), the records built from the rows, the liveness checks and the ' +
      'activation step that finds the current authorization; then the session goes on `req.scanauth` and the ' +
      'route runs. The unguarded route reads nothing, so every microsecond of that is added to the request.' +
      GUARD_COMMON,
  ],
  [
    'express|pending poll, confirm on the phone + poll secret, SqliteStore',
    'the same one indexed `SELECT` of the scene as the plain pending poll: the statement always reads the ' +
      '`requested_from`, `poll_secret_hash` and confirmation columns, and here the first two hold text (the ' +
      'masked address `127.0.0.*` and the secret\'s 43-character digest) that better-sqlite3 copies into strings, ' +
      'synchronously on the server\'s thread; the bare route reads nothing.' +
      OPT_IN_PENDING,
  ],
  [
    'express|authorized poll, poll secret, SqliteStore',
    'the same three indexed `SELECT`s as the plain authorized poll (the scene; the user with its active ' +
      'authorization and the head of its queue; the latest session), synchronous on the server\'s thread; the ' +
      'scene, confirmed on the phone, has all six opt-in columns filled (the masked address, the secret\'s ' +
      'digest, and the confirmation kept on it: the scanner\'s openid, its time, the ticket and CSRF digests).' +
      OPT_IN_AUTHORIZED,
  ],
  [
    'express|pending poll, OpenTelemetry SDK registered, SqliteStore',
    'a pending poll outside a trace makes no span by design (core\'s `Telemetry.polled`: a `pending` or ' +
      '`scanned` answer outside a recorded trace gets none, as a device asks every second or two and a root span ' +
      'would cost more than the poll; `scanauth.status` spans are made for polls inside a request\'s server span, ' +
      'or for the other answers), and reads no clock; its one check is whether the active context holds a ' +
      'recorded span (`trace.getActiveSpan()`, through the no-op context manager: the root context, no span), ' +
      'the same in both processes. No metric is recorded on a poll either. So registering the tracer and meter ' +
      'providers (a `BatchSpanProcessor` over an exporter that counts and drops the spans, a ' +
      '`PeriodicExportingMetricReader` every 60 s) adds nothing to the poll: the spans exported per request are ' +
      '0 (the SDK process checked, before it was ready, that the setup\'s scenes and scan were exported as ' +
      'spans), and whatever gap the figures show is the difference between two processes on a shared machine.' +
      TELEMETRY_BASELINE_NOTE,
  ],
  [
    'express|pending poll, OpenTelemetry SDK + AsyncLocalStorage context manager, SqliteStore',
    'the same SDK plus the context manager, and still no span per poll (0 exported per request: the request ' +
      'runs in no context, so the check finds the root context, now through `AsyncLocalStorage.getStore()`).' +
      CONTEXT_MANAGER_NOTE +
      ' The gap to the previous row is that hook on the poll\'s promises; scanauth\'s own share of it is the one ' +
      '`getStore()`.' +
      TELEMETRY_BASELINE_NOTE,
  ],
  [
    'express|pending poll, in an HTTP server span, OpenTelemetry SDK + context manager, SqliteStore',
    'as an app instrumented with `@opentelemetry/instrumentation-http` runs it: Express middleware starts an ' +
      'active SERVER span for each request (`tracer.startActiveSpan`, three attributes, ended when the response ' +
      'finishes), so the poll runs inside a recorded trace, reads the clock and makes its `scanauth.status` span ' +
      '(started at the poll\'s clock reading, its status attribute, ended): 2 spans exported per request, both ' +
      'through the `BatchSpanProcessor` (queued, exported in batches of 512). The measured side pays for both ' +
      'spans (ids drawn, times read, attributes, the batch queue), the `AsyncLocalStorage.run` of every request ' +
      'and the context manager\'s promise hook; its baseline runs the same middleware with the API\'s no-op ' +
      'tracer (a non-recording span, `context.with` through the no-op context manager, the same `finish` ' +
      'listener) and makes no span. Most of the gap is the HTTP span and the context manager, which an ' +
      'instrumented app pays on every route; scanauth\'s own span is one of the two.' +
      CONTEXT_MANAGER_NOTE +
      TELEMETRY_BASELINE_NOTE,
  ],
  [
    'express|route behind requireAuthorization(), RedisStore',
    'one round trip per request (see the round-trip table): `auth.verifySession` reads the session and its ' +
      'user in one call of the store\'s load script (session token → session → its user id → the user, its ' +
      'active authorizations and the head of its queue), where it used to take a `GET` of the session and then ' +
      'a load of the user, one after the other. ioredis encodes the call and parses the reply on the server\'s ' +
      'thread, and each connection\'s requests wait for Redis, which shares the machine\'s 2 cores with the ' +
      'server and the load generator; the unguarded route reads nothing.' +
      GUARD_COMMON,
  ],
  [
    'express|pending poll, confirm on the phone + poll secret, RedisStore',
    'one `GET` per poll, as for the plain pending poll (see the round-trip table), but the scene is stored in ' +
      'the extended packed form (`codec-scenes.ts`) that a scene with a masked address or a secret digest ' +
      'takes: some 60 bytes longer, and `decodeScene` splits two more fields and cuts the texts by their ' +
      'lengths (`decodeExtension`) where the compact form\'s last field is the device id. ioredis parses the ' +
      'reply on the server\'s thread; the bare route reads nothing.' +
      OPT_IN_PENDING,
  ],
  [
    'express|authorized poll, poll secret, RedisStore',
    'two round trips per poll, one after the other, as for the plain authorized poll (see the round-trip ' +
      'table): the scene (a `GET`; confirmed on the phone, it is in the extended packed form with all five ' +
      'texts, the masked address, the secret\'s digest, the scanner\'s openid and the ticket and CSRF digests, ' +
      'some 180 bytes more than the compact form), then the store\'s load script for the user, its ' +
      'authorizations and the latest session.' +
      OPT_IN_AUTHORIZED,
  ],
  [
    'express|route behind requireAuthorization(), PostgresStore',
    'one statement per request (see the round-trip table): `auth.verifySession` reads the session and its ' +
      'user (found through the session\'s `user_id` in a subquery, with its live authorizations as JSON) in one ' +
      'statement on the pool, where it used to send two one after the other. node-postgres writes it and ' +
      'parses the row on the server\'s thread, and the PostgreSQL backend answering it shares the machine\'s 2 ' +
      'cores with the server and the load generator; the unguarded route reads nothing.' +
      GUARD_COMMON,
  ],
  [
    'express|pending poll, confirm on the phone + poll secret, PostgresStore',
    'one statement per poll on the same index, as for the plain pending poll (see the round-trip table); ' +
      'the row\'s `requested_from` and `poll_secret_hash` are text here instead of NULL, so the JSON array the ' +
      'PostgreSQL backend builds and node-postgres parses on the server\'s thread is some 50 bytes longer. The ' +
      'backend shares the machine\'s 2 cores with the server and the load generator; the bare route reads nothing.' +
      OPT_IN_PENDING,
  ],
  [
    'express|authorized poll, poll secret, PostgresStore',
    'two statements per poll, one after the other, as for the plain authorized poll (see the round-trip ' +
      'table): the scene, with its six opt-in columns filled (the masked address, the secret\'s digest and the ' +
      'confirmation kept on the authorized scene), then the user with its live authorizations and the latest ' +
      'session. Each connection\'s requests wait for both, so throughput at 16 connections follows their ' +
      'latency more than the server\'s CPU.' +
      OPT_IN_AUTHORIZED,
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
  const fair = r.operation === NOTIFY_OPERATION && r.baseline?.name.startsWith(FAIR_BASELINE_PREFIX) === true
  const text =
    (fair ? FAIR_PAYMENT.find(([store]) => store === r.store)?.[1] : undefined) ??
    WHY.find(([prefix]) => key.startsWith(prefix))?.[1] ??
    'see the benchmark file for what the baseline covers.'
  // One call in flight (memory, SQLite): the time per call is 1 / ops/s, so the gap is a duration.
  if ((r.store === 'memory' || r.store === 'sqlite') && r.baseline && r.opsPerSec > 0 && r.baseline.opsPerSec > 0) {
    return `${text} Here that is ${n(1e6 / r.opsPerSec - 1e6 / r.baseline.opsPerSec, 1)} µs per call more than the baseline.`
  }
  if ('serverCpuPercent' in r) {
    const h = r as HttpBenchRow
    const perRequest = (cpu: number, rps: number) => (cpu / 100) * (1e6 / rps)
    const against = h.telemetry === undefined ? 'the bare route' : 'the same poll without an SDK'
    const spans = h.spansPerOp === undefined ? '' : ` Spans exported per request: ${n(h.spansPerOp, 2)}.`
    return `${text} Server CPU per request: ${n(perRequest(h.serverCpuPercent, h.opsPerSec), 1)} µs, against ${n(perRequest(h.baselineServerCpuPercent, h.baseline?.opsPerSec ?? 1), 1)} µs for ${against}.${spans}`
  }
  return text
}

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/**
 * The report's paragraph on issue 18's target: why a handler that stores what it grants cannot
 * reach 0.5 of the bare cryptography, with each store's ceiling from the run (the fair baseline's
 * rate over the bare cryptography's: what even the raw driver reaches), or null without those rows.
 */
export function paymentTargetNote(rows: BenchRow[]): string | null {
  const ceilings: string[] = []
  for (const store of [...new Set(rows.map((r) => r.store))]) {
    const at = rows.filter((r) => r.store === store && r.operation === NOTIFY_OPERATION)
    const bare = at.find((r) => r.baseline?.name === NOTIFY_BASELINE)?.baseline
    const fair = at.find((r) => r.baseline?.name.startsWith(FAIR_BASELINE_PREFIX) === true)
    if (bare === undefined || fair?.baseline === undefined || bare.opsPerSec <= 0) continue
    ceilings.push(
      `${store} ${n(fair.baseline.opsPerSec)}/s against ${n(bare.opsPerSec)}/s (${n(fair.baseline.opsPerSec / bare.opsPerSec, 2)}; ` +
        `the handler ${n(fair.ratio ?? 0, 2)} of it)`,
    )
  }
  if (ceilings.length === 0) return null
  return (
    `**Issue 18's target cannot be met with durable writes.** Its rows compare a handled payment notification with ` +
    `“${NOTIFY_BASELINE}” and target ≥ 0.5; ${PAYMENT_TARGET} ${ceilings.join('; ')}. No handler on these stores can ` +
    'beat the raw driver, so those rows stay missed whatever the library does; the fair row beside each (same handler, ' +
    'orders of its own, target ≥ 0.5) is the one that says how far the library is from a hand-written integration.'
  )
}
