/**
 * `describePaymentProcesses`: the cross-process checks of selling access (docs/behaviour.md,
 * B-order-6 and B-order-10) that every store runs on its real backend. Worker processes, each with
 * its own store connection, `createScanAuth` and WeChat Pay notification handler
 * ({@link servePaymentWorker}), are handed real notifications the emulator signed and encrypted:
 *
 * - the same notification, same bytes and headers, at the same moment in two processes (and the
 *   same transaction under a new notification id too): every delivery answered 204, one grant;
 * - a process killed after verifying a notification, before the grant commits or after it but
 *   before the order is written paid: WeChat Pay's retry in another process, or the reconciler in
 *   another process, completes it, granting once.
 *
 * What each test concludes it reads straight from the backend (the harness's `dump`).
 *
 * @module
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentOutcome, ScanAuth, Store } from '@scanauth/core'
import type { StoreSnapshot } from '../harness'
import { checkInvariants } from '../invariants'
import { halfAppliedWrites } from '../half-applied'
import type { PaymentCommand, PaymentEmulatorFactory, PaymentProviderFactory, PaymentReport, StallPoint } from './payment-protocol'
import { startPaymentRig, type PaidOrder, type PaymentRig } from './payment-rig'
import { forkWorker, type WorkerHandle } from './worker-process'

/** One test's backing data, opened fresh by the store package for each test. */
export interface PaymentBacking {
  /** The parent's own store on it (it opens the orders). */
  store: Store
  /** Added to each worker's environment, naming the backing data (a file, a key prefix, a schema). */
  env: Record<string, string>
  /** Every record, read straight from the backend (orders included), not through the store. */
  dump(): Promise<StoreSnapshot> | StoreSnapshot
  /** Called once every worker has exited: closes the parent's store and deletes the backing data. */
  cleanup(): Promise<void> | void
}

/** What a store package gives {@link describePaymentProcesses}. */
export interface PaymentProcessesOptions {
  /** `startWechatPayEmulator` of `@scanauth/wechat-emulator`. */
  startEmulator: PaymentEmulatorFactory
  /** `(settings) => createWechatPayProvider(createWechatPayClient(settings))`, for the parent's service. */
  provider: PaymentProviderFactory
  /** Fresh, empty backing data for one test. */
  open(): Promise<PaymentBacking>
  /** The package's worker module, which calls {@link servePaymentWorker}. */
  workerPath: string
  /** The package's folder (the workers' working directory). */
  cwd: string
  /** Orders raced by the two processes. Default 20. */
  orders?: number
}

type Worker = WorkerHandle<PaymentCommand, PaymentReport>

const MINUTE = 60_000

/**
 * Registers the cross-process payment tests of a store: see the module comment. Each test opens
 * its own backing data and forks two workers on it; the emulator is shared by the file.
 */
