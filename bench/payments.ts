/**
 * WeChat Pay notifications handled per second (issue 18), for the store sections (`bench/sqlite.ts`,
 * `bench/redis.ts`, `bench/postgres.ts`): `createWechatPayNotificationHandler` called in process with
 * real notifications, each paying a distinct open order, beside the least work any handler must do
 * with the same bytes — one RSA-2048 signature check and one AES-256-GCM decryption with node:crypto.
 *
 * Setup (not timed): a service selling `TEST_PLANS` through a `TestPaymentService` (the payment
 * service in memory: it only opens orders and marks them paid); users scan once (the free trial),
 * the clock moves eight days on (the trials are over), and each user buys through its scanned scene
 * with `auth.purchase`, so every order is open, stored by the store under test and tied to a scene
 * (B-order-2, B-order-7). A platform key pair generated here signs, and the APIv3 key encrypts, one
 * `TRANSACTION.SUCCESS` notification per order, built with the building blocks of
 * `@scanauth/wechat-pay` the way WeChat Pay builds them (`encryptAesGcm`, `responseSignatureMessage`,
 * `signMessage`). Each handled notification therefore does the full work once: headers, signature,
 * decryption, the resource's checks, `auth.applyPayment` (the order read, one grant commit keyed by
 * the order, one order write) and the 204.
 *
 * Two rows per store. Issue 18's row compares the handler with the bare cryptography, which writes
 * nothing; a granted payment must write durably, so that row cannot reach its target on any store.
 * The fair row compares the same handler (on orders of its own) with the bare cryptography followed
 * by the raw driver's least durable work for a granted payment, on the same store: read the order,
 * insert the authorization, the ledger entry and the idempotency record, mark the order paid, in one
 * transaction (`bench/payments-baselines.ts`), at the same concurrency as the handler.
 *
 * Run alone, it takes the handler apart on a `MemoryStore` (storing costs nothing there), for
 * profiling what is neither the cryptography nor the store:
 *
 *   node --cpu-prof --import tsx --conditions=@scanauth/source bench/payments.ts
 *
 * @module
 */
