/**
 * Opening an order (docs/behaviour.md, B-order-2…4, B-order-12, B-order-13): find the buyer, count
 * the purchase (B-rate-10…12), reuse the open order of the same plan and scene or close the open
 * orders this purchase replaces (the same scene's, or the same user's session orders) at the payment
 * service, then open a new one and ask the service for its code. Nothing reaches the service before
 * the input checks and the limits pass.
 *
 * @module
 */
import type { PurchaseInput, PurchaseResult } from './api'
import type { JsapiPayParameters, Plan, ProviderCloseResult, ProviderTransaction } from './provider'
import { ScanAuthError } from '../errors'
import { newOrderId } from '../service/random'
import type { OrderChannel, OrderRecord } from '../store/records'
import { isClosedState, isPaidState, markClosed, mayReplace, mayReuse, openOrder } from '../rules/orders'
import { SECOND } from '../rules/time'
import { parseInput } from '../service/validation'
import { iso } from '../service/views'
import { findBuyer, type Buyer } from './buyer'
import { updateOrder, type OrderContext } from './context'
import { isPlanId, purchaseInput } from './validation'

/** How long the per-user purchase lock holds when its holder dies before releasing it. */
const PURCHASE_LOCK_MS = 30_000

/** The most open orders of one user a purchase looks at (normally one; a few after races or failures). */
const MAX_OPEN_ORDERS_PER_USER = 100

/** A JSAPI order opened or reused for the phone's cashier (B-phone-1). */
export interface JsapiPurchase {
  /** The order, as stored. */
  order: OrderRecord
  /** The cashier's six parameters, signed by the provider. */
  parameters: JsapiPayParameters
}

/** What a phone purchase names: the buyer the phone page identified, and the plan. */
export interface JsapiPurchaseInput {
  /** The buyer, and the scene whose device waits (null for a renewal without a device). */
  buyer: Buyer
  /** The buyer's openid: WeChat Pay's `payer.openid`. */
  openid: string
  /** The plan's id (unknown: `plan_not_found`). */
  plan: string
  /** The phone's address, for the per-address purchase limit (B-rate-11). */
  clientAddress?: string
}

/**
 * The operations that open orders: `purchase` (a Native code for the device) and `purchaseJsapi`
 * (WeChat's cashier on the phone, B-phone-1). `applyPayment` settles an order found paid while
 * closing it.
 */