export function describePaymentProcesses(name: string, options: PaymentProcessesOptions): void {
  const ORDERS = options.orders ?? 20

  describe(`${name}: WeChat Pay notifications across processes`, () => {
    let rig: PaymentRig
    let backing: PaymentBacking | null = null
    let workers: Worker[] = []

    beforeAll(async () => {
      rig = await startPaymentRig(options.startEmulator, options.provider)
    })
    afterAll(() => rig?.close())
    afterEach(async () => {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL')
      await Promise.all(workers.map((w) => w.exited))
      workers = []
      await backing?.cleanup()
      backing = null
    })

    /** Fresh backing data, the parent's service on it, and `count` workers forked on it. */
    async function start(count: number): Promise<{ auth: ScanAuth; workers: Worker[]; dump: () => Promise<StoreSnapshot> }> {
      const opened = await options.open()
      backing = opened
      const forked = Array.from({ length: count }, (_, i) =>
        forkWorker<PaymentCommand, PaymentReport>({
          path: options.workerPath,
          cwd: options.cwd,
          execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
          env: { ...opened.env, SCANAUTH_PAYMENT_SETTINGS: JSON.stringify(rig.settings) },
          name: `payment worker ${i}`,
        }),
      )
      workers = forked.map((f) => f.handle)
      await Promise.all(forked.map((f) => f.ready))
      return { auth: rig.service(opened.store), workers, dump: async () => opened.dump() }
    }

    it(`the same notification at the same moment in two processes, ${ORDERS} times: every delivery 204, one grant per order`, { timeout: 60_000 }, async () => {
      const { auth, workers: [first, second], dump } = await start(2)
      const orders = await rig.paidOrders(auth, ORDERS, 'race')
      const outcomes: PaymentOutcome[] = []
      let commits = 0
      let conflicts = 0
      for (const [i, order] of orders.entries()) {
        // The same bytes to both at once; one of them (each in turn) also gets the transaction under
        // a new notification id in the same moment, as WeChat Pay may send it.
        const [one, other] = (i % 2 === 0 ? [first, second] : [second, first]) as [Worker, Worker]
        const reports = await Promise.all([
          one.run({ kind: 'deliver', notifications: [order.notification] }),
          other.run({ kind: 'deliver', notifications: [order.notification, order.newId] }),
        ])
        expect(reports.flatMap((r) => r.statuses), order.orderId).toEqual([204, 204, 204])
        const answered = reports.flatMap((r) => r.outcomes)
        expect(answered.map((o) => o.result).sort(), order.orderId).toEqual(['already_applied', 'already_applied', 'granted'])
        outcomes.push(...answered)
        commits += reports.reduce((n, r) => n + r.commits, 0)
        conflicts += reports.reduce((n, r) => n + r.conflicts, 0)
      }
      // How often the grants really met in the store (a lost commit race), for the log: it varies.
      console.info(`[payments] ${name}: ${ORDERS} orders × 3 deliveries in 2 processes: ${commits} commits, ${conflicts} conflicts planned again`)

      const snapshot = await dump()
      expectSound(snapshot)
      expect(snapshot.authorizations.filter((a) => a.source === 'purchase')).toHaveLength(ORDERS)
      for (const order of orders) {
        const granted = expectGrantedOnce(snapshot, order)
        // Every delivery was answered with that one authorization.
        const forOrder = outcomes.filter((o) => o.orderId === order.orderId)
        expect(forOrder.map((o) => ('authorizationId' in o ? o.authorizationId : null)), order.orderId).toEqual([granted, granted, granted])
      }
    })

    it('a JSAPI order paid on the phone: its notification in two processes at the same moment as the order page asks WeChat Pay, one grant (B-phone-7)', { timeout: 60_000 }, async () => {
      const { auth, workers: [first, second], dump } = (await start(2)) as { auth: ScanAuth; workers: [Worker, Worker]; dump: () => Promise<StoreSnapshot> }
      const WECHAT = 'Mozilla/5.0 (iPhone) Mobile/15E148 MicroMessenger/8.0.50'
      const orders: PaidOrder[] = []
      for (let i = 0; i < 5; i++) {
        // A person with an account buys on the phone: the plans page after WeChat OAuth, a plan, the cashier.
        const openid = `phone-buyer-${i}`
        await auth.handleScan({ sceneStr: (await auth.createScene({ deviceId: `phone-tv-${i}` })).sceneStr, openid })
        const entry = await auth.openPhonePay({ userAgent: WECHAT })
        const state = entry.step === 'authorize' ? (new URL(entry.location).searchParams.get('state') as string) : ''
        const page = await auth.openPhonePay({ code: rig.oauth.issueCode(openid), state, userAgent: WECHAT })
        if (page.step !== 'plans') throw new Error(`expected the plans page, got ${page.step}`)
        const cashier = await auth.choosePhonePlan({ csrf: page.view.csrf, plan: 'days-30' })
        if (cashier.step !== 'cashier') throw new Error(`expected the cashier, got ${cashier.step}`)
        orders.push(...(await rig.payOpened([{ orderId: cashier.cashier.orderId, openid }])))
      }
      for (const order of orders) {
        const entry = await auth.openPhoneOrder({ orderId: order.orderId, userAgent: WECHAT })
        const state = entry.step === 'authorize' ? (new URL(entry.location).searchParams.get('state') as string) : ''
        // The notification to both processes, and the order page asking WeChat Pay in this one, at once.
        const [one, other, page] = await Promise.all([
          first.run({ kind: 'deliver', notifications: [order.notification] }),
          second.run({ kind: 'deliver', notifications: [order.notification] }),
          auth.openPhoneOrder({ orderId: order.orderId, code: rig.oauth.issueCode(order.openid), state, userAgent: WECHAT }),
        ])
        expect([...one.statuses, ...other.statuses], order.orderId).toEqual([204, 204])
        expect(page, order.orderId).toMatchObject({ step: 'order', view: { status: 'paid' } })
        // The page granted, or one of the deliveries did: the other two found it applied.
        const results = [...one.outcomes, ...other.outcomes].map((o) => o.result)
        expect(results.filter((r) => r === 'granted').length, order.orderId).toBeLessThanOrEqual(1)
        expect(results.every((r) => r === 'granted' || r === 'already_applied'), order.orderId).toBe(true)
      }
      const snapshot = await dump()
      expectSound(snapshot)
      expect(snapshot.authorizations.filter((a) => a.source === 'purchase')).toHaveLength(orders.length)
      for (const order of orders) {
        expectGrantedOnce(snapshot, order)
        expect(orderOf(snapshot, order.orderId).channel).toBe('jsapi')
      }
    })

    const crashes: Array<[StallPoint, 'retry' | 'reconciler']> = [
      ['grant', 'retry'],
      ['grant', 'reconciler'],
      ['order', 'retry'],
      ['order', 'reconciler'],
    ]
    it.each(crashes)('killed after verifying, before the %s write: the %s in another process grants once', { timeout: 60_000 }, async (point, recovery) => {
      const { auth, workers: [victim, rescuer], dump } = (await start(2)) as { auth: ScanAuth; workers: [Worker, Worker]; dump: () => Promise<StoreSnapshot> }
      const [order] = (await rig.paidOrders(auth, 1, `crash-${point}-${recovery}`)) as [PaidOrder]

      const stalled = await victim.run({ kind: 'deliver-and-stall', notification: order.notification, stallAt: point })
      expect(stalled.stalled).toBe(point)
      victim.child.kill('SIGKILL')
      expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' })

      // What the killed process left: before the grant, nothing; between the two writes, the grant
      // (whole: expectSound) beside an order still open. Whether the grant carries its key is left
      // to the end, so that a grant without one shows as the second grant it lets through.
      const left = await dump()
      expectSound(left)
      expect(left.authorizations.filter((a) => a.source === 'purchase')).toHaveLength(point === 'grant' ? 0 : 1)
      expect(orderOf(left, order.orderId).status).toBe('open')

      if (recovery === 'retry') {
        // WeChat Pay's retry: the very same notification, now to another process.
        const retried = await rescuer.run({ kind: 'deliver', notifications: [order.notification] })
        expect(retried.statuses).toEqual([204])
        expect(retried.outcomes.map((o) => o.result)).toEqual([point === 'grant' ? 'granted' : 'already_applied'])
      } else {
        // The reconciler's next run, minutes later: the order is past minAgeSeconds (60 s) and the
        // service's query says SUCCESS.
        const reconciled = await rescuer.run({ kind: 'reconcile', now: Date.now() + 2 * MINUTE })
        expect(reconciled.reconciled).toMatchObject({ checked: 1, granted: 1, closed: 0, open: 0, failed: 0, errors: [] })
      }
      // The notification under a new id arriving after the recovery changes nothing.
      const late = await rescuer.run({ kind: 'deliver', notifications: [order.newId] })
      expect(late.statuses).toEqual([204])
      expect(late.outcomes.map((o) => o.result)).toEqual(['already_applied'])

      const snapshot = await dump()
      expectSound(snapshot)
      expect(snapshot.authorizations.filter((a) => a.source === 'purchase')).toHaveLength(1)
      const granted = expectGrantedOnce(snapshot, order)
      if (point === 'order') expect(granted).toBe(left.authorizations.find((a) => a.source === 'purchase')?.id)
    })
  })
}

