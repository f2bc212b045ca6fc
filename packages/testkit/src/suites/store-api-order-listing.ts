/**
 * `Store.listOrders`, the operator's listing of orders of any status: every filter (user, status,
 * the time range `[createdFrom, createdBefore)`) and every combination of them, the order
 * `(createdAt, outTradeNo)`, keyset pages after an exclusive cursor, checked against a model of
 * what was written; orders follow their updates (status, user, time) and leave with a purge.
 * Registered by `store-api-operator-reads.ts`.
 */
import { describe, expect, it } from 'vitest'
import type { Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { MINUTE, T0, tradeNo } from './order-fixtures'

/** The operator reads a store must have. */
type OperatorRead = 'listLiveSessions' | 'listUsers' | 'listOrders' | 'schemaState'

/** The store's operator read `name`, bound to it; fails the test when the store has none. */
export function operatorRead<K extends OperatorRead>(store: Store, name: K): NonNullable<Store[K]> {
  const method = store[name]
  expect(method, `the store has ${name}`).toBeTypeOf('function')
  return (method as (...args: never[]) => unknown).bind(store) as NonNullable<Store[K]>
}

type OrderRecord = NonNullable<Awaited<ReturnType<NonNullable<Store['loadOrder']>>>>
type OrderListQuery = Parameters<NonNullable<Store['listOrders']>>[0]

const DAY = 24 * 60 * MINUTE
const STATUSES = ['open', 'paid', 'closed', 'refunded'] as const

/**
 * Order `i` of the model: users 1–3, each status in turn (a paid or refunded one with its money),
 * five times shared by several orders, and outTradeNos that do not follow the times.
 */
function modelOrder(i: number): OrderRecord {
  const status = STATUSES[i % 4] as OrderRecord['status']
  const createdAt = T0 + ((i * 7) % 5) * MINUTE
  const paid = status === 'paid' || status === 'refunded'
  return {
    outTradeNo: tradeNo(`${(i * 11) % 23}-${i}`),
    userId: 1 + (i % 3),
    planId: 'month',
    description: '月卡',
    amountFen: 1500,
    grant: { type: 'time', days: 30 },
    sceneStr: i % 2 === 0 ? `scene-${i}` : null,
    channel: i % 3 === 0 ? 'jsapi' : 'native',
    status,
    createdAt,
    expiresAt: createdAt + 15 * MINUTE,
    updatedAt: createdAt,
    paidAt: paid ? createdAt + MINUTE : null,
    transactionId: paid ? `tx-${i}` : null,
    authorizationId: paid ? 100 + i : null,
    refundedFen: status === 'refunded' ? 1500 : 0,
    refunds: status === 'refunded' ? [{ outRefundNo: `RF${i}`, refundId: `r-${i}`, amountFen: 1500, at: createdAt + 2 * MINUTE }] : [],
    version: 1,
  }
}

/** Oldest first: by `createdAt`, then `outTradeNo` (byte order, which `<` is for ASCII). */
function byTime(a: OrderRecord, b: OrderRecord): number {
  return a.createdAt - b.createdAt || (a.outTradeNo < b.outTradeNo ? -1 : a.outTradeNo > b.outTradeNo ? 1 : 0)
}

/** What `listOrders` must answer for `query` (without its limit) over `model`. */
function expected(model: OrderRecord[], query: Omit<OrderListQuery, 'limit'>): OrderRecord[] {
  return model
    .filter((o) => query.userId === undefined || o.userId === query.userId)
    .filter((o) => query.status === undefined || o.status === query.status)
    .filter((o) => query.createdFrom === undefined || o.createdAt >= query.createdFrom)
    .filter((o) => query.createdBefore === undefined || o.createdAt < query.createdBefore)
    .filter((o) => query.after === undefined || byTime(o, { ...o, createdAt: query.after.createdAt, outTradeNo: query.after.outTradeNo }) > 0)
    .sort(byTime)
}

/** Every page of `query` with pages of `size`, each after the last order of the one before, up to the first short page. */
async function allPages(list: NonNullable<Store['listOrders']>, query: Omit<OrderListQuery, 'limit'>, size: number): Promise<OrderRecord[][]> {
  const pages: OrderRecord[][] = []
  let after = query.after
  for (;;) {
    const page = await list(after === undefined ? { ...query, limit: size } : { ...query, after, limit: size })
    pages.push(page)
    const last = page[page.length - 1]
    if (page.length < size || last === undefined) return pages
    after = { createdAt: last.createdAt, outTradeNo: last.outTradeNo }
  }
}

/** The queries checked against the model: every filter alone and together, bounds on and between stored times. */
const QUERIES: Array<Omit<OrderListQuery, 'limit'>> = [
  {},
  { userId: 2 },
  { status: 'paid' },
  { status: 'closed' },
  { userId: 1, status: 'open' },
  { userId: 3, status: 'refunded' },
  { createdFrom: T0 + MINUTE },
  { createdFrom: T0 + MINUTE + 0.5 },
  { createdBefore: T0 + 3 * MINUTE },
  { createdBefore: T0 + 3 * MINUTE + 0.5 },
  { createdFrom: T0 + MINUTE, createdBefore: T0 + 3 * MINUTE, status: 'open' },
  { userId: 2, createdFrom: T0 + 2 * MINUTE },
  { userId: 1, status: 'paid', createdBefore: T0 + 4 * MINUTE },
  { createdBefore: T0 },
  { createdFrom: T0 + 5 * MINUTE },
  { createdFrom: T0 + 3 * MINUTE, createdBefore: T0 + 3 * MINUTE },
  { userId: 99 },
  { after: { createdAt: T0 + 2 * MINUTE, outTradeNo: tradeNo('1') } },
  { after: { createdAt: T0 + 2 * MINUTE + 0.5, outTradeNo: '' }, status: 'open' },
  { after: { createdAt: T0 - 1, outTradeNo: 'ZZ' }, userId: 3 },
  { after: { createdAt: T0 + 4 * MINUTE, outTradeNo: 'ZZ' } },
]

/** Registers the cases of `listOrders` (see the module comment). */
export function storeOrderListingSuite(get: () => ContractContext): void {
  describe('Store API: listOrders', () => {
    it('answers every filter and combination, oldest first by (createdAt, outTradeNo), in pages after an exclusive cursor', async () => {
      const store = get().store
      const list = operatorRead(store, 'listOrders')
      expect(await list({ limit: 1000 })).toEqual([])
      const model = Array.from({ length: 26 }, (_, i) => modelOrder(i))
      for (const o of model) expect(await store.saveOrder?.({ op: 'insert', order: o }), `insert ${o.outTradeNo}`).toBe(true)
      // Each order exactly as loadOrder answers it.
      for (const o of model) expect(await store.loadOrder?.(o.outTradeNo)).toStrictEqual(o)

      for (const query of QUERIES) {
        const want = expected(model, query)
        expect(await list({ ...query, limit: 1000 }), JSON.stringify(query)).toStrictEqual(want)
        const pages = await allPages(list, query, 4)
        expect(pages.flat(), `pages of ${JSON.stringify(query)}`).toStrictEqual(want)
        // Every page full but the last, which is short (empty when the total is a multiple of 4).
        expect(pages.map((p) => p.length)).toEqual([...Array.from({ length: Math.floor(want.length / 4) }, () => 4), want.length % 4])
      }
      expect(expected(model, { status: 'closed' }).length).toBeGreaterThan(4)
    })

    it('follows updates (status, user, time) and leaves out what a purge deleted', async () => {
      const store = get().store
      const list = operatorRead(store, 'listOrders')
      const model = Array.from({ length: 12 }, (_, i) => modelOrder(i))
      for (const o of model) await store.saveOrder?.({ op: 'insert', order: o })
      const update = async (o: OrderRecord, change: Partial<OrderRecord>) => {
        const next = { ...o, ...change, version: o.version + 1 }
        expect(await store.saveOrder?.({ op: 'update', order: next, expectedVersion: o.version })).toBe(true)
        model[model.indexOf(o)] = next
      }
      const open = model.find((o) => o.status === 'open') as OrderRecord
      await update(open, { status: 'paid', paidAt: open.createdAt + MINUTE, updatedAt: open.createdAt + MINUTE })
      const closed = model.find((o) => o.status === 'closed' && o.userId !== 3) as OrderRecord
      // Another user and another time (the store files an order by what it holds now).
      await update(closed, { userId: 3, createdAt: T0 + 9 * MINUTE, expiresAt: T0 + 10 * MINUTE })
      for (const query of [{}, { status: 'open' as const }, { status: 'paid' as const }, { userId: closed.userId }, { userId: 3 }, { createdFrom: T0 + 5 * MINUTE }]) {
        expect(await list({ ...query, limit: 1000 }), JSON.stringify(query)).toStrictEqual(expected(model, query))
      }

      // Years later every closed order that never took money is purged (B-order-purge); the rest stay listed.
      const purged = await store.purgeExpired?.({ now: T0 + 3650 * DAY })
      const gone = model.filter((o) => o.status === 'closed')
      expect(purged?.orders).toBe(gone.length)
      const kept = model.filter((o) => o.status !== 'closed')
      expect(await list({ limit: 1000 })).toStrictEqual(expected(kept, {}))
      expect(await list({ status: 'closed', limit: 1000 })).toEqual([])
      for (const userId of [1, 2, 3]) expect(await list({ userId, limit: 1000 })).toStrictEqual(expected(kept, { userId }))
    })
  })
}
