/**
 * The push section of `docs/benchmarks.md` (issues #13, 18, 19 and 27): what `bench/push.ts` measures, its tables,
 * what the figures say, and its goals for the targets table. `bench/report.ts` puts it in place.
 *
 * @module
 */
import type { PushResults } from './push'
import { CLIENT_SETTING, LATENCY_TARGET_MS, latencyTable, RAW_STREAM_SETTING } from './latency-rows'
import { clientRequestsTable } from './push-client'
import { connectionsTable } from './push-connections'
import { perLogin, requestsTable } from './push-requests'
import { PAY_SETTING, PHONE_SETTING } from './push-pay'
import { STORE_LABEL } from './stores'

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** A goal of the push section, for the targets table. */
export interface Goal {
  backend: string
  operation: string
  baseline: string
  figure: string
  target: string
  met: boolean
}

/** The push section's goals (issues #13, 19 and 27): latency p99, memory per waiting stream, requests per login. */
export function pushGoals(push: PushResults | undefined): Goal[] {
  if (push === undefined) return []
  const goals: Goal[] = []
  for (const r of push.latency) {
    if (r.targetP99Ms === undefined) continue
    goals.push({
      backend: STORE_LABEL[r.store],
      operation: r.setting === PHONE_SETTING ? 'phone paid (JSAPI) → waiting device, p99' : `scan → waiting device, p99 (${r.setting})`,
      baseline: '',
      figure: `${n(r.p99Ms, 1)} ms`,
      target: `≤ ${r.targetP99Ms} ms`,
      met: r.p99Ms <= r.targetP99Ms,
    })
  }
  const c = push.connections
  for (const [what, bytes] of [['heap', c.scanauth.heapBytesPerConnection], ['RSS', c.scanauth.rssBytesPerConnection]] as const) {
    goals.push({
      backend: 'Express, MemoryStore',
      operation: `memory per waiting event stream (${what}, ${n(c.connections)} streams)`,
      baseline: '',
      figure: `${n(bytes / 1024, 1)} KB`,
      target: `≤ ${n(c.targetBytesPerConnection / 1024)} KB`,
      met: bytes <= c.targetBytesPerConnection,
    })
  }
  const r = push.requests
  const row = r.rows.find((x) => !x.expired && x.afterSeconds === r.goalAfterSeconds)
  if (row) {
    for (const [name, key] of [['event stream', 'sse'], ['long poll', 'longPoll']] as const) {
      const fewer = perLogin(row.waiting.poll) / perLogin(row.waiting[key])
      goals.push({
        backend: 'Express, MemoryStore',
        operation: `requests per login, scanned after ${row.afterSeconds} s: ${name}`,
        baseline: `polling every ${r.pollSeconds} s`,
        figure: `${n(fewer, 1)}× fewer`,
        target: `≥ ${r.targetFewer}× fewer`,
        met: fewer >= r.targetFewer,
      })
    }
  }
  const logins = push.client.requests.client
  goals.push({
    backend: 'Express, SqliteStore',
    operation: 'requests per login with `@scanauth/client` (event stream), most over the logins',
    baseline: `raw event stream: ${n(push.client.requests.raw.mean, 1)}`,
    figure: `${logins.max}`,
    target: `≤ ${push.client.maxRequests}`,
    met: logins.max <= push.client.maxRequests,
  })
  return goals
}

