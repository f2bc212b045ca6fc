// The pure rules of orders (docs/behaviour.md, B-order-1…9, B-order-4 and B-order-12 for purchases by
// scene) and the `payments` option's checks.
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type Plan, type ProviderTransaction, type Store } from '@scanauth/core'
import type { AuthorizationRecord } from '../src/store/records'
import { RecordingQrProvider, TestPaymentService, TEST_MERCHANT } from '@scanauth/testkit'
import {
  grantOf,
  isClosedState,
  isPaidState,
  isWithinScenePurchaseWindow,
  mayReplace,
  mayReuse,
  markClosed,
  markPaid,
  openOrder,
  needsPurchase,
  paymentRejection,
  refundRejection,
  REUSE_MIN_REMAINING_MS,
  SCENE_PURCHASE_WINDOW_MS,
  withRefund,
} from '../src/rules/orders'

const T0 = Date.parse('2026-11-26T08:00:00.000Z')
const MINUTE = 60_000
const plan: Plan = { id: 'days-30', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } }
const order = openOrder({ outTradeNo: 'SA0123456789ABCDEF0123456789', userId: 7, plan, sceneStr: 'pc_' + 'a'.repeat(32), channel: 'native', now: T0, ttlMs: 15 * MINUTE })
const paid: ProviderTransaction = {
  mchid: TEST_MERCHANT.mchid,
  appid: TEST_MERCHANT.appid,
  outTradeNo: order.outTradeNo,
  transactionId: '4200000000000000000000000001',
  tradeState: 'SUCCESS',
  amount: { total: 1990, currency: 'CNY' },
}

