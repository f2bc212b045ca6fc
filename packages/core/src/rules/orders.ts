/**
 * The rules of orders (docs/behaviour.md, B-order-1…13), as pure functions of the stored order, the
 * scene and user a purchase goes through, what the payment service reported, and `now`. No I/O, no
 * clock: the service in `orders/` loads, asks these, then writes and talks to the provider.
 */
import type { PaymentRejection } from '../orders/api'
import type { PaymentMerchant, Plan, ProviderRefund, ProviderTransaction } from '../orders/provider'
import type { OrderChannel, OrderRecord, SceneRecord, UserAggregate } from '../store/records'
import { draftOf, findCurrent, runActivationStep } from './authorizations'
import { hasPassed, DAY, SECOND } from './time'

/**
 * How long after its scan a scene may buy whatever its user holds (B-order-12): the device that
 * polled `need_purchase` a moment ago may still be showing the plans when a payment elsewhere (or
 * a grant) gives the user access. Ten minutes is a person choosing a plan and paying, twice over;
 * after that, a scene whose user has access serves a signed-in device, which buys with its session.
 */
export const SCENE_PURCHASE_WINDOW_MS = 10 * 60 * SECOND

/** Whether `scene` was scanned less than {@link SCENE_PURCHASE_WINDOW_MS} ago (B-expiry-1's boundary). */
export function isWithinScenePurchaseWindow(scene: Pick<SceneRecord, 'authorizedAt'>, now: number): boolean {
  return scene.authorizedAt !== null && !hasPassed(scene.authorizedAt + SCENE_PURCHASE_WINDOW_MS, now)
}

/**
 * Whether a poll of a scene bound to `user` would answer `need_purchase` (B-poll-4): no user, or no
 * current authorization once the activation step has run. Decided, never written: the next poll
 * commits what the step changes (D-read-commits).
 */
export function needsPurchase(user: UserAggregate | null, now: number): boolean {
  if (user === null) return true
  return findCurrent(runActivationStep(user.authorizations.map(draftOf), now), now).current === null
}

/**
 * Whether a purchase through `sceneStr` (null: with a session) replaces the open `order` (B-order-4):
 * only an order opened the same way, through the same scene or with a session. An order of another
 * scene, which another device shows, or of a session is never closed by a scene's purchase.
 */
export function mayReplace(order: OrderRecord, sceneStr: string | null): boolean {
  return order.status === 'open' && order.sceneStr === sceneStr
}

/**
 * An open order is reused for a new purchase only while at least this much of its payment window is
 * left (B-order-3): a code shown with seconds to go would expire in the payer's hand.
 */
export const REUSE_MIN_REMAINING_MS = 60 * SECOND

/** The idempotency key of an order's grant (B-order-6): one grant per order, whoever applies it. */
export function grantKeyOf(outTradeNo: string): string {
  return `order:${outTradeNo}`
}

/** A new open order of `plan` for `userId` (B-order-2): the plan's terms are copied into it. */
export function openOrder(input: {
  outTradeNo: string
  userId: number
  plan: Plan
  sceneStr: string | null
  channel: OrderChannel
  now: number
  ttlMs: number
}): OrderRecord {
  const { plan, now } = input
  return {
    outTradeNo: input.outTradeNo,
    userId: input.userId,
    planId: plan.id,
    description: plan.description,
    amountFen: plan.amountFen,
    grant: { ...plan.grant },
    sceneStr: input.sceneStr,
    channel: input.channel,
    status: 'open',
    createdAt: now,
    expiresAt: now + input.ttlMs,
    updatedAt: now,
    paidAt: null,
    transactionId: null,
    authorizationId: null,
    refundedFen: 0,
    refunds: [],
    version: 1,
  }
}

/**
 * Whether an open order may serve a new purchase of `plan` from the same buyer and scene
 * (B-order-3): same plan on the same terms (a catalog changed since must not sell at the old price),
 * same scene, same channel (a Native code cannot become WeChat's cashier, B-phone-1), and enough of
 * its window left. The payment service then answers a fresh code for it.
 */
export function mayReuse(order: OrderRecord, plan: Plan, sceneStr: string | null, channel: OrderChannel, now: number): boolean {
  return (
    order.status === 'open' &&
    order.channel === channel &&
    order.planId === plan.id &&
    order.amountFen === plan.amountFen &&
    order.description === plan.description &&
    sameGrant(order.grant, plan.grant) &&
    order.sceneStr === sceneStr &&
    !hasPassed(order.expiresAt - REUSE_MIN_REMAINING_MS, now)
  )
}

