/**
 * What the payment notification tests of every adapter share, with no WeChat Pay code in it (each
 * adapter's tests bring the emulator, the client and the handler, so this package depends on none of
 * them): a server for the app under test, and a scanauth that sells {@link TEST_PLANS} through a
 * given payment provider to a user whose free trial is over.
 *
 * @module
 */
import type { IncomingHttpHeaders, RequestListener } from 'node:http'
import { createScanAuth, MemoryStore, type PaymentProvider, type ScanAuth, type StatusResult, type Store } from '@scanauth/core'
import { ManualClock } from '../clock'
import { RecordingQrProvider } from '../qr'
import { TEST_PLANS } from '../suites/orders'
import { eventually } from '../waiting'
import { serverPerTest } from './serve'

/** A request the {@link NotifyHost} answered itself while it held deliveries. */
export interface HeldRequest {
  /** The HTTP method. */
  method: string
  /** The request target (path and query). */
  url: string
  /** The headers as Node received them (lower-cased names). */
  headers: IncomingHttpHeaders
  /** The body bytes, exactly as received. */
  body: Buffer
}

/** A server on 127.0.0.1 for an app that is mounted after it listens; see {@link notifyHostPerTest}. */
export interface NotifyHost {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string
  /** The app to serve from now on (an Express app, a Koa app's `callback()`, a Fetch app's Node listener). */
  mount(app: RequestListener): void
  /**
   * From now on, answer every request 503 without passing it to the app, and keep it in
   * {@link NotifyHost.held}: the app is down, and a test gets a genuine signed delivery to replay.
   */
  hold(): void
  /** Passes requests to the app again (what was held stays in {@link NotifyHost.held}). */
  release(): void
  /** Every request answered while holding, oldest first. */
  readonly held: readonly HeldRequest[]
  /** Resolves with the first request held, once there is one (through {@link eventually}: it fails after 10 s). */
  firstHeld(): Promise<HeldRequest>
}

/**
 * Registers an `afterEach` that closes every host started during the test (through
 * {@link serverPerTest}) and returns a function that starts one. The host listens before the app
 * exists because the app's address is part of what builds it: a payment order carries its
 * `notify_url`, and the service that opens orders is what the notification handler applies them to.
 * Until {@link NotifyHost.mount} it answers 503.
 */
export function notifyHostPerTest(): () => Promise<NotifyHost> {
  const serve = serverPerTest()
  return async () => {
    let app: RequestListener | null = null
    let holding = false
    const held: HeldRequest[] = []
    const url = await serve(async (req, res) => {
      if (app !== null && !holding) return void app(req, res)
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      if (holding) held.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(503, { 'content-type': 'text/plain' }).end('not serving')
    })
    return {
      url,
      held,
      mount(next) {
        app = next
      },
      hold() {
        holding = true
      },
      release() {
        holding = false
      },
      async firstHeld() {
        await eventually('a request to hold', () => held.length > 0)
        return held[0] as HeldRequest
      },
    }
  }
}

/** An order a buyer opened with {@link SellingAuth.buy}. */
export interface TestPurchase {
  /** The order id, also the `out_trade_no` the payment service knows it by. */
  orderId: string
  /** The scene of the device waiting for the payment (it answers `need_purchase` until then). */
  sceneStr: string
  /** The buyer's openid. */
  openid: string
}

/** A selling scanauth; see {@link sellingAuth}. */
export interface SellingAuth {
  /** The service. */
  auth: ScanAuth
  /**
   * Its clock. It starts at the real time, because the payment side (an emulator, the notification
   * handler's signature window) runs on the real clock, and moves only when a test moves it.
   */
  clock: ManualClock
  /**
   * A new user scans once (the free trial), the clock moves past the trial, the user scans a new
   * scene (it answers `need_purchase`) and buys `plan` (default `days-30`) for it.
   */
  buy(plan?: string): Promise<TestPurchase>
  /** What a purchase came to, read from the service: the order, the waiting device, the grants. */
  outcome(purchase: TestPurchase): Promise<PurchaseOutcome>
}

/**
 * What {@link SellingAuth.outcome} reads. Paid once: `{ order: 'paid', device: 'authorized', grants: 1 }`;
 * untouched: `{ order: 'open', device: 'need_purchase', grants: 0 }`.
 */
export interface PurchaseOutcome {
  /** The order's status. */
  order: 'open' | 'paid' | 'closed' | 'refunded' | 'missing'
  /** The status of the scene the device polls. */
  device: StatusResult['status']
  /** How many authorizations payments granted the buyer (ledger `grant` entries of source `purchase`). */
  grants: number
}

/** Options of {@link sellingAuth}. */
export interface SellingAuthOptions {
  /** The payment service, e.g. a WeChat Pay provider pointed at an emulator. */
  provider: PaymentProvider
  /** The store. Default a new `MemoryStore`. */
  store?: Store
}

const FREE_TRIAL_DAYS = 7
const DAY_MS = 24 * 3600 * 1000

/** A scanauth selling {@link TEST_PLANS} through `provider`, with a buyer ready to pay. */
export function sellingAuth(options: SellingAuthOptions): SellingAuth {
  const clock = new ManualClock(Date.now())
  const auth = createScanAuth({
    store: options.store ?? new MemoryStore(),
    qr: new RecordingQrProvider(),
    now: clock.now,
    freeTrialDays: FREE_TRIAL_DAYS,
    payments: { provider: options.provider, plans: TEST_PLANS },
  })
  let buyers = 0
  return {
    auth,
    clock,
    async buy(plan = 'days-30') {
      const openid = `buyer-${++buyers}`
      const trial = await auth.createScene({ deviceId: `old-device-${buyers}` })
      await auth.handleScan({ sceneStr: trial.sceneStr, openid })
      clock.advance((FREE_TRIAL_DAYS + 1) * DAY_MS)
      const { sceneStr } = await auth.createScene({ deviceId: `tv-${buyers}` })
      const scan = await auth.handleScan({ sceneStr, openid })
      if (scan.result !== 'need_purchase') throw new Error(`expected need_purchase after the trial, got ${scan.result}`)
      const { orderId } = await auth.purchase({ sceneStr, plan })
      return { orderId, sceneStr, openid }
    },
    async outcome({ orderId, sceneStr, openid }) {
      const order = await auth.getOrder(orderId)
      const user = await auth.getUser({ openid })
      const ledger = user === null ? [] : (await auth.listLedger({ userId: user.id })).entries
      return {
        order: order?.status ?? 'missing',
        device: (await auth.getStatus(sceneStr)).status,
        grants: ledger.filter((entry) => entry.kind === 'grant' && entry.source === 'purchase').length,
      }
    },
  }
}
