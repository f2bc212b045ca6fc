/**
 * Orders through `createScanAuth` (docs/behaviour.md, B-order-1…10) on the store under test: the
 * catalog, purchases by scene and by session, reuse and replacement, the checks a paid report
 * passes, exactly one grant per order (also from several connections at once and after a lost
 * order write), the device woken, refunds, and the reconciler. The payment service is
 * {@link TestPaymentService}; the wire is tested in `@scanauth/wechat-pay`.
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, type PaymentRejectedEvent, type Plan, type ScanAuth, type Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { FREE_TRIAL_DAYS, SCENE_TTL_SECONDS, SESSION_TTL_HOURS } from '../context'
import { TestPaymentService } from '../payment-service'
import { checkInvariants } from '../invariants'
import { expectScanAuthError, freshSession, only, scanNewScene } from '../steps'

const MINUTE = 60_000

/** The catalog of these tests: a time plan and a points plan. */
export const TEST_PLANS: Plan[] = [
  { id: 'days-30', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } },
  { id: 'points-100', description: '100 points', amountFen: 990, grant: { type: 'points', points: 100 } },
]

/** A scanauth instance selling {@link TEST_PLANS} through `service`, over `store`. */
function sellingAuth(ctx: ContractContext, store: Store, service: TestPaymentService, rejected: PaymentRejectedEvent[] = []): ScanAuth {
  return createScanAuth({
    store,
    qr: ctx.qr,
    now: ctx.clock.now,
    sceneTtlSeconds: SCENE_TTL_SECONDS,
    sessionTtlHours: SESSION_TTL_HOURS,
    freeTrialDays: FREE_TRIAL_DAYS,
    payments: { provider: service, plans: TEST_PLANS, orderTtlMinutes: 15 },
    hooks: { onPaymentRejected: (event) => rejected.push(event) },
  })
}

/** A user whose free trial is over, on a scene that answers need_purchase. */
async function needPurchaseScene(ctx: ContractContext, auth: ScanAuth, openid = 'alice'): Promise<string> {
  await scanNewScene(auth, openid, 'trial-device')
  ctx.clock.advance(FREE_TRIAL_DAYS * 24 * 60 * MINUTE)
  const { sceneStr, scan } = await scanNewScene(auth, openid)
  expect(scan.result).toBe('need_purchase')
  return sceneStr
}