describe('order rules', () => {
  it('opens an order with the plan terms copied and its deadline set (B-order-2)', () => {
    expect(order).toEqual({
      outTradeNo: 'SA0123456789ABCDEF0123456789',
      userId: 7,
      planId: 'days-30',
      description: '30 days',
      amountFen: 1990,
      grant: { type: 'time', days: 30 },
      sceneStr: 'pc_' + 'a'.repeat(32),
      channel: 'native',
      status: 'open',
      createdAt: T0,
      expiresAt: T0 + 15 * MINUTE,
      updatedAt: T0,
      paidAt: null,
      transactionId: null,
      authorizationId: null,
      refundedFen: 0,
      refunds: [],
      version: 1,
    })
    // A copy: changing the plan afterwards does not change the order.
    expect(order.grant).not.toBe(plan.grant)
  })

  it('reuses only the same plan on the same terms, from the same scene and channel, with a minute left (B-order-3, B-phone-1)', () => {
    const deadline = order.expiresAt
    expect(mayReuse(order, plan, order.sceneStr, 'native', deadline - REUSE_MIN_REMAINING_MS - 1)).toBe(true)
    expect(mayReuse(order, plan, order.sceneStr, 'native', deadline - REUSE_MIN_REMAINING_MS)).toBe(false)
    expect(mayReuse(order, plan, null, 'native', T0)).toBe(false)
    expect(mayReuse(order, { ...plan, amountFen: 2990 }, order.sceneStr, 'native', T0)).toBe(false)
    expect(mayReuse(order, { ...plan, description: 'Thirty days' }, order.sceneStr, 'native', T0)).toBe(false)
    expect(mayReuse(order, { ...plan, grant: { type: 'time', days: 31 } }, order.sceneStr, 'native', T0)).toBe(false)
    expect(mayReuse(order, { ...plan, id: 'other' }, order.sceneStr, 'native', T0)).toBe(false)
    expect(mayReuse(markClosed(order, T0), plan, order.sceneStr, 'native', T0)).toBe(false)
    // A Native code cannot become WeChat's cashier, nor the reverse (B-phone-1).
    expect(mayReuse(order, plan, order.sceneStr, 'jsapi', T0)).toBe(false)
    expect(mayReuse({ ...order, channel: 'jsapi' }, plan, order.sceneStr, 'jsapi', T0)).toBe(true)
  })

  it('replaces only an open order opened the same way: through the same scene, or with a session (B-order-4)', () => {
    const other = 'pc_' + 'b'.repeat(32)
    expect(mayReplace(order, order.sceneStr)).toBe(true)
    expect(mayReplace(order, other)).toBe(false)
    expect(mayReplace(order, null)).toBe(false)
    const bySession = { ...order, sceneStr: null }
    expect(mayReplace(bySession, null)).toBe(true)
    expect(mayReplace(bySession, order.sceneStr)).toBe(false)
    expect(mayReplace(markClosed(order, T0), order.sceneStr)).toBe(false)
  })

  it('a scene buys within 10 minutes of its scan, or while its user has no current authorization (B-order-12)', () => {
    expect(SCENE_PURCHASE_WINDOW_MS).toBe(10 * MINUTE)
    const scanned = { authorizedAt: T0 }
    expect(isWithinScenePurchaseWindow(scanned, T0 + 10 * MINUTE - 1)).toBe(true)
    expect(isWithinScenePurchaseWindow(scanned, T0 + 10 * MINUTE)).toBe(false)
    expect(isWithinScenePurchaseWindow({ authorizedAt: null }, T0)).toBe(false)
    const user = { id: 7, openid: 'o', createdAt: T0, lastSeenAt: T0, hasClaimedFree: true, version: 1 }
    const time: AuthorizationRecord = { id: 1, userId: 7, type: 'time', status: 'active', source: 'free', startAt: T0, endAt: T0 + 60 * MINUTE, remainingPoints: 0, totalPoints: 0, createdAt: T0, updatedAt: T0 }
    expect(needsPurchase(null, T0)).toBe(true)
    expect(needsPurchase({ user, authorizations: [] }, T0)).toBe(true)
    expect(needsPurchase({ user, authorizations: [time] }, T0 + 59 * MINUTE)).toBe(false)
    expect(needsPurchase({ user, authorizations: [time] }, T0 + 60 * MINUTE)).toBe(true)
    // A pending one the activation step would start counts as access, as the next poll shows it.
    const queued: AuthorizationRecord = { ...time, id: 2, status: 'pending', source: 'purchase', createdAt: T0 + 1 }
    expect(needsPurchase({ user, authorizations: [time, queued] }, T0 + 60 * MINUTE)).toBe(false)
  })

  it('checks merchant, app, order, currency, amount and transaction in that order (B-order-5)', () => {
    expect(paymentRejection(order, paid, TEST_MERCHANT)).toBeNull()
    expect(paymentRejection(order, { ...paid, mchid: 'x' }, TEST_MERCHANT)).toBe('merchant_mismatch')
    expect(paymentRejection(order, { ...paid, appid: 'x' }, TEST_MERCHANT)).toBe('appid_mismatch')
    expect(paymentRejection(null, paid, TEST_MERCHANT)).toBe('unknown_order')
    expect(paymentRejection(order, { ...paid, amount: { total: 1990, currency: 'HKD' } }, TEST_MERCHANT)).toBe('currency_mismatch')
    expect(paymentRejection(order, { ...paid, amount: { total: 1989, currency: 'CNY' } }, TEST_MERCHANT)).toBe('amount_mismatch')
    const applied = markPaid(order, { transactionId: paid.transactionId, authorizationId: 3, now: T0 })
    expect(paymentRejection(applied, { ...paid, transactionId: '42other' }, TEST_MERCHANT)).toBe('transaction_mismatch')
  })

  it('knows which trade states are paid and which are closed', () => {
    expect(['SUCCESS', 'REFUND'].every(isPaidState)).toBe(true)
    expect(['NOTPAY', 'USERPAYING', 'CLOSED', 'REVOKED', 'PAYERROR', 'success'].some(isPaidState)).toBe(false)
    expect(['CLOSED', 'REVOKED', 'PAYERROR'].every(isClosedState)).toBe(true)
    expect(['NOTPAY', 'USERPAYING', 'SUCCESS'].some(isClosedState)).toBe(false)
  })

  it('turns a plan grant into a core grant: days into whole seconds', () => {
    expect(grantOf(order)).toEqual({ type: 'time', durationSeconds: 30 * 86_400 })
    expect(grantOf({ ...order, grant: { type: 'time', days: 0.5 } })).toEqual({ type: 'time', durationSeconds: 43_200 })
    expect(grantOf({ ...order, grant: { type: 'points', points: 100 } })).toEqual({ type: 'points', points: 100 })
  })

  it('marks an order paid once, keeping a refunded one refunded (B-order-6)', () => {
    const applied = markPaid(order, { transactionId: 'T1', authorizationId: 3, now: T0 + 1 })
    expect(applied).toMatchObject({ status: 'paid', paidAt: T0 + 1, transactionId: 'T1', authorizationId: 3, version: 2 })
    expect(markPaid({ ...order, status: 'refunded' }, { transactionId: 'T1', authorizationId: 3, now: T0 }).status).toBe('refunded')
    expect(markPaid(markClosed(order, T0), { transactionId: 'T1', authorizationId: 3, now: T0 }).status).toBe('paid')
  })

  it('adds refunds up; the one that reaches the amount is full (B-order-8, B-order-9)', () => {
    const report = { mchid: TEST_MERCHANT.mchid, outTradeNo: order.outTradeNo, transactionId: 'T1', outRefundNo: 'R1', refundId: 'r1', refundStatus: 'SUCCESS', amount: { refund: 990, total: 1990 } }
    const applied = markPaid(order, { transactionId: 'T1', authorizationId: 3, now: T0 })
    const first = withRefund(applied, report, T0)
    expect(first).toMatchObject({ full: false, order: { status: 'paid', refundedFen: 990, version: 3 } })
    const second = withRefund(first.order, { ...report, outRefundNo: 'R2', amount: { refund: 1000, total: 1990 } }, T0)
    expect(second).toMatchObject({ full: true, order: { status: 'refunded', refundedFen: 1990 } })
    expect(second.order.refunds.map((r) => r.outRefundNo)).toEqual(['R1', 'R2'])
    expect(refundRejection(applied, { ...report, transactionId: 'T2' }, TEST_MERCHANT)).toBe('transaction_mismatch')
    expect(refundRejection(applied, { ...report, amount: { refund: 1, total: 1 } }, TEST_MERCHANT)).toBe('amount_mismatch')
    expect(refundRejection(null, report, TEST_MERCHANT)).toBe('unknown_order')
    expect(refundRejection(applied, { ...report, mchid: 'x' }, TEST_MERCHANT)).toBe('merchant_mismatch')
  })
})