export function purchaseMethods(ctx: OrderContext, applyPayment: (report: ProviderTransaction) => Promise<unknown>) {
  const { store, now, payments, limitPurchase } = ctx
  const { provider } = payments

  /** Asks the provider, turning its failure into `payment_provider_failed` (502) with the reason. */
  async function askProvider<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new ScanAuthError('payment_provider_failed', `The payment service failed to ${what}: ${reason}`, { cause: error })
    }
  }

  /**
   * Closes an open order that this purchase replaces (B-order-4), at the service first and then
   * here, so that the payer can never pay both codes of one device. One found paid meanwhile is
   * applied instead.
   */
  async function closeReplaced(order: OrderRecord): Promise<void> {
    let closed: ProviderCloseResult
    try {
      closed = await provider.closeOrder(order.outTradeNo)
    } catch (error) {
      closed = await afterFailedClose(order, error)
    }
    if (closed === 'paid') {
      const report = await askProvider('query a paid order', () => provider.queryOrder(order.outTradeNo))
      if (report !== null && isPaidState(report.tradeState)) await applyPayment(report)
      return
    }
    await updateOrder(store, order.outTradeNo, (current) => (current.status === 'open' ? markClosed(current, now()) : null))
  }

  /**
   * A close the service refused: an order whose opening never reached it (unknown there) or that it
   * closed already needs no closing, and one it reports paid is applied; any other refusal blocks
   * the new order, so that a replaced code and its replacement are never payable at once (B-order-4).
   */
  async function afterFailedClose(order: OrderRecord, error: unknown): Promise<ProviderCloseResult> {
    const known = await askProvider('query a replaced order', () => provider.queryOrder(order.outTradeNo))
    if (known === null || isClosedState(known.tradeState)) return 'closed'
    if (isPaidState(known.tradeState)) return 'paid'
    return askProvider('close a replaced order', () => Promise.reject(error))
  }

  /** Asks the service for the order's code: the first time it opens it, later a fresh code for it. */
  async function codeFor(order: OrderRecord): Promise<PurchaseResult> {
    const request = { outTradeNo: order.outTradeNo, description: order.description, amountFen: order.amountFen, expiresAt: order.expiresAt }
    const { codeUrl } = await askProvider('open the order', () => provider.createNativeOrder(request))
    return { orderId: order.outTradeNo, codeUrl, amountFen: order.amountFen, expiresAt: iso(order.expiresAt) }
  }

  /** The cashier's parameters of a JSAPI order: the first time it opens it, later those of the same order. */
  async function cashierFor(order: OrderRecord, payerOpenid: string): Promise<JsapiPurchase> {
    const createJsapiOrder = provider.createJsapiOrder?.bind(provider)
    if (createJsapiOrder === undefined) throw new ScanAuthError('payments_not_configured', 'The payment provider cannot open JSAPI orders (createJsapiOrder)')
    const request = { outTradeNo: order.outTradeNo, description: order.description, amountFen: order.amountFen, expiresAt: order.expiresAt, payerOpenid }
    const parameters = await askProvider('open the order', () => createJsapiOrder(request))
    return { order, parameters }
  }

  /**
   * The open order this purchase reuses, or a new one stored before the service hears of it; every
   * other open order it replaces is closed first (B-order-3, B-order-4). A purchase replaces orders
   * of either channel: one device never has two payable orders, whichever phone would pay them.
   */
  async function openOrReuse(plan: Plan, buyer: Buyer, channel: OrderChannel): Promise<OrderRecord> {
    // A scene's purchase reads that scene's orders only; a session's, the user's (B-order-4).
    const query = buyer.sceneStr === null ? { userId: buyer.userId } : { userId: buyer.userId, sceneStr: buyer.sceneStr }
    const open = await store.listOpenOrders({ ...query, limit: MAX_OPEN_ORDERS_PER_USER })
    let reuse: OrderRecord | null = null
    for (const order of open) {
      // Another scene's order, which another device shows, or a session's stays open and payable.
      if (!mayReplace(order, buyer.sceneStr)) continue
      if (reuse === null && mayReuse(order, plan, buyer.sceneStr, channel, now())) reuse = order
      else await closeReplaced(order)
    }
    if (reuse !== null) return reuse
    const order = openOrder({ outTradeNo: newOrderId(), userId: buyer.userId, plan, sceneStr: buyer.sceneStr, channel, now: now(), ttlMs: payments.orderTtlMinutes * 60 * SECOND })
    // Stored before the service hears of it: whatever happens next, the order is known here, so a
    // payment of it is never refused as unknown and the reconciler can settle it (B-order-10).
    if (!(await store.saveOrder({ op: 'insert', order }))) throw new ScanAuthError('conflict', 'order id collision, try again')
    return order
  }

  /** The plan a purchase names, or `plan_not_found`. */
  function planOf(planId: string): Plan {
    const plan = isPlanId(planId) ? payments.plans.find((p) => p.id === planId) : undefined
    if (plan === undefined) throw new ScanAuthError('plan_not_found', `No plan with id ${JSON.stringify(planId)}`)
    return plan
  }

  /**
   * Counts the purchase, then runs `open` under the buyer's purchase lock. Counted once the buyer may
   * buy, before the lock and the service: a refused call opens, closes and stores nothing, and a
   * stranger refused earlier spends none of the buyer's purchases (B-rate-12).
   */
  async function underPurchaseLock<T>(buyer: Buyer, clientAddress: string | undefined, open: () => Promise<T>): Promise<T> {
    await limitPurchase({ userId: buyer.userId, clientAddress })
    // One purchase per user at a time: two taps must not open two chargeable orders (B-order-3).
    const lock = `purchase:${buyer.userId}`
    const at = now()
    if ((await store.incrementCounter(lock, at + PURCHASE_LOCK_MS, at)) > 1) {
      throw new ScanAuthError('purchase_in_progress', 'Another purchase of this user is being opened; try again in a moment')
    }
    try {
      return await open()
    } finally {
      await store.deleteCounter(lock)
    }
  }

  return {
    async purchase(input: PurchaseInput): Promise<PurchaseResult> {
      const { sceneStr, pollSecret, sessionToken, plan: planId, clientAddress } = parseInput(purchaseInput, input)
      const plan = planOf(planId)
      const buyer = await findBuyer(store, { sceneStr, pollSecret, sessionToken }, now())
      const result = await underPurchaseLock(buyer, clientAddress, async () => codeFor(await openOrReuse(plan, buyer, 'native')))
      // The device may say that the phone which scanned got a link to buy there (B-phone-2).
      return payments.phone !== undefined && buyer.phoneTicket === true ? { ...result, phoneLink: true } : result
    },

    /** A JSAPI order for the buyer a phone page identified (B-phone-1); the caller checked who buys. */
    async purchaseJsapi(input: JsapiPurchaseInput): Promise<JsapiPurchase> {
      const plan = planOf(input.plan)
      return underPurchaseLock(input.buyer, input.clientAddress, async () => cashierFor(await openOrReuse(plan, input.buyer, 'jsapi'), input.openid))
    },
  }
}