export function orderSuite(get: () => ContractContext): void {
  describe('orders (B-order-1…10)', () => {
    it('lists the catalog; without payments the catalog is empty and a purchase is refused', async () => {
      const ctx = get()
      expect(sellingAuth(ctx, ctx.store, new TestPaymentService(ctx.clock.now)).listPlans()).toEqual(TEST_PLANS)
      expect(ctx.auth.listPlans()).toEqual([])
      await expectScanAuthError(ctx.auth.purchase({ sessionToken: 'x', plan: 'days-30' }), 'payments_not_configured', 404)
    })

    it('a purchase through a need_purchase scene opens one order and answers its code', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const bought = await auth.purchase({ sceneStr, plan: 'days-30' })
      expect(bought).toEqual({
        orderId: expect.stringMatching(/^SA[0-9A-F]{26}$/),
        codeUrl: `weixin://wxpay/bizpayurl?pr=${bought.orderId}-1`,
        amountFen: 1990,
        expiresAt: new Date(ctx.clock.now() + 15 * MINUTE).toISOString(),
      })
      expect(service.orders.get(bought.orderId)?.request).toEqual({ outTradeNo: bought.orderId, description: '30 days', amountFen: 1990, expiresAt: ctx.clock.now() + 15 * MINUTE })
      expect(await auth.getOrder(bought.orderId)).toMatchObject({ status: 'open', sceneStr, planId: 'days-30', amountFen: 1990 })
      expect(await auth.openOrderOfScene(sceneStr)).toMatchObject({ orderId: bought.orderId })
    })

    it('refuses bad purchases before the payment service hears of them', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const pending = (await auth.createScene({ deviceId: 'tv' })).sceneStr
      await expectScanAuthError(auth.purchase({ sceneStr: pending, plan: 'nope' }), 'plan_not_found', 404)
      await expectScanAuthError(auth.purchase({ sceneStr: pending, plan: 'days-30' }), 'scene_not_scanned', 409)
      await expectScanAuthError(auth.purchase({ sceneStr: 'pc_' + '0'.repeat(32), plan: 'days-30' }), 'scene_not_found', 404)
      await expectScanAuthError(auth.purchase({ sceneStr: 'not-a-scene', plan: 'days-30' }), 'scene_not_found', 404)
      await expectScanAuthError(auth.purchase({ sessionToken: 'unknown', plan: 'days-30' }), 'unauthorized', 401)
      await expectScanAuthError(auth.purchase({ plan: 'days-30' } as never), 'invalid_request', 400)
      await expectScanAuthError(auth.purchase({ sessionToken: 't', plan: 12 } as never), 'invalid_request', 400)
      expect(service.calls).toEqual([])
    })

    it('reuses the open order of the same plan and scene with a fresh code, and replaces it for another plan', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const first = await auth.purchase({ sceneStr, plan: 'days-30' })
      ctx.clock.advance(MINUTE)
      const again = await auth.purchase({ sceneStr, plan: 'days-30' })
      expect(again.orderId).toBe(first.orderId)
      expect(again.codeUrl).toBe(`weixin://wxpay/bizpayurl?pr=${first.orderId}-2`)
      const other = await auth.purchase({ sceneStr, plan: 'points-100' })
      expect(other.orderId).not.toBe(first.orderId)
      // Closed at the service before the new order was opened there, then here.
      const order = service.calls.filter((c) => c.method !== 'queryOrder').map((c) => `${c.method}:${c.outTradeNo === first.orderId ? 'first' : 'other'}`)
      expect(order.slice(-2)).toEqual(['closeOrder:first', 'createNativeOrder:other'])
      expect(await auth.getOrder(first.orderId)).toMatchObject({ status: 'closed' })
      expect(await auth.openOrderOfScene(sceneStr)).toMatchObject({ orderId: other.orderId })
    })

    it('an order whose opening failed is reused for the same plan and closed here for another', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      service.failWith = 'SYSTEM_ERROR'
      await expectScanAuthError(auth.purchase({ sceneStr, plan: 'days-30' }), 'payment_provider_failed', 502)
      const [stored] = await (ctx.store.listOpenOrders as NonNullable<Store['listOpenOrders']>)({ sceneStr, limit: 10 })
      expect(stored).toMatchObject({ status: 'open', planId: 'days-30' })
      service.failWith = null
      // Another plan: the failed order is unknown to the service, so it is closed here alone.
      const other = await auth.purchase({ sceneStr, plan: 'points-100' })
      expect(await auth.getOrder(stored?.outTradeNo as string)).toMatchObject({ status: 'closed' })
      expect(service.orders.has(stored?.outTradeNo as string)).toBe(false)
      expect(await auth.openOrderOfScene(sceneStr)).toMatchObject({ orderId: other.orderId })
    })

    it('a purchase while another of the same user is being opened is refused, opening nothing', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => auth.purchase({ sceneStr, plan: 'days-30' })))
      const opened = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ orderId: string }>).value.orderId)
      const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as { code: string })
      expect(opened.length).toBeGreaterThanOrEqual(1)
      expect(new Set(opened).size).toBe(1)
      for (const reason of refused) expect(reason.code).toBe('purchase_in_progress')
      expect(service.orders.size).toBe(1)
      // The lock is gone afterwards: the same purchase again reuses the order.
      expect((await auth.purchase({ sceneStr, plan: 'days-30' })).orderId).toBe(opened[0])
    })

    it('replaces an open order with less than a minute left instead of reusing it', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const first = await auth.purchase({ sceneStr, plan: 'days-30' })
      ctx.clock.advance(14 * MINUTE + 1)
      const second = await auth.purchase({ sceneStr, plan: 'days-30' })
      expect(second.orderId).not.toBe(first.orderId)
      expect(service.orders.get(first.orderId)?.tradeState).toBe('CLOSED')
    })

    it('a paid report grants the plan once, wakes the scene and is answered already_applied after', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const { orderId } = await auth.purchase({ sceneStr, plan: 'days-30' })
      const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 20_000 })
      const report = service.pay(orderId)
      const applied = await auth.applyPayment(report)
      expect(applied).toEqual({ result: 'granted', orderId, authorizationId: expect.any(Number) })
      const woken = await waiting
      expect(woken).toMatchObject({ status: 'authorized', authorization: { type: 'time', endAt: new Date(ctx.clock.now() + 30 * 24 * 60 * MINUTE).toISOString() } })
      const before = await ctx.dump()
      expect(await auth.applyPayment(report)).toEqual({ result: 'already_applied', orderId, authorizationId: applied.result === 'granted' ? applied.authorizationId : -1 })
      expect(await ctx.dump()).toEqual(before)
      const grant = only(before.ledger, (e) => e.kind === 'grant' && e.source === 'purchase')
      expect(grant.idempotencyKey).toBe(`order:${orderId}`)
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'paid', transactionId: report.transactionId, paidAt: new Date(ctx.clock.now()).toISOString() })
      expect(await auth.openOrderOfScene(sceneStr)).toBeNull()
      expect(checkInvariants(before)).toEqual([])
    })

    it('refuses authentic reports that do not match the order, changing nothing and telling the hook', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const rejected: PaymentRejectedEvent[] = []
      const auth = sellingAuth(ctx, ctx.store, service, rejected)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const { orderId } = await auth.purchase({ sceneStr, plan: 'days-30' })
      const paid = service.pay(orderId)
      const before = await ctx.dump()
      const forged = [
        [{ ...paid, mchid: '1999999999' }, 'merchant_mismatch'],
        [{ ...paid, appid: 'wxother' }, 'appid_mismatch'],
        [{ ...paid, amount: { total: 1, currency: 'CNY' } }, 'amount_mismatch'],
        [{ ...paid, amount: { total: 1990, currency: 'USD' } }, 'currency_mismatch'],
        [{ ...paid, outTradeNo: 'SA00000000000000000000000000' }, 'unknown_order'],
      ] as const
      for (const [report, reason] of forged) expect(await auth.applyPayment(report)).toMatchObject({ result: 'rejected', reason })
      expect(rejected.map((e) => e.reason)).toEqual(forged.map(([, reason]) => reason))
      expect(await auth.applyPayment({ ...paid, tradeState: 'NOTPAY', transactionId: null })).toEqual({ result: 'not_paid', orderId })
      expect(await ctx.dump()).toEqual(before)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'need_purchase' })
    })

    it('the same payment applied at once by several instances grants exactly once', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const stores = [ctx.store]
      if (ctx.harness.openPeer) for (let i = 0; i < 3; i++) stores.push(await ctx.harness.openPeer())
      const auths = Array.from({ length: 8 }, (_, i) => sellingAuth(ctx, stores[i % stores.length] as Store, service))
      const first = auths[0] as ScanAuth
      const sceneStr = await needPurchaseScene(ctx, first)
      const { orderId } = await first.purchase({ sceneStr, plan: 'points-100' })
      const report = service.pay(orderId)
      // The second half repeats the same transaction as if under a new notification id.
      const outcomes = await Promise.all(auths.map((auth) => auth.applyPayment({ ...report })))
      expect(outcomes.filter((o) => o.result === 'granted')).toHaveLength(1)
      const ids = new Set(outcomes.map((o) => ('authorizationId' in o ? o.authorizationId : null)))
      expect(ids.size).toBe(1)
      const snapshot = await ctx.dump()
      expect(snapshot.authorizations.filter((a) => a.source === 'purchase')).toHaveLength(1)
      expect(snapshot.ledger.filter((e) => e.kind === 'grant' && e.source === 'purchase')).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('a payment whose order write was lost is completed by the next report, granting nothing twice', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      let failSaves = 0
      // The same store, but the next order write fails as a dropped connection would.
      const flaky: Store = Object.assign(Object.create(ctx.store) as Store, {
        saveOrder: async (write: Parameters<NonNullable<Store['saveOrder']>>[0]) => {
          if (failSaves > 0) {
            failSaves--
            throw new Error('connection lost')
          }
          return (ctx.store.saveOrder as NonNullable<Store['saveOrder']>).call(ctx.store, write)
        },
      })
      const auth = sellingAuth(ctx, flaky, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      const { orderId } = await auth.purchase({ sceneStr, plan: 'days-30' })
      const report = service.pay(orderId)
      failSaves = 1
      await expect(auth.applyPayment(report)).rejects.toThrow('connection lost')
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'open' })
      // The grant is in: the device sees it already.
      expect(await auth.getStatus(sceneStr)).toMatchObject({ status: 'authorized' })
      const again = await auth.applyPayment(report)
      expect(again).toMatchObject({ result: 'already_applied', orderId })
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'paid' })
      expect((await ctx.dump()).authorizations.filter((a) => a.source === 'purchase')).toHaveLength(1)
    })

    it('a full refund revokes what the order bought, once; a partial one only records', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const token = await freshSession(auth, ctx.dump, 'bob')
      const { orderId } = await auth.purchase({ sessionToken: token, plan: 'points-100' })
      const paid = await auth.applyPayment(service.pay(orderId))
      const authorizationId = paid.result === 'granted' ? paid.authorizationId : -1
      const partial = service.refund(orderId, 'R1', 490)
      expect(await auth.applyRefund(partial)).toEqual({ result: 'partially_refunded', orderId, revokedAuthorizationId: null })
      expect(await auth.applyRefund(partial)).toEqual({ result: 'already_applied', orderId })
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'paid', refundedFen: 490 })
      const rest = service.refund(orderId, 'R2', 500)
      expect(await auth.applyRefund(rest)).toEqual({ result: 'refunded', orderId, revokedAuthorizationId: authorizationId })
      const snapshot = await ctx.dump()
      expect(only(snapshot.authorizations, (a) => a.id === authorizationId).status).toBe('revoked')
      expect(only(snapshot.ledger, (e) => e.kind === 'revoke').authorizationId).toBe(authorizationId)
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'refunded', refundedFen: 990 })
      expect(await auth.applyRefund({ ...rest, refundStatus: 'PROCESSING', outRefundNo: 'R3' })).toEqual({ result: 'not_refunded', orderId })
      // A late paid report of a refunded order grants nothing.
      const late = await service.queryOrder(orderId)
      expect(late).toMatchObject({ tradeState: 'REFUND' })
      expect(await auth.applyPayment(late as NonNullable<typeof late>)).toMatchObject({ result: 'already_applied' })
      expect((await ctx.dump()).authorizations.filter((a) => a.source === 'purchase')).toHaveLength(1)
    })

    it('a refund delivered to several instances at once is recorded by one (refunded) and already_applied to the others', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const token = await freshSession(auth, ctx.dump, 'bob')
      const { orderId } = await auth.purchase({ sessionToken: token, plan: 'points-100' })
      const paid = await auth.applyPayment(service.pay(orderId))
      const authorizationId = paid.result === 'granted' ? paid.authorizationId : -1
      const full = service.refund(orderId, 'R1', 990)
      const stores = await ctx.stores(4)
      const outcomes = await Promise.all(stores.map((store) => sellingAuth(ctx, store, service).applyRefund(full)))
      expect(outcomes.filter((o) => o.result === 'refunded')).toEqual([{ result: 'refunded', orderId, revokedAuthorizationId: authorizationId }])
      expect(outcomes.filter((o) => o.result !== 'refunded')).toEqual(Array(3).fill({ result: 'already_applied', orderId }))
      expect(await auth.getOrder(orderId)).toMatchObject({ status: 'refunded', refundedFen: 990 })
      const snapshot = await ctx.dump()
      expect(snapshot.ledger.filter((e) => e.kind === 'revoke')).toHaveLength(1)
    })

    it('the reconciler grants a payment whose notification never came and closes orders past their deadline', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const paidScene = await needPurchaseScene(ctx, auth, 'carol')
      const unpaidToken = await freshSession(auth, ctx.dump, 'dave')
      const paid = await auth.purchase({ sceneStr: paidScene, plan: 'days-30' })
      const unpaid = await auth.purchase({ sessionToken: unpaidToken, plan: 'points-100' })
      service.pay(paid.orderId)
      // Too young: left alone (a payment may be in flight).
      expect(await auth.reconcileOrders()).toMatchObject({ checked: 0 })
      ctx.clock.advance(2 * MINUTE)
      expect(await auth.reconcileOrders()).toEqual({ checked: 2, granted: 1, closed: 0, open: 1, failed: 0, more: false, errors: [] })
      expect(await auth.getStatus(paidScene)).toMatchObject({ status: 'authorized' })
      ctx.clock.advance(15 * MINUTE)
      expect(await auth.reconcileOrders({ limit: 10 })).toEqual({ checked: 1, granted: 0, closed: 1, open: 0, failed: 0, more: false, errors: [] })
      expect(service.orders.get(unpaid.orderId)?.tradeState).toBe('CLOSED')
      expect(await auth.getOrder(unpaid.orderId)).toMatchObject({ status: 'closed' })
      expect(await auth.reconcileOrders()).toMatchObject({ checked: 0 })
    })

    it('the reconciler reports a failing payment service and leaves the order for the next run', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const token = await freshSession(auth, ctx.dump, 'erin')
      const { orderId } = await auth.purchase({ sessionToken: token, plan: 'days-30' })
      ctx.clock.advance(20 * MINUTE)
      service.failWith = 'service unavailable'
      expect(await auth.reconcileOrders()).toEqual({ checked: 1, granted: 0, closed: 0, open: 0, failed: 1, more: false, errors: [{ orderId, message: 'service unavailable' }] })
      service.failWith = null
      expect(await auth.reconcileOrders()).toMatchObject({ checked: 1, closed: 1 })
    })

    it('a need_purchase wait returns at once without an order and waits for the payment with one', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuth(ctx, ctx.store, service)
      const sceneStr = await needPurchaseScene(ctx, auth)
      expect(await auth.waitForStatus(sceneStr, { timeoutMs: 20_000 })).toEqual({ status: 'need_purchase' })
      const { orderId } = await auth.purchase({ sceneStr, plan: 'points-100' })
      let settled = false
      const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 20_000 }).finally(() => (settled = true))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(settled).toBe(false)
      await auth.applyPayment(service.pay(orderId))
      expect(await waiting).toMatchObject({ status: 'authorized', authorization: { type: 'points', remainingPoints: 100 } })
    })
  })
}