import { createDecipheriv, createPublicKey, createVerify, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { createScanAuth, MemoryStore, type ScanAuth, type Store } from '@scanauth/core'
import { TEST_PLANS, TestPaymentService } from '@scanauth/testkit'
import {
  createVerificationKeySet,
  createWechatPayNotificationHandler,
  encryptAesGcm,
  formatBeijingTime,
  parseWechatPayNotification,
  responseSignatureMessage,
  signMessage,
  toProviderTransaction,
  type WechatPayNotificationHandler,
} from '@scanauth/wechat-pay'
import { measureConcurrentPair, type CountedMeasurement, type RoundTripRow } from './concurrent'
import { measurePair, NO_RATE_LIMITS, QUICK, row, type BenchRow } from './lib'
import type { RawPaymentWrites } from './payments-baselines'

/** Issue 18: a notification handled at no less than half the rate of its bare signature check and decryption. */
export const NOTIFY_TARGET = 0.5
/**
 * The same ratio against the fair baseline: the bare cryptography plus the raw driver's one write
 * transaction of a granted payment (`bench/payments-baselines.ts`), the least a hand-written
 * integration must do durably.
 */
export const NOTIFY_FAIR_TARGET = 0.5

/** The row's operation and its baseline, the same words on every store. */
export const NOTIFY_OPERATION = 'payment notification handled (verify, decrypt, grant, order write)'
export const NOTIFY_BASELINE = 'bare RSA-2048 verify + AES-256-GCM decrypt (node:crypto)'

const DAY = 24 * 3600 * 1000

/** One notification as WeChat Pay posts it, and the pieces the bare baseline needs, taken out beforehand. */
interface SignedNotification {
  headers: Record<string, string>
  body: Buffer
  /** `timestamp\nnonce\nbody\n`: what the signature covers. */
  message: Buffer
  signature: Buffer
  iv: Buffer
  aad: Buffer
  ciphertext: Buffer
  tag: Buffer
}

/** What a store section drives: `handle(i)` pays order `i` through the handler, `bare(i)` is the baseline on notification `i`. */
export interface NotificationBench {
  /** Notifications ready, one per open order; call `handle` at most once for each. */
  count: number
  handle(i: number): Promise<void>
  bare(i: number): void
  /** Throws unless every handled notification granted its order exactly once. */
  check(): void
  /** For profiling the parts apart (`node --cpu-prof`): the service, the requests as posted, and the handler's keys. */
  auth: ScanAuth
  requests: ReadonlyArray<{ headers: Record<string, string>; body: Buffer }>
  keys: { verificationKeys: Record<string, string>; apiV3Key: string }
}

/** Options of {@link notificationBench}. */
export interface NotificationBenchOptions {
  /** Open orders (and notifications) to make: the calls the run may use, warm-up included. */
  orders: number
  /** Purchases made at once while seeding (1 for SQLite, which runs one statement at a time anyway). */
  concurrency: number
  /** Prefix of the buyers' openids, so that several runs on one store never share a user. */
  tag?: string
}

/** Orders for a full run, or a fifth of them for `BENCH_QUICK`, which only checks that the row works. */
const notifyOrders = (full: number): number => (QUICK ? Math.ceil(full / 5) : full)

/** Makes the fair baseline's raw writes for `count` payments (seeded beforehand, untimed). */
export type RawPaymentWritesFactory = (count: number) => RawPaymentWrites | Promise<RawPaymentWrites>

/**
 * The two rows of a store benchmarked with one call in flight (SQLite): the handler against the bare
 * cryptography (issue 18's row), then the handler against the bare cryptography plus the raw write
 * transaction of `fair` (the fair row), each a pair in alternating slices (`measurePair`), each
 * handled notification a distinct order (the first row pays orders [0, n), the second [n, 2n)). The
 * calls are capped by the orders seeded, which a full run sizes to outlast the slices on this machine.
 */
export async function notificationRows(storeName: string, store: Store, fair: RawPaymentWritesFactory, full = 1200): Promise<BenchRow[]> {
  const orders = notifyOrders(full)
  const warmupOps = Math.min(50, Math.floor(orders / 10))
  const bench = await notificationBench(store, { orders: 2 * orders, concurrency: 1 })
  const raw = await fair(orders)
  const options = { warmupOps, durationMs: QUICK ? 400 : 1500, maxOps: orders - warmupOps }
  const [measured, base] = await measurePair({ run: (_, i) => bench.handle(i) }, { run: (_, i) => bench.bare(i) }, options)
  const [measuredFair, baseFair] = await measurePair(
    { run: (_, i) => bench.handle(orders + i) },
    {
      run: (_, i) => {
        bench.bare(i)
        return raw.write(i)
      },
    },
    options,
  )
  bench.check()
  return [
    row(storeName, NOTIFY_OPERATION, measured, { name: NOTIFY_BASELINE, ...base }, NOTIFY_TARGET),
    row(storeName, NOTIFY_OPERATION, measuredFair, { name: raw.name, ...baseFair }, NOTIFY_FAIR_TARGET),
  ]
}

/** How a network store's rows are driven: as its section drives its other rows. */
export interface ConcurrentNotificationOptions {
  /** Calls in flight on each side. */
  concurrency: number
  /** The driver's round-trip counter (Redis commands, PostgreSQL statements). */
  roundTrips: () => number
  /** Orders seeded for each row of a full run: enough for the warm-up and every round at this machine's rate. */
  orders: number
  /** Raw orders seeded for the fair baseline of a full run (cheap: bulk inserts); it runs faster than the handler. */
  rawOrders: number
  rounds: number
  roundMs: number
}

/**
 * The two rows of a network store (Redis, PostgreSQL): `concurrency` notifications in flight against
 * the bare cryptography at the same concurrency (synchronous, so it runs one at a time whatever the
 * lanes), then against the bare cryptography plus the raw writes of `fair` at the same concurrency,
 * in interleaved rounds, with the round trips one call cost on each side.
 */
export async function concurrentNotificationRows(storeName: string, store: Store, fair: RawPaymentWritesFactory, options: ConcurrentNotificationOptions): Promise<RoundTripRow[]> {
  const orders = notifyOrders(options.orders)
  const bench = await notificationBench(store, { orders: 2 * orders, concurrency: options.concurrency })
  const raw = await fair(notifyOrders(options.rawOrders))
  const drive = {
    concurrency: options.concurrency,
    roundTrips: options.roundTrips,
    rounds: options.rounds,
    roundMs: QUICK ? Math.ceil(options.roundMs / 4) : options.roundMs,
    warmupOps: Math.min(100, Math.floor(orders / 10)),
  }
  const countedRow = (name: string, measured: CountedMeasurement, base: CountedMeasurement, target: number): RoundTripRow => {
    const { roundTripsPerOp, ...figures } = measured
    const { roundTripsPerOp: baselineRoundTripsPerOp, ...baseFigures } = base
    return { ...row(storeName, NOTIFY_OPERATION, figures, { name, ...baseFigures }, target), roundTripsPerOp, baselineRoundTripsPerOp }
  }
  const [measured, base] = await measureConcurrentPair(
    { run: (i) => bench.handle(i), available: (i) => i < orders },
    { run: async (i) => bench.bare(i) },
    drive,
  )
  const [measuredFair, baseFair] = await measureConcurrentPair(
    { run: (i) => bench.handle(orders + i), available: (i) => i < orders },
    {
      run: async (i) => {
        bench.bare(i)
        await raw.write(i)
      },
      available: (i) => i < raw.count,
    },
    drive,
  )
  bench.check()
  return [countedRow(NOTIFY_BASELINE, measured, base, NOTIFY_TARGET), countedRow(raw.name, measuredFair, baseFair, NOTIFY_FAIR_TARGET)]
}

/** Runs `work(i)` for i in [0, count) with `concurrency` calls in flight. */
async function inLanes(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++)
    }),
  )
}

