/**
 * The order operations of a scanauth instance (docs/behaviour.md, B-order-1…10): the catalog,
 * purchases, applying payment and refund reports, the reconciler, and reading orders. Without the
 * `payments` option they answer `payments_not_configured` (and the catalog is empty).
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import { ScanAuthError } from '../errors'
import type { OrderView, PlanView } from './api'
import { ORDER_ID_PATTERN, SCENE_STR_PATTERN } from '../service/random'
import type { OrderRecord } from '../store/records'
import { isPastDeadline } from '../rules/orders'
import { iso } from '../service/views'
import { applyMethods } from './apply'
import type { OrderContext } from './context'
import { purchaseMethods } from './purchase'
import { reconcileMethod } from './reconcile'

export type OrderMethods = Pick<ScanAuth, 'listPlans' | 'purchase' | 'applyPayment' | 'applyRefund' | 'reconcileOrders' | 'getOrder' | 'openOrderOfScene'>

/** An order as the public API shows it. */
export function orderView(order: OrderRecord): OrderView {
  return {
    orderId: order.outTradeNo,
    userId: order.userId,
    planId: order.planId,
    amountFen: order.amountFen,
    status: order.status,
    sceneStr: order.sceneStr,
    channel: order.channel,
    createdAt: iso(order.createdAt),
    expiresAt: iso(order.expiresAt),
    paidAt: order.paidAt === null ? null : iso(order.paidAt),
    transactionId: order.transactionId,
    authorizationId: order.authorizationId,
    refundedFen: order.refundedFen,
  }
}

/** The order operations over a context, or the ones that say payments are not configured. */
export function orderMethods(ctx: OrderContext | null): OrderMethods {
  if (ctx === null) {
    const off = async (): Promise<never> => {
      throw new ScanAuthError('payments_not_configured', 'Payments are not configured: createScanAuth was given no payments option')
    }
    return { listPlans: () => [], purchase: off, applyPayment: off, applyRefund: off, reconcileOrders: off, getOrder: off, openOrderOfScene: async () => null }
  }
  const { store, now, payments } = ctx
  const { applyPayment, applyRefund } = applyMethods(ctx)
  const plans: PlanView[] = payments.plans.map((p) => ({ id: p.id, description: p.description, amountFen: p.amountFen, grant: { ...p.grant } }))
  return {
    listPlans: () => plans.map((p) => ({ ...p, grant: { ...p.grant } })),
    purchase: purchaseMethods(ctx, applyPayment).purchase,
    applyPayment,
    applyRefund,
    reconcileOrders: reconcileMethod(ctx, applyPayment),
    async getOrder(orderId) {
      if (typeof orderId !== 'string' || !ORDER_ID_PATTERN.test(orderId)) return null
      const order = await store.loadOrder(orderId)
      return order === null ? null : orderView(order)
    },
    async openOrderOfScene(sceneStr) {
      if (typeof sceneStr !== 'string' || !SCENE_STR_PATTERN.test(sceneStr)) return null
      const at = now()
      const open = await store.listOpenOrders({ sceneStr, limit: 10 })
      const live = open.filter((o) => !isPastDeadline(o, at))
      const latest = live[live.length - 1]
      return latest === undefined ? null : orderView(latest)
    },
  }
}
