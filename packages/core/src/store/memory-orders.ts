/**
 * The orders of a `MemoryStore`: a map by `outTradeNo`, searched by walking the open ones (all of
 * them for `listOrders`). A memory store serves one process with few orders, so a walk is cheaper
 * than indexes kept in step; SQLite, Redis and PostgreSQL index them. A purge walks the closed ones
 * (docs/behaviour.md, B-order-purge).
 *
 * @module
 */
import type { OrderRecord } from './records'
import { mayPurge, orderNeededUntil } from '../rules/retention'
import type { OpenOrderQuery, OrderWrite } from './contract'
import type { OrderListQuery } from './operator-reads'

/** Deep copy, so that no caller holds the stored record (its `refunds` and `grant` included). */
function copyOrder(order: OrderRecord): OrderRecord {
  return { ...order, grant: { ...order.grant }, refunds: order.refunds.map((r) => ({ ...r })) }
}

/** Oldest first: by `createdAt`, then `outTradeNo` (the order {@link OpenOrderQuery} promises). */
function orderOfOrders(a: { createdAt: number; outTradeNo: string }, b: { createdAt: number; outTradeNo: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt
  return a.outTradeNo < b.outTradeNo ? -1 : a.outTradeNo > b.outTradeNo ? 1 : 0
}

/** The order part of the Store contract over maps (see `Store.loadOrder`, `saveOrder`, `listOpenOrders`). */
export class MemoryOrders {
  private readonly orders = new Map<string, OrderRecord>()
  /** The `outTradeNo`s of open orders, so a listing never walks the paid and closed ones. */
  private readonly open = new Set<string>()
  /** The `outTradeNo`s of closed orders, so a purge never walks the open, paid and refunded ones. */
  private readonly closed = new Set<string>()

  load(outTradeNo: string): OrderRecord | null {
    const order = this.orders.get(outTradeNo)
    return order === undefined ? null : copyOrder(order)
  }

  save(write: OrderWrite): boolean {
    const stored = this.orders.get(write.order.outTradeNo)
    if (write.op === 'insert' ? stored !== undefined : stored?.version !== write.expectedVersion) return false
    const order = copyOrder(write.order)
    this.orders.set(order.outTradeNo, order)
    if (order.status === 'open') this.open.add(order.outTradeNo)
    else this.open.delete(order.outTradeNo)
    if (order.status === 'closed') this.closed.add(order.outTradeNo)
    else this.closed.delete(order.outTradeNo)
    return true
  }

  listOpen(query: OpenOrderQuery): OrderRecord[] {
    const found: OrderRecord[] = []
    for (const no of this.open) {
      const order = this.orders.get(no) as OrderRecord
      if (query.userId !== undefined && order.userId !== query.userId) continue
      if (query.sceneStr !== undefined && order.sceneStr !== query.sceneStr) continue
      if (query.createdAtOrBefore !== undefined && order.createdAt > query.createdAtOrBefore) continue
      if (query.after !== undefined && orderOfOrders(order, query.after) <= 0) continue
      found.push(order)
    }
    return found.sort(orderOfOrders).slice(0, query.limit).map(copyOrder)
  }

  /** Orders of any status that match (see `Store.listOrders`): a walk over every order, then a sort. */
  list(query: OrderListQuery): OrderRecord[] {
    const found: OrderRecord[] = []
    for (const order of this.orders.values()) {
      if (query.userId !== undefined && order.userId !== query.userId) continue
      if (query.status !== undefined && order.status !== query.status) continue
      if (query.createdFrom !== undefined && !(order.createdAt >= query.createdFrom)) continue
      if (query.createdBefore !== undefined && !(order.createdAt < query.createdBefore)) continue
      if (query.after !== undefined && orderOfOrders(order, query.after) <= 0) continue
      found.push(order)
    }
    return found.sort(orderOfOrders).slice(0, Math.max(0, query.limit)).map(copyOrder)
  }

  /**
   * A walk over the closed orders' `outTradeNo`s for a purge. A Set iterator survives deletions and
   * sees orders closed meanwhile, so one walk spans the batches of a purge.
   */
  closedWalk(): Iterator<string> {
    return this.closed.values()
  }

  /** Deletes the order when core's retention rule lets it go at `cutoff` (B-order-purge); answers whether it did. */
  purge(outTradeNo: string, cutoff: number): boolean {
    const order = this.orders.get(outTradeNo)
    if (order === undefined) return false
    const neededUntil = orderNeededUntil(order)
    if (neededUntil === null || !mayPurge(neededUntil, cutoff)) return false
    this.orders.delete(outTradeNo)
    this.closed.delete(outTradeNo)
    return true
  }

  /** Every order, for snapshots. */
  all(): OrderRecord[] {
    return [...this.orders.values()].map(copyOrder)
  }
}