/**
 * Seeds `orders` open orders on `store` and builds one signed, encrypted notification for each
 * (the store's other benchmarks' data is left alone: these users, scenes and orders are new).
 */
export async function notificationBench(store: Store, options: NotificationBenchOptions): Promise<NotificationBench> {
  const { orders, concurrency } = options
  const tag = options.tag ?? randomBytes(3).toString('hex')
  let now = Date.parse('2026-04-01T00:00:00Z')
  const clock = () => now
  const service = new TestPaymentService(clock)
  let granted = 0
  const auth: ScanAuth = createScanAuth({
    store,
    qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) },
    sessionTtlHours: 24 * 365,
    now: clock,
    rateLimits: NO_RATE_LIMITS,
    payments: { provider: service, plans: TEST_PLANS },
    hooks: { onOrderPaid: () => void granted++ },
  })

  const scenes: string[] = new Array(orders)
  await inLanes(orders, concurrency, async (i) => {
    const { sceneStr } = await auth.createScene({ deviceId: `pay-${i}` })
    await auth.handleScan({ sceneStr, openid: `pay-${tag}-${i}` })
    scenes[i] = sceneStr
  })
  // The trials are over: each scene now polls need_purchase, and its device buys through it.
  now += 8 * DAY
  const orderIds: string[] = new Array(orders)
  await inLanes(orders, concurrency, async (i) => {
    // Both plans in turn: a time grant and a points grant are both real purchases.
    const plan = TEST_PLANS[i % TEST_PLANS.length]?.id as string
    orderIds[i] = (await auth.purchase({ sceneStr: scenes[i] as string, plan })).orderId
  })

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const serial = `PUB_KEY_ID_0114${randomBytes(12).toString('hex').toUpperCase()}`
  const apiV3Key = randomBytes(16).toString('hex')
  const notifications = orderIds.map((orderId, i) => signedNotification(service, orderId, i, { privateKey, serial, apiV3Key, now }))
  // The handler as an application mounts it: the keys as PEM, parsed once when it is created.
  const verificationKeys = { [serial]: publicKey.export({ type: 'spki', format: 'pem' }) as string }
  const handler: WechatPayNotificationHandler = createWechatPayNotificationHandler({ auth, verificationKeys, apiV3Key, now: clock })
  // The baseline's key: parsed once too, as a handler would keep it.
  const verifyKey: KeyObject = createPublicKey(publicKey.export({ type: 'spki', format: 'pem' }))
  const aesKey = Buffer.from(apiV3Key, 'ascii')
  let handled = 0

  return {
    count: orders,
    auth,
    requests: notifications,
    keys: { verificationKeys, apiV3Key },
    async handle(i) {
      const n = notifications[i] as SignedNotification
      const answer = await handler({ headers: n.headers, body: n.body })
      // A refused notification costs far less than an applied one: it must not be counted as one.
      if (answer.status !== 204) throw new Error(`bench: notification ${i} answered ${answer.status} ${answer.body}`)
      handled++
    },
    bare(i) {
      const n = notifications[i % notifications.length] as SignedNotification
      if (!createVerify('RSA-SHA256').update(n.message).verify(verifyKey, n.signature)) throw new Error('bench: bare verify failed')
      const decipher = createDecipheriv('aes-256-gcm', aesKey, n.iv, { authTagLength: 16 })
      decipher.setAAD(n.aad)
      decipher.setAuthTag(n.tag)
      decipher.update(n.ciphertext)
      decipher.final()
    },
    check() {
      if (granted !== handled) throw new Error(`bench: ${handled} notifications handled but ${granted} orders granted`)
    },
  }
}

