/**
 * What the order operations share with the rest of the service, and the small steps they all use:
 * reading an order, writing it with its version checked, and telling a hook.
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import type { CommitLoop } from '../service/commit-loop'
import { ScanAuthError } from '../errors'
import type { ScanAuthHooks } from '../service/options'
import type { ResolvedPayments } from './options'
import type { PurchaseLimiter } from '../service/rate-limiter'
import type { OrderRecord } from '../store/records'
import type { Store } from '../store/contract'

/** A store with the order methods present (checked once when the service is created). */
export type OrderStore = Store & Required<Pick<Store, 'loadOrder' | 'saveOrder' | 'listOpenOrders'>>

/** Everything an order operation may need. */
export interface OrderContext {
  store: OrderStore
  now: () => number
  commitLoop: CommitLoop
  payments: ResolvedPayments
  hooks: ScanAuthHooks
  /** Runs a hook so that a throwing hook never fails the operation (the service's `callHook`). */
  callHook(call: () => void): void
  /** The service's revocation, for a full refund (B-order-9). */
  revokeAuthorization: ScanAuth['revokeAuthorization']
  /** The purchase limits of `rateLimits` (B-rate-10…12), counted in the store. */
  limitPurchase: PurchaseLimiter
}

/** Whether a store has the three order methods. */
export function hasOrderMethods(store: Store): store is OrderStore {
  return typeof store.loadOrder === 'function' && typeof store.saveOrder === 'function' && typeof store.listOpenOrders === 'function'
}

/** How many times an order write is planned again after another writer changed the order. */
const MAX_ORDER_ATTEMPTS = 50

/**
 * Reads the order, lets `change` decide its next state (null: nothing to write), and writes it with
 * its version checked; on a lost race, reads and decides again. Answers the order as stored after
 * the call (or as read, when nothing was written), or null for an unknown order. `known` is the
 * order as the caller just read it: the first attempt decides on it without a read of its own (the
 * version check catches a change since), which spares a round trip on the paid path.
 */
export async function updateOrder(
  store: OrderStore,
  outTradeNo: string,
  change: (order: OrderRecord) => OrderRecord | null,
  known?: OrderRecord,
): Promise<OrderRecord | null> {
  for (let attempt = 0; attempt < MAX_ORDER_ATTEMPTS; attempt++) {
    const order = attempt === 0 && known !== undefined ? known : await store.loadOrder(outTradeNo)
    if (order === null) return null
    const next = change(order)
    if (next === null) return order
    if (await store.saveOrder({ op: 'update', order: next, expectedVersion: order.version })) return next
  }
  throw new ScanAuthError('conflict', `Too many concurrent changes to order ${outTradeNo}; nothing was changed`)
}
