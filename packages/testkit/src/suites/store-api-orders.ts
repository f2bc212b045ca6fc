/**
 * The Store's order methods (`loadOrder`, `saveOrder`, `listOpenOrders`), which the payments of
 * core are built on: an order round-trips exactly as written, an insert expects its `outTradeNo`
 * to be free and an update expects the stored version (both answer false and write nothing
 * otherwise, also when racing over several connections), `listOpenOrders` filters (AND), orders
 * and pages by `(createdAt, outTradeNo)` with an exclusive cursor, and an order's payment channel
 * (`native` or `jsapi`) is kept through every read and update. What `purgeExpired` does to
 * orders (B-order-purge) is in `store-api-order-purge.ts`, registered here.
 *
 * Every scanauth store has the order methods, so a store without them fails here rather than
 * skipping: a missing method is a bug of the store, not an option it took.
 *
 * The order types are taken from the `Store` interface itself so that this suite follows the
 * contract wherever core exports it from.
 */
import { describe, expect, it } from 'vitest'
import type { Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { MINUTE, openOrderAt, T0, tradeNo } from './order-fixtures'
import { operatorRead } from './store-api-order-listing'
import { storeOrderPurgeSuite } from './store-api-order-purge'

type OrderRecord = NonNullable<Awaited<ReturnType<NonNullable<Store['loadOrder']>>>>
type OrderWrite = Parameters<NonNullable<Store['saveOrder']>>[0]
type OpenOrderQuery = Parameters<NonNullable<Store['listOpenOrders']>>[0]

/** The three order methods of one store, bound to it. */
interface OrderMethods {
  load(outTradeNo: string): Promise<OrderRecord | null>
  save(write: OrderWrite): Promise<boolean>
  list(query: OpenOrderQuery): Promise<OrderRecord[]>
}

/** The store's order methods; fails the test when any is missing (every scanauth store has them). */
function ordersOf(store: Store): OrderMethods {
  expect(store.loadOrder, 'the store has loadOrder').toBeTypeOf('function')
  expect(store.saveOrder, 'the store has saveOrder').toBeTypeOf('function')
  expect(store.listOpenOrders, 'the store has listOpenOrders').toBeTypeOf('function')
  return {
    load: (outTradeNo) => (store.loadOrder as NonNullable<Store['loadOrder']>).call(store, outTradeNo),
    save: (write) => (store.saveOrder as NonNullable<Store['saveOrder']>).call(store, write),
    list: (query) => (store.listOpenOrders as NonNullable<Store['listOpenOrders']>).call(store, query),
  }
}

/** Inserts `o`, failing the test when the store refuses. */
async function insert(orders: OrderMethods, o: OrderRecord): Promise<OrderRecord> {
  expect(await orders.save({ op: 'insert', order: o }), `insert ${o.outTradeNo}`).toBe(true)
  return o
}

/** Replaces the stored `o` (at `o.version`) by `o` with `change` applied and the version bumped. */
async function update(orders: OrderMethods, o: OrderRecord, change: Partial<OrderRecord>): Promise<OrderRecord> {
  const next = { ...o, ...change, version: o.version + 1 }
  expect(await orders.save({ op: 'update', order: next, expectedVersion: o.version }), `update ${o.outTradeNo}`).toBe(true)
  return next
}

/** The `outTradeNo`s of a list answer, in its order. */
const ids = (list: OrderRecord[]) => list.map((o) => o.outTradeNo)

/** The store and up to three peers on the same backing data (just the store when it has none). */
async function connections(ctx: ContractContext): Promise<Store[]> {
  const stores = [ctx.store]
  const open = ctx.harness.openPeer
  if (open !== undefined) for (let i = 0; i < 3; i++) stores.push(await open.call(ctx.harness))
  return stores
}

/** Registers the order cases of the Store contract (see the module comment). */
export function storeOrderApiSuite(get: () => ContractContext): void {
  describe('Store API: orders', () => {
    it('has the three order methods, and loads an unknown order as null', async () => {
      const orders = ordersOf(get().store)
      expect(await orders.load(tradeNo(404))).toBeNull()
      expect(await orders.load('')).toBeNull()
      expect(await orders.list({ limit: 1000 })).toEqual([])
    })

    it('loads an inserted order exactly as written: every field, refunds, both grants, Unicode, large amounts', async () => {
      const orders = ordersOf(get().store)
      // A paid, partly refunded order with every nullable field set and amounts at the edge of
      // what a JS number holds exactly (a 64-bit column read back as a string or a float would show).
      const big = openOrderAt(tradeNo('BIG'), {
        userId: 2 ** 31 + 7, // past a 32-bit integer
        planId: 'plan/年卡 "gold"',
        amountFen: Number.MAX_SAFE_INTEGER,
        grant: { type: 'time', days: 366 },
        status: 'refunded',
        createdAt: T0 + 1,
        expiresAt: T0 + 2 * MINUTE + 3,
        updatedAt: T0 + 3 * MINUTE + 5,
        paidAt: T0 + MINUTE + 9,
        transactionId: '4200001234202601010123456789',
        authorizationId: 2 ** 40 + 3,
        refundedFen: Number.MAX_SAFE_INTEGER - 1,
        refunds: [
          { outRefundNo: 'RF1', refundId: '50300000012026010100000001', amountFen: 1, at: T0 + 4 * MINUTE },
          { outRefundNo: 'RF2', refundId: '50300000012026010100000002', amountFen: Number.MAX_SAFE_INTEGER - 3, at: T0 + 5 * MINUTE },
          { outRefundNo: 'RF3-退款', refundId: 'r-3', amountFen: 1, at: T0 + 5 * MINUTE }, // same time: order of the array kept
        ],
        version: 7,
      })
      // An unpaid points order of a session purchase (no scene), its description 127 characters of
      // CJK, astral and combining text, and characters that mean something to SQL and JSON.
      const description = `积分包😀e\u0301'"\\%_{}[]\n\t${'点'.repeat(100)}`.padEnd(127, '包')
      expect(description).toHaveLength(127)
      const points = openOrderAt(tradeNo('PTS'), {
        userId: 3,
        planId: 'points-100',
        description,
        amountFen: 0,
        grant: { type: 'points', points: 2 ** 31 },
        sceneStr: null,
      })
      // Half a day: a time grant need not be whole days (core asks only for whole seconds).
      const astral = openOrderAt(tradeNo('AST'), { description: '😀'.repeat(63) + '!', sceneStr: '场景:😀|{tag}*?', grant: { type: 'time', days: 0.5 } })
      for (const o of [big, points, astral]) await insert(orders, o)
      // A deep copy to compare with: the stored order must not depend on the object given to it.
      const expected = structuredClone([big, points, astral])
      for (const o of expected) expect(await orders.load(o.outTradeNo)).toStrictEqual(o)

      // Changing what was given, or what was read, changes nothing stored.
      big.refunds.push({ outRefundNo: 'RF9', refundId: 'x', amountFen: 9, at: T0 })
      ;(big.grant as { days: number }).days = 1
      const read = (await orders.load(points.outTradeNo)) as OrderRecord
      read.refunds.push({ outRefundNo: 'RF9', refundId: 'x', amountFen: 9, at: T0 })
      read.description = 'changed'
      for (const o of expected) expect(await orders.load(o.outTradeNo)).toStrictEqual(o)
      // Keys are compared exactly.
      expect(await orders.load(tradeNo('big'))).toBeNull()
      expect(await orders.load(`${tradeNo('BIG')} `)).toBeNull()
    })

    it('refuses to insert an order whose outTradeNo is taken: false, and nothing changes', async () => {
      const orders = ordersOf(get().store)
      const first = await insert(orders, openOrderAt(tradeNo(1)))
      const clash = openOrderAt(tradeNo(1), { userId: 2, amountFen: 1, status: 'paid', sceneStr: 'other', description: 'other' })
      expect(await orders.save({ op: 'insert', order: clash })).toBe(false)
      expect(await orders.load(tradeNo(1))).toStrictEqual(first)
      // Also once the stored order has moved on (an insert never compares versions).
      const paid = await update(orders, first, { status: 'paid', paidAt: T0 + 1, updatedAt: T0 + 1 })
      expect(await orders.save({ op: 'insert', order: { ...clash, version: 2 } })).toBe(false)
      expect(await orders.load(tradeNo(1))).toStrictEqual(paid)
      expect(await orders.list({ userId: 2, limit: 10 })).toEqual([])
    })

    it('updates at the expected version only: a stale or unknown version answers false and writes nothing', async () => {
      const orders = ordersOf(get().store)
      const v1 = await insert(orders, openOrderAt(tradeNo(1)))
      const v2 = await update(orders, v1, {
        status: 'paid',
        paidAt: T0 + MINUTE,
        updatedAt: T0 + MINUTE,
        transactionId: 'tx-1',
        authorizationId: 42,
      })
      expect(await orders.load(tradeNo(1))).toStrictEqual(v2)

      // Stale (the version it had), ahead (a version it never had) and equal-to-new all fail.
      const stale = { ...v1, status: 'closed' as const, version: 2 }
      expect(await orders.save({ op: 'update', order: stale, expectedVersion: 1 })).toBe(false)
      expect(await orders.save({ op: 'update', order: { ...stale, version: 4 }, expectedVersion: 3 })).toBe(false)
      expect(await orders.save({ op: 'update', order: { ...stale, version: 3 }, expectedVersion: 0 })).toBe(false)
      expect(await orders.load(tradeNo(1))).toStrictEqual(v2)

      // Refunds appended in two writes, stored as given each time.
      const v3 = await update(orders, v2, {
        status: 'refunded',
        refundedFen: 500,
        refunds: [{ outRefundNo: 'R1', refundId: 'rid-1', amountFen: 500, at: T0 + 2 * MINUTE }],
        updatedAt: T0 + 2 * MINUTE,
      })
      const v4 = await update(orders, v3, {
        refundedFen: 1500,
        refunds: [...v3.refunds, { outRefundNo: 'R2', refundId: 'rid-2', amountFen: 1000, at: T0 + 3 * MINUTE }],
        updatedAt: T0 + 3 * MINUTE,
      })
      expect(await orders.load(tradeNo(1))).toStrictEqual(v4)

      // An update of an order that was never inserted expects a version nothing has: false, and
      // it does not create the order.
      const ghost = openOrderAt(tradeNo(2), { version: 2 })
      expect(await orders.save({ op: 'update', order: ghost, expectedVersion: 1 })).toBe(false)
      expect(await orders.load(tradeNo(2))).toBeNull()
      expect(ids(await orders.list({ limit: 10 }))).toEqual([])
    })

    it('lets exactly one of concurrent updates at the same version through, over several connections', async () => {
      const ctx = get()
      const stores = await connections(ctx)
      const v1 = await insert(ordersOf(ctx.store), openOrderAt(tradeNo(1)))
      const writes = Array.from({ length: 24 }, (_, i) => ({
        ...v1,
        status: i % 2 === 0 ? ('paid' as const) : ('closed' as const),
        transactionId: `tx-${i}`,
        updatedAt: T0 + i,
        version: 2,
      }))
      const answers = await Promise.all(
        writes.map((o, i) => ordersOf(stores[i % stores.length] as Store).save({ op: 'update', order: o, expectedVersion: 1 })),
      )
      expect(answers.filter(Boolean)).toHaveLength(1)
      // What is stored is the whole of the one write that won, nothing mixed in from the others.
      const winner = writes[answers.indexOf(true)] as OrderRecord
      for (const store of stores) expect(await ordersOf(store).load(tradeNo(1))).toStrictEqual(winner)

      // The same for inserts of one outTradeNo: one order, the one whose insert answered true.
      const inserts = Array.from({ length: 24 }, (_, i) => openOrderAt(tradeNo(2), { userId: 100 + i }))
      const inserted = await Promise.all(
        inserts.map((o, i) => ordersOf(stores[i % stores.length] as Store).save({ op: 'insert', order: o })),
      )
      expect(inserted.filter(Boolean)).toHaveLength(1)
      expect(await ordersOf(ctx.store).load(tradeNo(2))).toStrictEqual(inserts[inserted.indexOf(true)])
    })

    it('lists open orders by userId, by sceneStr, by createdAtOrBefore (inclusive), and by all of them together', async () => {
      const orders = ordersOf(get().store)
      const a = await insert(orders, openOrderAt(tradeNo('A'), { userId: 1, sceneStr: 's1', createdAt: T0 }))
      const b = await insert(orders, openOrderAt(tradeNo('B'), { userId: 1, sceneStr: 's2', createdAt: T0 + 1 }))
      const c = await insert(orders, openOrderAt(tradeNo('C'), { userId: 2, sceneStr: 's1', createdAt: T0 + 2 }))
      const d = await insert(orders, openOrderAt(tradeNo('D'), { userId: 1, sceneStr: null, createdAt: T0 + 3 }))
      const e = await insert(orders, openOrderAt(tradeNo('E'), { userId: 2, sceneStr: 's2', createdAt: T0 + 4 }))
      const all = [a, b, c, d, e]

      expect(await orders.list({ limit: 1000 })).toStrictEqual(all)
      expect(await orders.list({ userId: 1, limit: 1000 })).toStrictEqual([a, b, d])
      expect(await orders.list({ userId: 3, limit: 1000 })).toEqual([])
      expect(await orders.list({ sceneStr: 's1', limit: 1000 })).toStrictEqual([a, c])
      expect(await orders.list({ sceneStr: 'S1', limit: 1000 })).toEqual([])
      expect(await orders.list({ sceneStr: '', limit: 1000 })).toEqual([])
      expect(await orders.list({ createdAtOrBefore: T0 + 2, limit: 1000 })).toStrictEqual([a, b, c])
      expect(await orders.list({ createdAtOrBefore: T0 - 1, limit: 1000 })).toEqual([])
      expect(await orders.list({ createdAtOrBefore: T0 + 4, limit: 1000 })).toStrictEqual(all)
      // Together: every filter given must match.
      expect(await orders.list({ userId: 1, sceneStr: 's2', limit: 1000 })).toStrictEqual([b])
      expect(await orders.list({ userId: 2, sceneStr: 's2', createdAtOrBefore: T0 + 3, limit: 1000 })).toEqual([])
      expect(await orders.list({ userId: 2, sceneStr: 's1', createdAtOrBefore: T0 + 2, limit: 1000 })).toStrictEqual([c])
      expect(await orders.list({ userId: 1, createdAtOrBefore: T0 + 1, limit: 1000 })).toStrictEqual([a, b])
      expect(
        await orders.list({ userId: 1, createdAtOrBefore: T0 + 3, after: { createdAt: a.createdAt, outTradeNo: a.outTradeNo }, limit: 1000 }),
      ).toStrictEqual([b, d])
    })

    it('orders the list by createdAt, then by outTradeNo, whatever the order of insertion', async () => {
      const orders = ordersOf(get().store)
      // Inserted in an order that is neither; the ties at T0 + 5 differ only in case, digits and
      // `_`/`-`, so they sort by code unit (what every backend's binary order agrees on).
      const spec: Array<[string, number]> = [
        ['SA000000000000000000000000zz', T0 + 5],
        ['SA00000000000000000000000010', T0 + 1_000_000],
        ['SA000000000000000000000000Zz', T0 + 5],
        ['SA000000000000000000000000_a', T0 + 5],
        ['SA000000000000000000000000-a', T0 + 5],
        ['SA0000000000000000000000000a', T0 + 5],
        ['SA000000000000000000000000a0', T0 + 5],
        ['SA99999999999999999999999999', T0],
        ['SA00000000000000000000000000', T0 + 6],
        ['SA0000000000000000000000009', T0 + 5], // shorter: a prefix sorts first
      ]
      for (const [no, at] of spec) await insert(orders, openOrderAt(no, { createdAt: at }))
      const expected = [...spec]
        .sort(([n1, t1], [n2, t2]) => t1 - t2 || (n1 < n2 ? -1 : n1 > n2 ? 1 : 0))
        .map(([no]) => no)
      expect(ids(await orders.list({ limit: 1000 }))).toEqual(expected)
      expect(expected.slice(0, 3)).toEqual(['SA99999999999999999999999999', 'SA000000000000000000000000-a', 'SA0000000000000000000000000a'])
    })

    it('pages with an exclusive after cursor and limit: every open order exactly once, in order', async () => {
      const orders = ordersOf(get().store)
      // 23 orders over 7 instants, so pages end inside runs of equal createdAt.
      const all: OrderRecord[] = []
      for (let i = 0; i < 23; i++) all.push(openOrderAt(tradeNo(`${(i * 7) % 23}`.padStart(2, '0')), { createdAt: T0 + (i % 7) }))
      for (const o of [...all].reverse()) await insert(orders, o)
      all.sort((x, y) => x.createdAt - y.createdAt || (x.outTradeNo < y.outTradeNo ? -1 : 1))

      for (const limit of [1, 2, 3, 5, 22, 23, 1000]) {
        const seen: OrderRecord[] = []
        let after: OpenOrderQuery['after']
        for (let pages = 0; pages < 30; pages++) {
          const page = await orders.list({ limit, ...(after === undefined ? {} : { after }) })
          expect(page.length, `limit ${limit}`).toBeLessThanOrEqual(limit)
          if (page.length === 0) break
          seen.push(...page)
          const last = page[page.length - 1] as OrderRecord
          after = { createdAt: last.createdAt, outTradeNo: last.outTradeNo }
        }
        expect(ids(seen), `limit ${limit}`).toEqual(ids(all))
      }

      // The cursor is a position, not a stored order: one that names no order, or one whose order
      // has since been paid, still pages on from where it lies.
      const mid = all[10] as OrderRecord
      expect(ids(await orders.list({ after: { createdAt: mid.createdAt, outTradeNo: mid.outTradeNo }, limit: 2 }))).toEqual(ids(all.slice(11, 13)))
      await update(orders, mid, { status: 'closed', updatedAt: T0 + MINUTE })
      expect(ids(await orders.list({ after: { createdAt: mid.createdAt, outTradeNo: mid.outTradeNo }, limit: 2 }))).toEqual(ids(all.slice(11, 13)))
      expect(ids(await orders.list({ after: { createdAt: mid.createdAt, outTradeNo: `${mid.outTradeNo}0` }, limit: 2 }))).toEqual(ids(all.slice(11, 13)))
      // Past every order: an empty page. Before every order: the first page.
      const last = all[22] as OrderRecord
      expect(await orders.list({ after: { createdAt: last.createdAt, outTradeNo: last.outTradeNo }, limit: 1000 })).toEqual([])
      expect(ids(await orders.list({ after: { createdAt: T0 - 1, outTradeNo: 'zzz' }, limit: 3 }))).toEqual(ids(all.slice(0, 3)))
      expect(ids(await orders.list({ after: { createdAt: T0, outTradeNo: '' }, limit: 3 }))).toEqual(ids(all.slice(0, 3)))
    })

    it('never lists an order that is not open, and drops one from the list once it is paid or closed', async () => {
      const orders = ordersOf(get().store)
      const open1 = await insert(orders, openOrderAt(tradeNo(1), { createdAt: T0 }))
      const open2 = await insert(orders, openOrderAt(tradeNo(2), { createdAt: T0 + 1 }))
      const open3 = await insert(orders, openOrderAt(tradeNo(3), { createdAt: T0 + 2 }))
      // Orders inserted in a status other than open (a store must not assume inserts are open).
      for (const [n, status] of [[4, 'paid'], [5, 'closed'], [6, 'refunded']] as const) {
        await insert(orders, openOrderAt(tradeNo(n), { status, createdAt: T0 - n }))
      }
      expect(await orders.list({ limit: 1000 })).toStrictEqual([open1, open2, open3])

      const paid = await update(orders, open1, { status: 'paid', paidAt: T0 + MINUTE, updatedAt: T0 + MINUTE })
      const closed = await update(orders, open3, { status: 'closed', updatedAt: T0 + MINUTE })
      expect(await orders.list({ limit: 1000 })).toStrictEqual([open2])
      expect(await orders.list({ userId: 1, sceneStr: 'scene-1', createdAtOrBefore: T0 + 10, limit: 1000 })).toStrictEqual([open2])
      // An update that keeps it open keeps it listed, as updated.
      const touched = await update(orders, open2, { updatedAt: T0 + 2 * MINUTE, expiresAt: T0 + 30 * MINUTE })
      expect(await orders.list({ limit: 1000 })).toStrictEqual([touched])
      const refunded = await update(orders, paid, { status: 'refunded', refundedFen: 1500, updatedAt: T0 + 3 * MINUTE })
      expect(await orders.list({ limit: 1000 })).toStrictEqual([touched])
      // Left the list, not the store.
      expect(await orders.load(tradeNo(1))).toStrictEqual(refunded)
      expect(await orders.load(tradeNo(3))).toStrictEqual(closed)
    })

    it('keeps each order\'s channel (native, jsapi) through load, both listings and updates, stored as given', async () => {
      const store = get().store
      const orders = ordersOf(store)
      const listOrders = operatorRead(store, 'listOrders')
      // A phone payment (JSAPI: a session purchase, no scene) beside a Native one of the same user.
      const jsapi = await insert(orders, openOrderAt(tradeNo('J'), { channel: 'jsapi', sceneStr: null, createdAt: T0 }))
      const native = await insert(orders, openOrderAt(tradeNo('N'), { channel: 'native', createdAt: T0 + 1 }))
      expect(await orders.load(jsapi.outTradeNo)).toStrictEqual(jsapi)
      expect(await orders.load(native.outTradeNo)).toStrictEqual(native)
      expect(await orders.list({ limit: 10 })).toStrictEqual([jsapi, native])
      expect(await orders.list({ userId: 1, limit: 10 })).toStrictEqual([jsapi, native])
      expect(await listOrders({ limit: 10 })).toStrictEqual([jsapi, native])
      expect(await listOrders({ userId: 1, status: 'open', limit: 10 })).toStrictEqual([jsapi, native])

      // An update that changes everything else keeps the channel it is given.
      const paid = await update(orders, jsapi, { status: 'paid', paidAt: T0 + MINUTE, transactionId: 'tx-j', authorizationId: 5, updatedAt: T0 + MINUTE })
      const closed = await update(orders, native, { status: 'closed', updatedAt: T0 + MINUTE })
      expect(await orders.load(jsapi.outTradeNo)).toStrictEqual(paid)
      expect(await orders.load(native.outTradeNo)).toStrictEqual(closed)
      expect(await listOrders({ limit: 10 })).toStrictEqual([paid, closed])
      expect(await listOrders({ status: 'paid', limit: 10 })).toStrictEqual([paid])
      // The store has no rule of its own about it: an update is stored as given, channel included
      // (core never changes one; that is core's rule, not the store's).
      const swapped = await update(orders, closed, { channel: 'jsapi' })
      const back = await update(orders, paid, { channel: 'native' })
      expect(await orders.load(native.outTradeNo)).toStrictEqual(swapped)
      expect(await orders.load(jsapi.outTradeNo)).toStrictEqual(back)
      expect(await listOrders({ userId: 1, limit: 10 })).toStrictEqual([back, swapped])
      // A refused update (stale version) changes nothing, channel included.
      expect(await orders.save({ op: 'update', order: { ...swapped, channel: 'native', version: swapped.version + 1 }, expectedVersion: 1 })).toBe(false)
      expect(await orders.load(native.outTradeNo)).toStrictEqual(swapped)
    })
  })

  storeOrderPurgeSuite(get)
}
