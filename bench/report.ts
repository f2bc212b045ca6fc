/**
 * The text of `docs/benchmarks.md`: what each benchmark measures, the tables of one run, and notes
 * derived from the figures (targets met or missed, the slowest ratio and what limits it, where the
 * CPU went in the scaling runs). `bench/run.ts` fills it in; nothing here measures.
 *
 * @module
 */
import type { BenchRow } from './lib'
import { markdownTable } from './lib'
import type { HttpBenchRow } from './http'
import { POOL_SIZE, type PostgresBenchRow } from './postgres'
import { DEFAULT_POOL_SIZE } from './postgres-pool'
import type { PushResults } from './push'
import { pushGoals, pushSection } from './report-push'
import type { ReminderBenchRow } from './reminders'
import { remindersSection } from './report-reminders'
import { scalingTable, type ScalingRow } from './scaling'
import { paymentTargetNote, why } from './why'

/** The machine and software a run measured on. */
export interface Environment {
  cpuModel: string
  cores: number
  memoryGiB: number
  node: string
  redis: string
  /** The PostgreSQL server: its version and the settings that decide what a commit waits for. */
  postgres: string
  sqlite: string
  versions: Record<string, string>
  date: string
  /** Load average (1 min) when the run began and when it ended. */
  loadBefore: number
  loadAfter: number
  /** Whole run, seconds. */
  seconds: number
  /** Seconds per section. */
  sectionSeconds: Record<string, number>
}

/** Everything one run produced. */
export interface Results {
  memory: BenchRow[]
  sqlite: BenchRow[]
  redis: Array<BenchRow & { roundTripsPerOp?: number; baselineRoundTripsPerOp?: number }>
  postgres: PostgresBenchRow[]
  /** The reminder pass over 100,000 users (issue 28; absent when it did not run). */
  reminders?: ReminderBenchRow[]
  redisMemory?: { memoryUsageBytes: number; receiptMemoryUsageBytes: number; usedMemoryBytes: number }
  http: HttpBenchRow[]
  scaling: ScalingRow[]
  /** The push section (absent when it did not run). */
  push?: PushResults
}

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The HTTP rows with the columns that matter over HTTP (also what `npm run bench` prints for the section). */
export function httpTable(rows: HttpBenchRow[]): string {
  const lines = [
    '| framework | request | req/s | p50 µs | p99 µs | baseline | baseline req/s | baseline p50 µs | baseline p99 µs | ratio | target | ratio of totals | CPU-per-request ratio | server CPU (ours / bare) |',
    '|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const r of rows) {
    const b = r.baseline
    const verdict = r.target === undefined || r.ratio === undefined ? '' : `≥ ${r.target} ${r.ratio >= r.target ? '✓' : '✗'}`
    lines.push(
      `| ${r.store} | ${r.operation} | ${n(r.opsPerSec)} | ${n(r.p50Us)} | ${n(r.p99Us)} | ${b?.name ?? ''} | ${b ? n(b.opsPerSec) : ''} | ` +
        `${b ? n(b.p50Us) : ''} | ${b ? n(b.p99Us) : ''} | ${n(r.ratio ?? 0, 2)} | ${verdict} | ${n(r.totalsRatio, 2)} | ${n(r.cpuRatio, 2)} | ` +
        `${n(r.serverCpuPercent)}% / ${n(r.baselineServerCpuPercent)}% |`,
    )
  }
  return lines.join('\n')
}

/** Round trips per call of a network store, from the counter on its client (rows without one are left out). */
function roundTrips(rows: Array<BenchRow & { roundTripsPerOp?: number; baselineRoundTripsPerOp?: number }>): string {
  const lines = ['| operation | round trips per call | baseline | baseline round trips |', '|---|---:|---|---:|']
  for (const r of rows) {
    if (r.roundTripsPerOp === undefined) continue
    lines.push(`| ${r.operation} | ${n(r.roundTripsPerOp, 2)} | ${r.baseline?.name ?? ''} | ${r.baselineRoundTripsPerOp === undefined ? '' : n(r.baselineRoundTripsPerOp, 2)} |`)
  }
  return lines.join('\n')
}