/** Every invariant holds and no commit was applied in part. */
function expectSound(snapshot: StoreSnapshot): void {
  expect(checkInvariants(snapshot)).toEqual([])
  expect(halfAppliedWrites(snapshot)).toEqual([])
}

function orderOf(snapshot: StoreSnapshot, orderId: string) {
  if (snapshot.orders === undefined) throw new Error('the harness dump leaves orders out; the payment tests need them')
  const order = snapshot.orders.find((o) => o.outTradeNo === orderId)
  if (order === undefined) throw new Error(`order ${orderId} is not in the backend`)
  return order
}

/**
 * The order granted exactly once (B-order-6), read from the backend: its buyer holds one purchase
 * authorization, whose one `grant` entry carries the key `order:<id>`, the key's record names it and
 * no other entry carries the key; the order is `paid` with the emulator's transaction id and that
 * authorization. Answers the authorization's id.
 */
function expectGrantedOnce(snapshot: StoreSnapshot, order: PaidOrder): number {
  const key = `order:${order.orderId}`
  const users = snapshot.users.filter((u) => u.openid === order.openid)
  expect(users, order.openid).toHaveLength(1)
  const purchases = snapshot.authorizations.filter((a) => a.userId === users[0]?.id && a.source === 'purchase')
  expect(purchases, order.orderId).toHaveLength(1)
  const id = (purchases[0] as { id: number }).id
  expect(snapshot.ledger.filter((e) => e.idempotencyKey === key), order.orderId).toEqual([expect.objectContaining({ kind: 'grant', authorizationId: id })])
  expect(snapshot.ledger.filter((e) => e.authorizationId === id && e.kind === 'grant'), order.orderId).toHaveLength(1)
  expect(snapshot.idempotency.filter((r) => r.key === key), order.orderId).toEqual([expect.objectContaining({ authorizationId: id })])
  expect(orderOf(snapshot, order.orderId), order.orderId).toMatchObject({ status: 'paid', transactionId: order.transactionId, authorizationId: id })
  return id
}