/** The push section of the report: what each part measures, its table, and what the figures say. */
export function pushSection(push: PushResults): string[] {
  const { latency, connections: c, requests } = push
  const row = (store: string, setting: string) => latency.find((r) => r.store === store && r.setting === setting)
  const sqliteApart = row('sqlite', 'two processes')
  const paid = latency.filter((r) => r.setting === PAY_SETTING)
  const phone = latency.filter((r) => r.setting === PHONE_SETTING)
  const viaRaw = push.client.latency.find((r) => r.setting === RAW_STREAM_SETTING)
  const viaClient = push.client.latency.find((r) => r.setting === CLIENT_SETTING)
  const ours = c.scanauth
  const lines = [
    '',
    '## Push: waiting for the scan (`bench/push.ts`)',
    '',
    'A device that waits on the event stream (`GET /auth/events`) or the long poll',
    '(`GET /auth/status?…&wait=N`) is answered when the scan commits, by a change notification from',
    'the store (docs/behaviour.md B-wait-1…4). How soon that is, what holding many waiting devices costs',
    'one process, and how many requests a login takes, against a device polling every second.',
    '',
    '### Scan → waiting device (`bench/push-latency.ts`)',
    '',
    'Each sample creates a pending scene, starts `auth.waitForStatus` on it (the wait behind the long',
    'poll and the stream), waits a few milliseconds plus a random part (so that scans do not fall at a',
    'fixed phase of SQLite\'s change timer), then has the scanning side call `handleScan`. The time runs',
    'from just before the scanning process calls `Store.commit` (a stamp taken by a wrapper of its store)',
    'to the moment the waiter\'s promise resolves with `authorized`: the commit itself (on SQLite its',
    'fsync), the notification, the waiter\'s reads of the scene, the user and the session, and the',
    'answer; writing it to the socket is the same as for any response and is left out. **One instance**:',
    'waiter and scanner share one `createScanAuth` and one store. **Two processes**: the scanner is a',
    'child process with its own store on the same SQLite file, Redis key prefix or PostgreSQL schema',
    '(`bench/push-scanner.ts`), and sends its stamp over IPC; both stamps are `process.hrtime.bigint()`,',
    'which reads the machine\'s one monotonic clock in every process. A waiter on another scene keeps',
    'the store\'s subscription open throughout, as other waiting devices would. Samples are sequential,',
    'one scan at a time.',
    '',
    '**Pay code paid** (issue 18, `bench/push-pay.ts`): the device of a `need_purchase` scene with an open',
    'order waits on its event stream (B-order-7), and the payer pays. The app is an Express 5 app on',
    '127.0.0.1 with `scanAuthRouter` at `/auth` and `wechatPayNotifyMiddleware` at `/wechatpay/notify`,',
    'selling through `createWechatPayProvider`, on SQLite (a file in a temporary folder) or Redis. The',
    'WeChat Pay emulator (`startWechatPayEmulator`) and the device run in a child process',
    '(`bench/push-pay-world.ts`), which takes both stamps: just before `pay()`, and when the chunk carrying',
    'the `authorized` event reaches the device\'s socket. In between, the emulator seals and signs the',
    'notification and POSTs it; the middleware reads the raw body; the handler verifies it, decrypts it and',
    'calls `auth.applyPayment` (the grant\'s commit writes the scene, then the order is written); the store',
    'tells the stream\'s wait, which reads the status and writes the event. Before each sample, untimed: the',
    'sample\'s user, whose free trial ended days ago, scans a new scene and buys through it (the order opened',
    'at the emulator over HTTP), and the device opens the stream (first event `need_purchase`) and waits',
    'a few milliseconds. Samples are sequential, after warm-ups; the issue sets no goal for them.',
    '',
    '**Phone paid** (issue 27, `bench/push-pay.ts` with the JSAPI channel): the same app, child and stamps,',
    'on every store (MemoryStore; SQLite; Redis under a key prefix of its own; PostgreSQL in a schema of',
    'its own), the service created with `payments: { provider, plans, phone: { url, oauth } }` (`url` the',
    'app\'s `/auth/m/`, `oauth` testkit\'s `TestWebOAuth`: the OAuth round trip is not what is timed). Before',
    'each sample, untimed: the user, whose free trial ended days ago, scans a new scene (`need_purchase`,',
    'its reply carrying the phone\'s pay link), and the phone buys through the service as the phone pages',
    'do: `auth.openPhonePay` with the link\'s ticket (the answer is the OAuth redirect), again with a code',
    '`TestWebOAuth` issued for the scanner and the redirect\'s `state` (the plans page), then',
    '`auth.choosePhonePlan({ csrf, plan })`, which opens a JSAPI order for the scene at the emulator',
    '(`createJsapiOrder`: `POST /v3/pay/transactions/jsapi`, the payer the scanner\'s openid). The open',
    'JSAPI order keeps the device\'s stream waiting (B-order-7). Timed as the pay-code rows: from just',
    'before the emulator\'s `pay({ outTradeNo })`, which pays a JSAPI order as its payer (its answer must say',
    '`trade_type` `JSAPI`), to the chunk carrying `authorized` at the device\'s socket. Goal (issue 27):',
    `p99 ≤ ${LATENCY_TARGET_MS} ms on every store.`,
    '',
    '**The device client** (issue 19, `bench/push-client.ts`): a login with `@scanauth/client` against the',
    'same login read by hand on the raw event stream, in one run. The app is an Express 5 app on 127.0.0.1',
    'with `scanAuthRouter` at `/auth` and the WeChat callback (`createWechatCallback`,',
    '`wechatCallbackMiddleware`) at `/wechat/callback`, on a `SqliteStore` (a file in a temporary folder),',
    'its QR codes made by the WeChat emulator through `createWechatQrProvider`. The emulator',
    '(`startWechatEmulator`, plain mode) and the device run in a child process',
    '(`bench/push-client-world.ts`), which takes both stamps: just before the emulator\'s `scan()` (a signed',
    'scan event POSTed to the callback, which calls `handleScan`: a commit with its fsync), and when the',
    'device has its answer. The **raw** device is the least a device can do: `fetch` of `POST create_scene`,',
    'then of `GET events`, the body read chunk by chunk, stamped when the chunk carrying `authorized`',
    'arrives. The **client** is `createScanAuthClient({ baseUrl }).signIn({ deviceId, onCode, onStatus })`',
    'with its default transport (`auto`: the event stream first), stamped when `signIn` resolves. Before',
    'each scan the device\'s stream is open, its first event (`pending`) has arrived, and a few milliseconds',
    'plus a random part have passed. Samples alternate between the two devices, each a new user (the free',
    'trial: `authorized`); the issue sets no goal for the latency.',
    '',
    latencyTable([...latency, ...push.client.latency]),
    '',
    '- **MemoryStore** tells its listeners in process, a microtask after the commit.',
    '- **SqliteStore, one instance**: the store tells its own listeners once the commit returns; the time is',
    '  mostly the commit\'s fsync (`synchronous = FULL`) and the waiter\'s reads.',
    '- **RedisStore**: the commit script itself `PUBLISH`es the scene, and the store\'s subscriber connection',
    '  (opened while someone waits) delivers it, to this process or another: one hop through Redis.',
    '- **PostgresStore**: after the commit the store sends `pg_notify` in a statement of its own (batched,',
    '  committed asynchronously), and the `LISTEN`ing client of each waiting process receives it.',
    `- **SqliteStore, two processes**: the waiting process learns of another process's commits by asking \`PRAGMA data_version\` every \`changePollMs\` (25 ms by default, see docs/sqlite.md), so the notification waits up to that long, about half of it on average${sqliteApart ? ` (here p50 ${n(sqliteApart.p50Ms, 1)} ms, p99 ${n(sqliteApart.p99Ms, 1)} ms)` : ''}; the issue sets no goal for it. A smaller \`changePollMs\` shortens it for a little more idle CPU.`,
    ...(viaRaw && viaClient
      ? [
          `- **The device client** (p99 ${n(viaClient.p99Ms, 1)} ms, against ${n(viaRaw.p99Ms, 1)} ms on the raw stream; p50 ${n(viaClient.p50Ms, 1)} ms against ${n(viaRaw.p50Ms, 1)} ms): ` +
            'both rows hold the emulator\'s signed push, the callback\'s checks, the scan\'s commit with its fsync, the stream\'s wait and ' +
            'the event over the socket; what the client adds is its own reading of the stream (its SSE parser, the status checked and ' +
            'turned into the typed result) and the settling of `signIn`\'s promise.',
        ]
      : []),
    ...paid.map(
      (r) =>
        `- **${STORE_LABEL[r.store]}, pay code paid** (p50 ${n(r.p50Ms, 1)} ms, p99 ${n(r.p99Ms, 1)} ms): what a scan row measures (a commit, here the ` +
        `grant's${r.store === 'sqlite' ? ' with its fsync' : ''}, its notification, the wait's reads) and what lies outside it: the emulator sealing, signing ` +
        '(RSA-2048) and POSTing the notification, the middleware reading it, the handler verifying and decrypting it, the order ' +
        'write that follows the grant in the same process, and the event\'s way to the device over its socket.',
    ),
    ...(phone.length > 0
      ? [
          `- **Phone paid (JSAPI)** (p99 ${phone.map((r) => `${STORE_LABEL[r.store]} ${n(r.p99Ms, 1)} ms`).join(', ')}; goal ≤ ${LATENCY_TARGET_MS} ms): ` +
            'once the payer pays, the path is the pay code\'s (the emulator sealing, signing and POSTing the notification, the handler ' +
            'verifying and decrypting it, `auth.applyPayment` with the grant\'s commit and the order write, the store\'s notification, ' +
            'the event on the socket): `applyPayment` does not look at the channel, and how the order was opened (OAuth, the plans ' +
            'page, the JSAPI order) lies before the timed part. On MemoryStore the store costs nothing, so its row shows the path\'s ' +
            'fixed part (the RSA-2048 signing and verifying, the decryption, Express, two loopback hops); the other rows add their ' +
            'store\'s commits and notification.',
        ]
      : []),
    '',
    `### ${n(c.connections)} waiting event streams in one process (\`bench/push-connections.ts\`)`,
    '',
    `An Express 5 app with \`scanAuthRouter\` on a \`MemoryStore\` holds ${n(c.connections)} event streams, each`,
    'on a pending scene of its own, in a child process started with `--expose-gc`',
    '(`bench/push-server.ts`); another child opens and holds them over plain TCP sockets',
    '(`bench/push-clients.ts`), so the server\'s figures are its own. **Memory per stream**: the server\'s',
    '`process.memoryUsage()` after two full collections with every stream open, minus the same before',
    'the first was opened (the scenes already made; a few hundred streams opened and closed first, so',
    'that compiled code and caches are in the baseline), divided by the streams; heap and RSS. **Idle',
    `CPU**: the server's \`process.cpuUsage()\` over ${n(ours.idleSeconds)} s while nothing changes (a full run measures one heartbeat`,
    'period, 15 s, so that each stream\'s heartbeat — the wait\'s timeout, one store read, a comment',
    'written — counts once).',
    'The **baseline** is a bare Express route in its own fresh processes, holding the same streams with',
    'the least an event stream needs: the headers, one `pending` event, a heartbeat from a timer every',
    '15 s, the timer cleared when the client goes away.',
    '',
    connectionsTable(c),
    '',
    `scanauth adds ${n((ours.heapBytesPerConnection - c.bare.heapBytesPerConnection) / 1024, 1)} KB of heap per stream to what Express and Node's HTTP server`,
    'keep for any open response (the socket, its parser, the request and response objects, the router\'s',
    'state): the request\'s `AbortController` and its signal with the wait\'s abort listener, the handler\'s',
    'async generator and the adapter\'s loop over it (suspended async functions keep their frames), the',
    'waiter (its promise, closures and timeout) and the scene\'s expiry timer (heap snapshots of 2,000',
    'streams, compared by constructor). RSS grows more than the heap on both servers: after a collection',
    'V8 keeps the heap pages it grew into, partly free, and each socket has native memory of its own.',
    `Idle, scanauth's streams cost ${n(ours.idleCpuPercent, 1)}% of a core against ${n(c.bare.idleCpuPercent, 1)}% for the bare route: each heartbeat is`,
    'also a read of the scene (it answers the wait that timed out), where the bare route only writes.',
  ]
  if (c.raisedOpenFiles !== undefined) {
    lines.push(`Both children ran with \`ulimit -n ${c.raisedOpenFiles}\` (raised through \`sh -c\`), above the inherited limit of open files.`)
  }
  lines.push(
    '',
    '### Requests per login (`bench/push-requests.ts`)',
    '',
    'Counted, not timed. The device shows its code at 0 s (one `create_scene`), and the scan lands a',
    `given time later. Polling every ${requests.pollSeconds} s, half a period out of step with the scan, it polls at 0.5 s,`,
    '1.5 s, … until one answers: ⌊T + ½⌋ + 1 polls. On the long poll it makes a request every',
    `${requests.waitSeconds} s until one is answered: ⌈T / ${requests.waitSeconds}⌉. On the event stream, one request whatever the wait (the heartbeats`,
    'are comments on it). A code nobody scans is answered `expired` at its deadline by the server\'s',
    'timer on the stream and the long poll, and by the next poll when polling. Figures are requests per',
    'login, the `create_scene` included; one real run of each way against an Express app, the three',
    'devices scanned at once, checks the arithmetic against the requests the server counted.',
    '',
    requestsTable(requests),
    '',
    '**With the device client** (issue 19, the run of `bench/push-client.ts` described above): a middleware',
    'in front of `scanAuthRouter` counts every request under `/auth` during each login, the `create_scene`',
    'included. The raw device makes two (`create_scene`, `events`); `@scanauth/client` over the event stream',
    `must make at most ${push.client.maxRequests} (the goal counts the most over the logins).`,
    '',
    clientRequestsTable(push.client),
  )
  return lines
}