/** What limited each process count, in words. */
function saturation(rows: ScalingRow[], cores: number): string[] {
  const out: string[] = []
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
  for (const count of [...new Set(rows.map((r) => r.processes))]) {
    const at = rows.filter((r) => r.processes === count)
    const redisMax = Math.max(...at.map((r) => r.redisCpuPercent))
    const busy = mean(at.map((r) => r.machineBusyPercent))
    const perProcess = mean(at.map((r) => r.appCpuPercent)) / count
    const redisNote = `redis-server at most ${n(redisMax)}% of its core`
    const limit =
      redisMax >= 90
        ? `**Redis** is saturated (its command thread at ${n(redisMax)}% of a core)`
        : busy >= 85
          ? `the **machine's CPU** is saturated (${n(busy)}% of its ${cores} cores busy on average; ${redisNote}, so Redis is not the limit)`
          : perProcess >= 80
            ? `the **app process** is saturated (${n(perProcess)}% of a core: Node runs JavaScript on one thread), with the machine ${n(busy)}% busy and ${redisNote}`
            : `neither Redis (${redisNote}) nor the CPU (machine ${n(busy)}% busy, ${n(perProcess)}% of a core per app process) is saturated: the callers per process, waiting on round trips, are the limit`
    out.push(`- **${count} app process${count === 1 ? '' : 'es'}**: ${limit}.`)
  }
  return out
}