describe('the payments option (B-order-1)', () => {
  const base = () => ({ store: new MemoryStore(), qr: new RecordingQrProvider() })
  const provider = new TestPaymentService(Date.now)
  const withPlans = (plans: unknown, extra: Record<string, unknown> = {}) => () =>
    createScanAuth({ ...base(), payments: { provider, plans: plans as Plan[], ...extra } })

  it.each([
    ['a yuan float', [{ ...plan, amountFen: 19.9 }], /amountFen.*whole number of fen/],
    ['a zero amount', [{ ...plan, amountFen: 0 }], /amountFen must be positive/],
    ['an unsafe amount', [{ ...plan, amountFen: 2 ** 53 }], /safe integer/],
    ['duplicate ids', [plan, plan], /unique/],
    ['no plan', [], /at least one plan/],
    ['a long description', [{ ...plan, description: 'x'.repeat(128) }], /127 bytes/],
    ['a description over 127 bytes in Chinese', [{ ...plan, description: '会'.repeat(43) }], /127 bytes/],
    ['an odd id', [{ ...plan, id: 'gold plan' }], /id must be/],
    ['days that are not whole seconds', [{ ...plan, grant: { type: 'time', days: 1e-6 } }], /whole number of seconds/],
    ['fractional points', [{ ...plan, grant: { type: 'points', points: 1.5 } }], /plans/],
    ['an unknown grant type', [{ ...plan, grant: { type: 'gold' } }], /plans/],
  ])('refuses %s at start-up with invalid_options', (_name, plans, message) => {
    expect(withPlans(plans)).toThrow(expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(message) }))
  })

  it('refuses an order window outside 1–120 minutes and a provider without its methods', () => {
    expect(withPlans([plan], { orderTtlMinutes: 121 })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(withPlans([plan], { orderTtlMinutes: 0 })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => createScanAuth({ ...base(), payments: { provider: { merchant: TEST_MERCHANT } as never, plans: [plan] } })).toThrow(/provider must have/)
  })

  it('refuses a store without the order methods when payments are configured', () => {
    const store = new MemoryStore()
    const bare: Store = { ...Object.fromEntries(['load', 'commit', 'listLedger', 'endSessions', 'incrementCounter', 'deleteCounter', 'watchScenes'].map((m) => [m, (store as unknown as Record<string, (...a: unknown[]) => unknown>)[m]?.bind(store)])) } as unknown as Store
    expect(() => createScanAuth({ store: bare, qr: new RecordingQrProvider() })).not.toThrow()
    expect(() => createScanAuth({ store: bare, qr: new RecordingQrProvider(), payments: { provider, plans: [plan] } })).toThrow(/loadOrder\(\), saveOrder\(\) and listOpenOrders\(\)/)
  })
})
