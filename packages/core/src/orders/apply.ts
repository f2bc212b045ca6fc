/**
 * Applying what the payment service reports (docs/behaviour.md, B-order-5…9): a paid order grants
 * its plan exactly once and wakes the scene's device; a refund is recorded once and a full one takes
 * the grant back. Reports come from a verified notification or from a query; both go through here.
 *
 * @module
 */
import type { PaymentOutcome, RefundOutcome } from './api'
import type { ProviderRefund, ProviderTransaction } from './provider'
import { ScanAuthError } from '../errors'
import { planGrant } from '../operations/grant'
import { answer, type Plan } from '../operations/plan'
import type { OrderRecord } from '../store/records'
import { fingerprintOf, isRepeat } from '../rules/idempotency'
import { grantKeyOf, grantOf, hasRefund, isPaidState, markPaid, paymentRejection, refundRejection, withRefund } from '../rules/orders'
import type { ChangeSet } from '../store/contract'
import { parseInput } from '../service/validation'
import { updateOrder, type OrderContext } from './context'
import { providerRefund, providerTransaction } from './validation'

/** The order's grant: the authorization it created, and whether this call created it. */
interface GrantOutcome {
  authorizationId: number
  granted: boolean
}

/** The operations that apply payment and refund reports. */
export function applyMethods(ctx: OrderContext) {
  const { store, now, payments } = ctx

  /**
   * Grants the order's plan once (B-order-6): the grant carries the order's idempotency key, so a
   * second instance, a repeated notification or a notification under a new id finds the key taken
   * and answers the authorization the first one created. The scene's device is woken in the same
   * commit (B-order-7): a write of the scene is what every store tells its waiters.
   */
  async function grantOnce(order: OrderRecord): Promise<GrantOutcome> {
    const key = grantKeyOf(order.outTradeNo)
    const fingerprint = fingerprintOf('grant', ['order', order.outTradeNo])
    return ctx.commitLoop(async () => {
      const loaded = await store.load({ userId: order.userId, idempotencyKey: key, sceneStr: order.sceneStr ?? undefined })
      if (isRepeat(loaded.idempotency, fingerprint)) {
        return { user: null, plan: answer<GrantOutcome>({ authorizationId: loaded.idempotency.authorizationId as number, granted: false }) }
      }
      const at = now()
      const grant = planGrant({ spec: { userId: order.userId, ...grantOf(order), source: 'purchase' }, user: loaded.user, now: at, idempotency: { key, fingerprint } })
      const scene = loaded.scene
      const changes: ChangeSet | null =
        grant.changes !== null && scene !== null && scene.status === 'authorized' && scene.userId === order.userId
          ? { ...grant.changes, scene: { op: 'update', scene: { ...scene, version: scene.version + 1 }, expectedVersion: scene.version } }
          : grant.changes
      const plan: Plan<GrantOutcome> = { changes, finish: (ids) => ({ authorizationId: grant.finish(ids).id, granted: true }) }
      return { user: loaded.user, plan }
    })
  }

  /** Tells `onPaymentRejected` and answers `rejected`. */
  function reject(kind: 'payment' | 'refund', report: { outTradeNo: string; mchid: string }, amountFen: number, reason: ReturnType<typeof paymentRejection> & string) {
    ctx.callHook(() => ctx.hooks.onPaymentRejected?.({ kind, orderId: report.outTradeNo, reason, mchid: report.mchid, amountFen }))
    return { result: 'rejected' as const, orderId: report.outTradeNo, reason }
  }

  async function applyPayment(input: ProviderTransaction): Promise<PaymentOutcome> {
    const report = parseInput(providerTransaction, input)
    const orderId = report.outTradeNo
    const order = await store.loadOrder(orderId)
    const rejection = paymentRejection(order, report, payments.provider.merchant)
    if (rejection !== null || order === null) return reject('payment', report, report.amount.total, rejection ?? 'unknown_order')
    if (!isPaidState(report.tradeState)) return { result: 'not_paid', orderId }
    // Applied before, or refunded in full before its payment was ever applied: nothing to grant.
    if (order.status === 'paid' || order.status === 'refunded') return { result: 'already_applied', orderId, authorizationId: order.authorizationId }
    // Open, or closed here while the payer was paying: the money was taken, so the plan is granted.
    const { authorizationId, granted } = await grantOnce(order)
    await updateOrder(
      store,
      orderId,
      (current) => (current.status === 'paid' || current.status === 'refunded' ? null : markPaid(current, { transactionId: report.transactionId, authorizationId, now: now() })),
      order,
    )
    if (!granted) return { result: 'already_applied', orderId, authorizationId }
    ctx.callHook(() => ctx.hooks.onOrderPaid?.({ orderId, userId: order.userId, planId: order.planId, authorizationId, transactionId: report.transactionId }))
    return { result: 'granted', orderId, authorizationId }
  }

  /**
   * Takes back what a fully refunded order bought (B-order-9). Safe to repeat: a revoked
   * authorization is answered unchanged, and one already used up (expired, exhausted) has nothing
   * left to take back. Answers the authorization revoked, or null.
   */
  async function takeBack(order: OrderRecord): Promise<number | null> {
    if (order.status !== 'refunded' || order.authorizationId === null) return null
    try {
      await ctx.revokeAuthorization({ authorizationId: order.authorizationId, reason: 'refund' })
      return order.authorizationId
    } catch (error) {
      if (error instanceof ScanAuthError && error.code === 'invalid_request') return null
      throw error
    }
  }

  async function applyRefund(input: ProviderRefund): Promise<RefundOutcome> {
    const report = parseInput(providerRefund, input)
    const orderId = report.outTradeNo
    let order = await store.loadOrder(orderId)
    const rejection = refundRejection(order, report, payments.provider.merchant)
    if (rejection !== null || order === null) return reject('refund', report, report.amount.total, rejection ?? 'unknown_order')
    if (report.refundStatus !== 'SUCCESS') return { result: 'not_refunded', orderId }
    if (hasRefund(order, report.outRefundNo)) {
      // Recorded before; a crash may have come between the record and the revocation, so make sure.
      await takeBack(order)
      return { result: 'already_applied', orderId }
    }
    if (order.authorizationId === null && order.status !== 'refunded') {
      // The payment never reached us (its notification is late or lost): apply it first, so that a
      // full refund takes back what the payment bought instead of leaving it granted later.
      const paid = await payments.provider.queryOrder(orderId)
      if (paid !== null && isPaidState(paid.tradeState)) await applyPayment(paid)
    }
    // Whether this call wrote the refund: a delivery racing another one of the same refund finds it
    // recorded on its retry, and answers already_applied like any repeat (B-order-9).
    let recorded = false
    const change = (current: OrderRecord): OrderRecord | null => {
      recorded = !hasRefund(current, report.outRefundNo)
      return recorded ? withRefund(current, report, now()).order : null
    }
    order = (await updateOrder(store, orderId, change)) as OrderRecord
    const revoked = await takeBack(order)
    if (!recorded) return { result: 'already_applied', orderId }
    return { result: order.status === 'refunded' ? 'refunded' : 'partially_refunded', orderId, revokedAuthorizationId: revoked }
  }

  return { applyPayment, applyRefund }
}