/** The whole of `docs/benchmarks.md`. */
export function renderReport(env: Environment, results: Results): string {
  const compared = [...results.memory, ...results.sqlite, ...results.redis, ...results.postgres, ...results.http].filter((r) => r.ratio !== undefined)
  const targeted = compared.filter((r) => r.target !== undefined)
  const missed = targeted.filter((r) => (r.ratio as number) < (r.target as number))
  const slowest = [...compared].sort((a, b) => (a.ratio as number) - (b.ratio as number))[0]
  const slowestStore = [...compared].filter((r) => r.store !== 'memory').sort((a, b) => (a.ratio as number) - (b.ratio as number))[0]
  const one = results.scaling.filter((r) => r.processes === 1)
  const best = (phase: string) => [...results.scaling.filter((r) => r.phase === phase)].sort((a, b) => b.opsPerSec - a.opsPerSec)[0]
  const section = (name: string) => `${n(env.sectionSeconds[name] ?? 0)} s`
  const goals = pushGoals(results.push)
  const missedGoals = goals.filter((g) => !g.met)

  const lines: string[] = []
  lines.push(
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench` (bench/run.ts); edit bench/report.ts, not this file. -->',
    '',
    'Every figure below comes from one run of `npm run bench` on the machine described here. Each',
    'operation is measured **beside a baseline in the same run** — the least work the same operation',
    'needs on the same backend — and the **ratio** (ops/s ÷ baseline ops/s) is the figure to read: it',
    'carries over to other machines far better than the absolute numbers. Benchmarks are not tests:',
    'nothing asserts on time. `bench/results/*.md` keep the store authors\' dated profiling notes (what',
    'was changed and why); the figures of record are the ones on this page.',
    '',
    '## Machine and run',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${env.cpuModel}, ${env.cores} cores |`,
    `| memory | ${n(env.memoryGiB, 1)} GiB |`,
    `| Node | ${env.node} |`,
    `| Redis | ${env.redis} (loopback, 127.0.0.1) |`,
    `| PostgreSQL | ${env.postgres}, loopback (127.0.0.1) |`,
    `| SQLite | ${env.sqlite} |`,
    `| packages | ${Object.entries(env.versions).map(([k, v]) => `${k} ${v}`).join(', ')} |`,
    `| date | ${env.date} |`,
    '| command | `npm run bench` (`tsx --conditions=@scanauth/source bench/run.ts`) |',
    `| duration | ${n(env.seconds)} s (memory ${section('memory')}, SQLite ${section('sqlite')}, Redis ${section('redis')}, PostgreSQL ${section('postgres')}, reminders ${section('reminders')}, HTTP ${section('http')}, scaling ${section('scaling')}, push ${section('push')}) |`,
    `| load average (1 min) | ${n(env.loadBefore, 2)} before, ${n(env.loadAfter, 2)} after |`,
    '',
    'The machine is a shared VM: other work may run beside the benchmark (the load average above says',
    'how much). Each operation and its baseline alternate in short slices so that such noise lands on',
    'both sides of a ratio; absolute figures move from run to run more than ratios do.',
    '',
    '## Targets',
    '',
    'Ratios of throughput (≥), and the goals of the push section (issues #13, 19 and 27): latency, memory and requests.',
    '',
    '| backend | operation | baseline | figure | target | |',
    '|---|---|---|---:|---:|---|',
  )
  for (const r of targeted) {
    lines.push(`| ${r.store} | ${r.operation} | ${r.baseline?.name ?? ''} | ${n(r.ratio as number, 2)} | ≥ ${r.target} | ${(r.ratio as number) >= (r.target as number) ? 'met' : '**missed**'} |`)
  }
  for (const g of goals) lines.push(`| ${g.backend} | ${g.operation} | ${g.baseline} | ${g.figure} | ${g.target} | ${g.met ? 'met' : '**missed**'} |`)
  lines.push('')
  const all = targeted.length + goals.length
  const misses = [...missed.map((r) => `${r.store} ${r.operation} (${n(r.ratio as number, 2)} < ${r.target})`), ...missedGoals.map((g) => `${g.backend} ${g.operation} (${g.figure}, target ${g.target})`)]
  lines.push(misses.length === 0 ? `All ${all} targets are met.` : `${misses.length} of ${all} targets missed: ${misses.join('; ')}.`)
  const paymentNote = paymentTargetNote([...results.sqlite, ...results.redis, ...results.postgres])
  if (paymentNote !== null) lines.push('', paymentNote)
  if (slowest) {
    lines.push('', `**Slowest ratio: ${slowest.store} ${slowest.operation}, ${n(slowest.ratio as number, 2)}** against “${slowest.baseline?.name}”. Why: ${why(slowest)}`)
  }
  if (slowestStore && slowestStore !== slowest) {
    lines.push('', `Slowest ratio on a persistent store or over HTTP: ${slowestStore.store} ${slowestStore.operation}, ${n(slowestStore.ratio as number, 2)} against “${slowestStore.baseline?.name}”. Why: ${why(slowestStore)}`)
  }

  lines.push(
    '',
    '## In process: each store beside its raw baseline',
    '',
    'One call in flight for memory and SQLite (every call awaited, in alternating slices of the',
    'operation and its baseline: `measurePair` in `bench/lib.ts`); ops/s is calls divided by the time',
    'spent inside them. Redis and PostgreSQL keep 32 calls in flight on both sides (a network store is',
    'used concurrently), and ops/s is calls per wall-clock second. p50/p99 are per-call latencies in µs.',
    'Setup on every store: 200 users, each scanned once (free trial) and granted a large points',
    'authorization; the clock then moves 8 days on and one poll per user activates the points; 1000',
    'pending scenes. Scans are first scans of fresh pending scenes by those users; consumes spend 1 point.',
    '',
    '**Payment notifications** (issue 18, `bench/payments.ts`; SQLite, Redis, PostgreSQL): the handler of',
    '`createWechatPayNotificationHandler` called in process, each call with a real `TRANSACTION.SUCCESS`',
    'notification paying an open order of its own, so that each does the whole work once: the `Wechatpay-*`',
    'headers, the signature over the raw bytes, the decryption, the resource\'s checks, `auth.applyPayment`',
    '(the order read, one grant commit keyed by the order that also writes its scene, one order write) and',
    'the 204. The orders are seeded first, untimed: users scan once, their trials end, and each buys through',
    'its scene (`auth.purchase`, the payment service being testkit\'s in-memory `TestPaymentService`). An',
    'RSA-2048 platform key pair generated at start signs each notification and the APIv3 key seals its',
    'resource, with `@scanauth/wechat-pay`\'s `signMessage`, `responseSignatureMessage` and `encryptAesGcm`.',
    'Two rows per store, the same handler on orders of its own in each. **Issue 18\'s row**: against',
    'node:crypto alone on the same bytes, one `RSA-SHA256` verify of the signature and one `aes-256-gcm`',
    'decryption of the resource, the signed message, signature and ciphertext taken out beforehand; target',
    '≥ 0.5, as the issue asks. That baseline writes nothing, while a granted payment must be stored durably',
    'before it is answered, so the target compares unlike work and cannot be met (see Targets above). **The',
    'fair row** (`bench/payments-baselines.ts`): against the same cryptography followed by the raw driver\'s',
    'least durable work for a granted payment, on the same store and its tables, on orders of the baseline\'s',
    'own seeded in bulk: read the order by its key, insert the authorization, its ledger entry and the',
    'idempotency record keyed by the order, and mark the order paid, in one transaction — on SQLite one',
    '`BEGIN IMMEDIATE` transaction on the baselines\' connection (WAL, the store\'s `synchronous`); on Redis',
    'one `HGETALL` of the order and one `EVALSHA` of a script that checks the order\'s version and the key',
    'and writes the four (two round trips); on PostgreSQL `BEGIN`, `SELECT … FOR UPDATE` of the order,',
    'three `INSERT`s, the `UPDATE`, `COMMIT` on a checked-out client of the section\'s pool (seven',
    'statements, one commit); target ≥ 0.5. Calls in flight as in the section\'s other rows, on both sides',
    '(the bare cryptography alone is synchronous, so it runs one at a time whatever the lanes); the',
    'round-trip tables count both baselines.',
    '',
    '### MemoryStore (`bench/memory.ts`)',
    '',
    'Baseline: the same operation written by hand on plain `Map`s, doing only what [behaviour.md](behaviour.md)',
    'demands (the CSPRNG scene_str and session token, the expiry checks, the status decision, the',
    'answer object) and none of what the library adds for safety and generality (input validation,',
    'record copies, version checks, the activation step, change sets, ISO timestamps). The ratios say',
    'what that fixed per-call work costs when the storage costs nothing; they are low by construction.',
    '',
    markdownTable(results.memory),
    '',
    '### SqliteStore (`bench/sqlite.ts`)',
    '',
    'The store on a file in a fresh temporary folder (WAL, `synchronous = FULL`, the defaults); the',
    'baselines run on a second better-sqlite3 connection to the same file with the same pragmas,',
    'reading rows in raw (array) mode, the cheapest way better-sqlite3 returns a row. The store',
    'engineer\'s profiling notes (pages per commit, `synchronous = NORMAL`) are in',
    '`bench/results/sqlite.md`.',
    '',
    markdownTable(results.sqlite),
    '',
    '### RedisStore (`bench/redis.ts`)',
    '',
    'Against the Redis at `REDIS_URL` under a key prefix of its own, deleted afterwards. Baselines are',
    'raw ioredis commands on the same client doing the same round trips as the operation (a `GET` for',
    'each `GET`, the `EVALSHA` of a one-line script for each script call).',
    '',
    markdownTable(results.redis),
    '',
    roundTrips(results.redis),
  )
  if (results.redisMemory) {
    const m = results.redisMemory
    lines.push(
      '',
      `Memory per pending scene: ${m.memoryUsageBytes} bytes (\`MEMORY USAGE\` of the scene key); its commit receipt ` +
        `${m.receiptMemoryUsageBytes} bytes for 120 s; ${m.usedMemoryBytes} bytes of \`used_memory\` growth per scene created.`,
    )
  }

  lines.push(
    '',
    '### PostgresStore (`bench/postgres.ts`)',
    '',
    'Against the PostgreSQL at `DATABASE_URL` in a schema of its own (created, `store.migrate()`,',
    `dropped afterwards), on one \`pg.Pool\` of ${POOL_SIZE} connections${POOL_SIZE === DEFAULT_POOL_SIZE ? ' (the size docs/postgres.md suggests)' : ''} that`,
    'the operation and its baseline share, so both queue for a connection alike. Baselines are raw',
    'named prepared statements on that pool, rows read as arrays: a point select of the scene by its',
    'unique key for the pending poll; the same two round trips done raw for the authorized poll; for',
    'the scans and the consume, a read-and-update transaction on a checked-out client (`BEGIN`,',
    '`SELECT … FOR UPDATE` of one row by primary key, `UPDATE` of it, `COMMIT`: four round trips, one',
    'commit); one autocommit `INSERT` for createScene. Round trips are statements counted on the',
    'pool\'s client class (every `query` call, the baselines\' `BEGIN` and `COMMIT` included, and the',
    'store\'s `pg_notify` statement after a scene commit, which the caller does not wait for). The queue',
    'rows run one call in flight, as on SQLite. Why the notification is not inside the commit, with',
    'the figures before and after: `bench/results/postgres.md`.',
    '',
    markdownTable(results.postgres),
    '',
    roundTrips(results.postgres),
  )
  if (results.reminders) lines.push(...remindersSection(results.reminders))
  lines.push(
    '',
    '## Over HTTP: the middlewares beside a bare route (`bench/http.ts`)',
    '',
    'The polls as devices make them, `GET /auth/status?scene=…` of a pending scene and of an authorized',
    'one, through `scanAuthRouter` (Express 5) and `scanAuthMiddleware` (Koa 3), each beside a bare route',
    'of the same framework that reads the `scene` parameter and answers the same JSON (`{"status":"pending"}`,',
    'or the authorized scene\'s answer built once at start) with the framework\'s own JSON response',
    '(`res.json`, `ctx.body`). On a `MemoryStore`: the pending poll through both frameworks and the',
    'authorized poll through Express. On the SQLite store (a file in a temporary folder, the defaults),',
    'the Redis store (`REDIS_URL`, a key prefix of its own) and the PostgreSQL store (`DATABASE_URL`, a',
    `schema of its own, a pool of ${DEFAULT_POOL_SIZE}): both polls through Express, as users run them; the bare route`,
    'reads no store, so these ratios show what the store\'s reads cost a request.',
    'The authorized scene was scanned once (a new user, the free trial active). Load: autocannon on 127.0.0.1, 16',
    'connections, no pipelining; each target gets a one-second warm-up, then eight one-second slices',
    'alternating with its bare route. req/s is 2xx responses per wall-clock second over the slices;',
    'p50/p99 are per-response latencies seen by autocannon. The **ratio** is the median over the eight',
    'rounds of (our slice\'s req/s ÷ the adjacent bare slice\'s req/s): on a shared machine a burst of',
    'other work in one slice moves the plain ratio of totals (also shown) but hardly the median. The',
    '**CPU-per-request ratio** (bare ÷ ours, server CPU time per response, median over rounds) is the',
    'same comparison in work done; it is the least disturbed by other load.',
    '',
    'The servers run in a **child process** (one per framework, store and mode) and autocannon in the parent. In one',
    'process the load generator and the server would share one event loop and one core, and',
    'autocannon\'s own cost per request would be added to both sides, pulling every ratio towards 1;',
    'in separate processes the server has a core of its own and the figures are its capacity (the',
    'server CPU column shows how close to a full core it got). One framework per process, as in an',
    'application: both in one process would make core\'s handler see two kinds of request objects.',
    '',
    '**The guard** (issue 19): the app\'s own route, `GET /api/report`, answering a constant JSON body with',
    '`res.json`, behind `requireAuthorization()` of `@scanauth/express` on the Express app that mounts',
    '`scanAuthRouter` at `/auth` (as an app has it), against the same handler at the same path on the bare',
    'app, unguarded. Both sides are sent the same request, `Authorization: Bearer` with the session token of',
    'the authorized scene\'s user (a time authorization: the free trial), so that both pay for the header;',
    'the guarded side parses it, calls `auth.verifySession` (the session and its user read in one load, one',
    'round trip where the store allows it), checks the current authorization, puts the session on',
    '`req.scanauth` and calls the route. It runs on every request of an app that adopts it, so it is',
    'measured on the SQLite, Redis and PostgreSQL stores, with a target of ≥ 0.7. On Redis and PostgreSQL',
    'the server process counts the store\'s round trips, as the store sections do (commands on the ioredis',
    'client, statements on the pool\'s client class), over the measured slices of each side, and divides',
    'them by the responses: the table below the main one.',
    '',
    '**The opt-in modes** (issue 20): on the same three stores, through Express, both polls again on an instance',
    'with `confirm: \'link\'` (its `confirmation`: a page address and a minimal in-process web OAuth) and',
    '`requirePollSecret: true`, in a server process of its own with the same two apps. Both scenes are made as',
    'a device makes them, by `POST /auth/create_scene`, so the masked client address and the poll secret\'s',
    'digest are stored (on Redis the scene then takes the extended packed form); the authorized one is',
    'confirmed on the phone (the scan, `auth.openConfirmation` with the OAuth code, `auth.decideConfirmation`):',
    'a new user with the free trial, as above. Every poll is sent with `X-Scanauth-Poll-Secret`, the bare',
    'route\'s too. No target: each row is to be read beside the plain poll of the same store.',
    '',
    '**OpenTelemetry** (issue 21): the pending poll on the SQLite store through Express in a server process that',
    'registered an SDK before it created its app (`bench/http-telemetry.ts`: a `BasicTracerProvider` with a',
    '`BatchSpanProcessor` over an exporter that counts and drops the spans, a `MeterProvider` with a periodic',
    'reader, set globally), target ≥ 0.9; the same with NodeSDK\'s `AsyncLocalStorageContextManager`; and with that',
    'SDK the poll inside an HTTP server span, as `@opentelemetry/instrumentation-http` makes one. Unlike the other rows,',
    'the baseline is the same poll in a second server process of the same code without an SDK (inside the no-op',
    'tracer\'s span for the traced row); the two processes take the alternating slices.',
    '',
    httpTable(results.http),
    '',
    roundTrips(results.http),
    '',
  )
  for (const r of results.http) {
    const target = r.target === undefined ? '' : `, target ≥ ${r.target}`
    lines.push(`- **${r.store}, ${r.operation}** (${n(r.ratio ?? 0, 2)}${target}): ${why(r)} autocannon used ${n(r.clientCpuPercent)}% of a core; failures ${r.failures}.`)
  }

  lines.push(
    '',
    '## Scaling on one Redis (`bench/scaling.ts`)',
    '',
    'App processes forked from the benchmark (`child_process.fork`, each a `createScanAuth` on a',
    '`RedisStore`, one shared key prefix deleted afterwards), every process with 16 concurrent callers.',
    'Phases run in all processes at once: `createScene` (the scenes become the pool of the next',
    'phases), pending polls of those scenes, scans of them (one returning user per caller, so callers',
    'do not race for a user), and polls of the scanned (authorized) scenes. Each process count is',
    'measured twice, in the order 1, 2, 4, 4, 2, 1, and averaged. CPU: redis-server from `INFO cpu`',
    'deltas in % of one core (Redis runs commands on one thread: 100% is its ceiling); the app',
    'processes from `process.cpuUsage()`; the machine from `/proc/stat` in % of all cores (other work',
    'included). Redis commands/s counts the commands scripts issue as well.',
    '',
    scalingTable(results.scaling),
    '',
    'What limits throughput:',
    '',
    ...saturation(results.scaling, env.cores),
  )
  const scan1 = one.find((r) => r.phase === 'scan')
  const bestScan = best('scan')
  const bestPoll = best('pending poll')
  const redisPeak = Math.max(0, ...results.scaling.map((r) => r.redisCpuPercent))
  if (scan1 && bestScan && bestPoll) {
    const plural = (k: number) => `${k} process${k === 1 ? '' : 'es'}`
    lines.push(
      '',
      `Best figures: ${n(bestScan.opsPerSec)} scans/s (${plural(bestScan.processes)}), ${n(bestPoll.opsPerSec)} pending polls/s ` +
        `(${plural(bestPoll.processes)}). With one app process, a scan already costs the app ${n(scan1.appCpuPercent)}% of a core and ` +
        `redis-server ${n(scan1.redisCpuPercent)}%, on a machine of ${env.cores} cores: there is little CPU left for a second ` +
        'process, so throughput hardly grows and extra processes add queueing (a higher p99) instead. ' +
        (redisPeak < 90
          ? `Redis was not the limit (at most ${n(redisPeak)}% of its core in any phase): with more cores, throughput grows with app ` +
            'processes until redis-server reaches 100% of its one core — one store is one Redis shard (see `docs/redis.md`, *Redis Cluster*).'
          : `Redis reached ${n(redisPeak)}% of its core: one store is one Redis shard, and more app processes cannot take it further ` +
            '(see `docs/redis.md`, *Redis Cluster*).'),
    )
  }

  if (results.push) lines.push(...pushSection(results.push))

  lines.push(
    '',
    '## Reproducing',
    '',
    '```sh',
    'npm run bench                                              # everything, rewrites this file',
    'BENCH_ONLY=http,scaling npm run bench                      # some sections, printed only',
    'BENCH_QUICK=1 BENCH_ONLY=push,http npm run bench           # short runs of push and http: a check, printed only',
    'BENCH_ONLY=push BENCH_PUSH_PARTS=phone,pay npm run bench   # some parts of push (scan, pay, phone, connections, requests, client), printed only',
    'BENCH_ONLY=reminders BENCH_REMINDER_STORES=sqlite npm run bench   # the reminder pass on some stores (memory, sqlite, redis, postgres), printed only',
    'npx tsx --conditions=@scanauth/source bench/sqlite.ts      # one section on its own (memory, sqlite, redis, postgres, reminders, http, scaling, push)',
    '```',
    '',
    'Redis must listen at `REDIS_URL` (default `redis://127.0.0.1:6379`); the benchmark only adds keys',
    'under prefixes of its own and deletes them. PostgreSQL must listen at `DATABASE_URL` (default',
    '`postgres://postgres@127.0.0.1:5432/test`), with a role that may create schemas; the benchmark',
    'works in schemas named `scanauth_bench_*` and drops them. Everything listens on 127.0.0.1 and every',
    'child process is stopped at the end.',
    '',
  )
  return lines.join('\n')
}