/**
 * Pays order `orderId` at the test service and builds its `TRANSACTION.SUCCESS` notification: the
 * transaction as WeChat Pay's wire object, sealed under the APIv3 key (associated data
 * `transaction`, a fresh 12-character nonce), in the `encrypt-resource` envelope, signed over
 * `timestamp\nnonce\nbody\n` with the platform key.
 */
function signedNotification(
  service: TestPaymentService,
  orderId: string,
  i: number,
  platform: { privateKey: KeyObject; serial: string; apiV3Key: string; now: number },
): SignedNotification {
  const paid = service.pay(orderId)
  const transaction = {
    mchid: paid.mchid,
    appid: paid.appid,
    out_trade_no: paid.outTradeNo,
    transaction_id: paid.transactionId,
    trade_type: 'NATIVE',
    trade_state: paid.tradeState,
    trade_state_desc: '支付成功',
    bank_type: 'OTHERS',
    attach: '',
    success_time: formatBeijingTime(platform.now),
    payer: { openid: `o_bench_payer_${i}` },
    amount: { total: paid.amount.total, payer_total: paid.amount.total, currency: paid.amount.currency, payer_currency: paid.amount.currency },
  }
  const gcmNonce = randomBytes(6).toString('hex')
  const ciphertext = encryptAesGcm({ apiV3Key: platform.apiV3Key, nonce: gcmNonce, associatedData: 'transaction', plaintext: JSON.stringify(transaction) })
  const envelope = {
    id: `EV-bench-${i}`,
    create_time: formatBeijingTime(platform.now),
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext, associated_data: 'transaction', nonce: gcmNonce },
  }
  const body = Buffer.from(JSON.stringify(envelope), 'utf8')
  const timestamp = String(Math.floor(platform.now / 1000))
  const nonce = randomBytes(16).toString('hex').toUpperCase()
  const message = responseSignatureMessage(timestamp, nonce, body)
  const signature = signMessage(message, platform.privateKey)
  const sealed = Buffer.from(ciphertext, 'base64')
  return {
    // Node's lower-cased names, as a handler behind `http` sees them.
    headers: {
      'content-type': 'application/json',
      'wechatpay-timestamp': timestamp,
      'wechatpay-nonce': nonce,
      'wechatpay-signature': signature,
      'wechatpay-serial': platform.serial,
      'wechatpay-signature-type': 'WECHATPAY2-SHA256-RSA2048',
    },
    body,
    message,
    signature: Buffer.from(signature, 'base64'),
    iv: Buffer.from(gcmNonce, 'utf8'),
    aad: Buffer.from('transaction', 'utf8'),
    ciphertext: sealed.subarray(0, sealed.length - 16),
    tag: sealed.subarray(sealed.length - 16),
  }
}

/**
 * Mean µs per call of each part, on a `MemoryStore`, `rounds` times (parts in turn, so that a burst
 * of other work on the machine lands on one round, not one part): the bare cryptography, the
 * handler's parse (headers, signature, decryption, JSON), the resource's translation, core's
 * `applyPayment` alone, and the whole handler.
 */
async function parts(count: number, rounds: number): Promise<void> {
  const mean = async (f: (i: number) => unknown) => {
    const start = process.hrtime.bigint()
    for (let i = 0; i < count; i++) await f(i)
    return Number(process.hrtime.bigint() - start) / 1000 / count
  }
  for (let round = 0; round < rounds; round++) {
    const whole = await notificationBench(new MemoryStore(), { orders: count, concurrency: 1 })
    const apart = await notificationBench(new MemoryStore(), { orders: count, concurrency: 1 })
    const options = { verificationKeys: createVerificationKeySet(apart.keys.verificationKeys), apiV3Key: apart.keys.apiV3Key, now: () => Date.parse('2026-04-09T00:00:00Z') }
    const parsed: Array<Record<string, unknown>> = []
    const reports: Array<ReturnType<typeof toProviderTransaction>> = []
    const figures = {
      bare: await mean((i) => whole.bare(i)),
      parse: await mean((i) => parsed.push(parseWechatPayNotification(apart.requests[i] as { headers: Record<string, string>; body: Buffer }, options).resource)),
      toProviderTransaction: await mean((i) => reports.push(toProviderTransaction(parsed[i]))),
      applyPayment: await mean((i) => apart.auth.applyPayment(reports[i] as ReturnType<typeof toProviderTransaction>)),
      handler: await mean((i) => whole.handle(i)),
    }
    whole.check()
    console.log(`round ${round + 1}: ${Object.entries(figures).map(([k, v]) => `${k} ${v.toFixed(1)} µs`).join(', ')}`)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await parts(3000, 3)