function sameGrant(a: OrderRecord['grant'], b: Plan['grant']): boolean {
  return a.type === 'time' && b.type === 'time' ? a.days === b.days : a.type === 'points' && b.type === 'points' && a.points === b.points
}

/** Whether an order's payment window is over (B-expiry-1's boundary: `now >= expiresAt`). */
export function isPastDeadline(order: OrderRecord, now: number): boolean {
  return hasPassed(order.expiresAt, now)
}

/** WeChat Pay's `trade_state`s that mean the money was taken (`REFUND`: paid, then refunding). */
export function isPaidState(tradeState: string): boolean {
  return tradeState === 'SUCCESS' || tradeState === 'REFUND'
}

/** `trade_state`s after which the order can never be paid. */
export function isClosedState(tradeState: string): boolean {
  return tradeState === 'CLOSED' || tradeState === 'REVOKED' || tradeState === 'PAYERROR'
}

/**
 * Why an authentic payment report must not be applied to `order`, or null when it may (B-order-5).
 * Each check stops a known fraud or mistake: a notification for another merchant or app sharing the
 * endpoint, a report for an order we never opened, and a payment of another amount than the
 * order's (a tampered order, or a catalog mix-up). Currency is always CNY for WeChat Pay.
 */
export function paymentRejection(order: OrderRecord | null, report: ProviderTransaction, merchant: PaymentMerchant): PaymentRejection | null {
  if (report.mchid !== merchant.mchid) return 'merchant_mismatch'
  if (report.appid !== merchant.appid) return 'appid_mismatch'
  if (order === null) return 'unknown_order'
  if (report.amount.currency !== 'CNY') return 'currency_mismatch'
  if (report.amount.total !== order.amountFen) return 'amount_mismatch'
  if (order.transactionId !== null && report.transactionId !== null && report.transactionId !== order.transactionId) return 'transaction_mismatch'
  return null
}

/** Why an authentic refund report must not be applied to `order`, or null when it may (B-order-8). */
export function refundRejection(order: OrderRecord | null, report: ProviderRefund, merchant: PaymentMerchant): PaymentRejection | null {
  if (report.mchid !== merchant.mchid) return 'merchant_mismatch'
  if (order === null) return 'unknown_order'
  if (report.amount.total !== order.amountFen) return 'amount_mismatch'
  if (order.transactionId !== null && report.transactionId !== order.transactionId) return 'transaction_mismatch'
  return null
}

/** What the order's plan grants, as a grant of core: days become whole seconds. */
export function grantOf(order: OrderRecord): { type: 'time'; durationSeconds: number } | { type: 'points'; points: number } {
  return order.grant.type === 'time'
    ? { type: 'time', durationSeconds: Math.round((order.grant.days * DAY) / SECOND) }
    : { type: 'points', points: order.grant.points }
}

/** The order once its payment is applied (B-order-6): paid, with what the payment granted. */
export function markPaid(order: OrderRecord, paid: { transactionId: string | null; authorizationId: number; now: number }): OrderRecord {
  return {
    ...order,
    // An order refunded before its payment was applied stays refunded; it only learns what it bought.
    status: order.status === 'refunded' ? 'refunded' : 'paid',
    paidAt: order.paidAt ?? paid.now,
    transactionId: order.transactionId ?? paid.transactionId,
    authorizationId: paid.authorizationId,
    updatedAt: paid.now,
    version: order.version + 1,
  }
}

/** The order closed unpaid (B-order-4): replaced, past its deadline, or closed at the service. */
export function markClosed(order: OrderRecord, now: number): OrderRecord {
  return { ...order, status: 'closed', updatedAt: now, version: order.version + 1 }
}

/** Whether `outRefundNo` was applied to the order already (B-order-8: each refund counts once). */
export function hasRefund(order: OrderRecord, outRefundNo: string): boolean {
  return order.refunds.some((r) => r.outRefundNo === outRefundNo)
}

/**
 * The order with one more successful refund recorded (B-order-8), and whether the refunds now cover
 * the whole amount, which takes the grant back (B-order-9).
 */
export function withRefund(order: OrderRecord, report: ProviderRefund, now: number): { order: OrderRecord; full: boolean } {
  const refundedFen = order.refundedFen + report.amount.refund
  const full = refundedFen >= order.amountFen
  return {
    full,
    order: {
      ...order,
      status: full ? 'refunded' : order.status,
      refundedFen,
      refunds: [...order.refunds, { outRefundNo: report.outRefundNo, refundId: report.refundId, amountFen: report.amount.refund, at: now }],
      updatedAt: now,
      version: order.version + 1,
    },
  }
}
