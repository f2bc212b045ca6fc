/**
 * The reconciler (docs/behaviour.md, B-order-10): asks the payment service about every open order
 * old enough, so that a payment whose notification never arrived is still granted and an order past
 * its deadline is closed there and here. A cron job every few minutes; safe on several instances at
 * once, since every step it takes is one a notification could take too.
 *
 * @module
 */
import type { ReconcileOptions, ReconcileResult } from './api'
import type { ProviderTransaction } from './provider'
import type { OrderRecord } from '../store/records'
import { isClosedState, isPaidState, isPastDeadline, markClosed } from '../rules/orders'
import { SECOND } from '../rules/time'
import { parseInput } from '../service/validation'
import { updateOrder, type OrderContext } from './context'
import { reconcileOptions } from './validation'

/** Orders read per store call. */
const PAGE = 100

/** What reconciling one order did. */
type Settled = 'granted' | 'closed' | 'open'

/** The reconciler over the order operations. */
export function reconcileMethod(ctx: OrderContext, applyPayment: (report: ProviderTransaction) => Promise<{ result: string }>) {
  const { store, payments } = ctx
  const { provider } = payments

  /** Closes the order here once the service can no longer take a payment for it. */
  async function closeHere(order: OrderRecord, at: number): Promise<Settled> {
    await updateOrder(store, order.outTradeNo, (current) => (current.status === 'open' ? markClosed(current, at) : null))
    return 'closed'
  }

  async function settle(order: OrderRecord, at: number): Promise<Settled> {
    const report = await provider.queryOrder(order.outTradeNo)
    if (report !== null && isPaidState(report.tradeState)) {
      // Granted now, or completed now after a grant whose order write was lost: settled as paid.
      const outcome = await applyPayment(report)
      if (outcome.result === 'rejected') throw new Error(`the payment service's report of order ${order.outTradeNo} was rejected (onPaymentRejected was told)`)
      return 'granted'
    }
    // Never opened there (its creation failed), or closed there: nothing can be paid any more.
    if (report === null) return isPastDeadline(order, at) ? closeHere(order, at) : 'open'
    if (isClosedState(report.tradeState)) return closeHere(order, at)
    if (!isPastDeadline(order, at)) return 'open'
    // Past its deadline and unpaid: close it there first (B-order-4), unless it was paid meanwhile.
    if ((await provider.closeOrder(order.outTradeNo)) === 'paid') {
      const paid = await provider.queryOrder(order.outTradeNo)
      if (paid !== null && isPaidState(paid.tradeState) && (await applyPayment(paid)).result === 'granted') return 'granted'
      return 'closed'
    }
    return closeHere(order, at)
  }

  return async function reconcileOrders(options: ReconcileOptions = {}): Promise<ReconcileResult> {
    const { now: given, minAgeSeconds, limit } = parseInput(reconcileOptions, options)
    const at = given ?? ctx.now()
    const result: ReconcileResult = { checked: 0, granted: 0, closed: 0, open: 0, failed: 0, more: false, errors: [] }
    let after: { createdAt: number; outTradeNo: string } | undefined
    while (result.checked < limit) {
      const want = Math.min(PAGE, limit - result.checked)
      const page = await store.listOpenOrders({ createdAtOrBefore: at - minAgeSeconds * SECOND, after, limit: want })
      for (const order of page) {
        result.checked++
        try {
          result[await settle(order, at)]++
        } catch (error) {
          // The service or the store failed for this order: the next run tries it again.
          result.failed++
          result.errors.push({ orderId: order.outTradeNo, message: error instanceof Error ? error.message : String(error) })
        }
      }
      const last = page[page.length - 1]
      if (page.length < want || last === undefined) return result
      after = { createdAt: last.createdAt, outTradeNo: last.outTradeNo }
    }
    // Stopped by `limit` with a full last page: there may be more.
    result.more = (await store.listOpenOrders({ createdAtOrBefore: at - minAgeSeconds * SECOND, after, limit: 1 })).length > 0
    return result
  }
}
