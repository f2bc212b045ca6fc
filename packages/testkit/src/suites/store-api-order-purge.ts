/**
 * `purgeExpired` and orders (docs/behaviour.md, B-order-purge), on every store, Redis included
 * (its scenes, sessions and counters expire by TTL, its orders do not): a `closed` order that never
 * took money is deleted once `retentionMs` past its payment deadline (`expiresAt`), at the exact
 * millisecond (B-expiry-1) and not before, and counted in `orders`; `open`, `paid` and `refunded`
 * orders, and a closed one that records money all the same, stay however old; a store follows an
 * order written again after it was closed; the work goes in batches; a purge beside order writes
 * never deletes an order a write just paid; and through the service, a replaced order is gone
 * after its deadline while the paid and the open ones stay.
 *
 * The order types are taken from the `Store` interface itself, as in `store-api-orders.ts`.
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, type PaymentRejectedEvent, type PurgeOptions, type PurgeResult, type Store } from '@scanauth/core'
import { DAY, FREE_TRIAL_DAYS, SCENE_TTL_SECONDS, SESSION_TTL_HOURS, type ContractContext } from '../context'
import { TestPaymentService } from '../payment-service'
import { only, sceneIn, scanNewScene } from '../steps'
import { MINUTE, openOrderAt, T0, tradeNo } from './order-fixtures'

type OrderRecord = NonNullable<Awaited<ReturnType<NonNullable<Store['loadOrder']>>>>
type OrderWrite = Parameters<NonNullable<Store['saveOrder']>>[0]

const DEADLINE = T0 + 15 * MINUTE

/** The order methods and the purge of one store, bound to it; fails the test when one is missing. */
function methodsOf(store: Store) {
  expect(store.loadOrder, 'the store has loadOrder').toBeTypeOf('function')
  expect(store.saveOrder, 'the store has saveOrder').toBeTypeOf('function')
  expect(store.purgeExpired, 'the store has purgeExpired').toBeTypeOf('function')
  return {
    load: (outTradeNo: string) => (store.loadOrder as NonNullable<Store['loadOrder']>).call(store, outTradeNo),
    save: (write: OrderWrite) => (store.saveOrder as NonNullable<Store['saveOrder']>).call(store, write),
    list: () => (store.listOpenOrders as NonNullable<Store['listOpenOrders']>).call(store, { limit: 1000 }),
    purge: (options: PurgeOptions) => (store.purgeExpired as (o: PurgeOptions) => Promise<PurgeResult>).call(store, options),
  }
}

/** Inserts each order, failing the test when the store refuses one. */
async function insertAll(store: Store, orders: OrderRecord[]): Promise<void> {
  for (const o of orders) expect(await methodsOf(store).save({ op: 'insert', order: o }), `insert ${o.outTradeNo}`).toBe(true)
}

/** Registers the order cases of `purgeExpired` (see the module comment). */
export function storeOrderPurgeSuite(get: () => ContractContext): void {
  describe('purgeExpired and orders (B-order-purge)', () => {
    it('deletes a closed order retentionMs past its deadline and counts it; one still within retention stays', async () => {
      const { store } = get()
      const m = methodsOf(store)
      const old = openOrderAt(tradeNo(1), { status: 'closed', updatedAt: T0 + MINUTE })
      const recent = openOrderAt(tradeNo(2), { status: 'closed', createdAt: T0 + DAY, expiresAt: DEADLINE + DAY, updatedAt: T0 + DAY })
      await insertAll(store, [old, recent])
      // A day of retention, two days after the first deadline: the first is due, the second is kept one more ms.
      const now = DEADLINE + 2 * DAY - 1
      expect(await m.purge({ now, retentionMs: DAY })).toMatchObject({ scenes: 0, sessions: 0, counters: 0, orders: 1, more: false })
      expect(await m.load(old.outTradeNo)).toBeNull()
      expect(await m.load(recent.outTradeNo)).toStrictEqual(recent)
      expect(await m.purge({ now, retentionMs: DAY })).toMatchObject({ orders: 0 })
      expect(await m.purge({ now: now + 1, retentionMs: DAY })).toMatchObject({ orders: 1, more: false })
      expect(await m.load(recent.outTradeNo)).toBeNull()
      expect((await get().dump()).orders ?? []).toEqual([])
    })

    it('deletes at the exact millisecond its deadline is reached (now >= expiresAt + retentionMs), never before', async () => {
      const { store } = get()
      const m = methodsOf(store)
      const closed = openOrderAt(tradeNo(1), { status: 'closed' })
      await insertAll(store, [closed])
      expect(await m.purge({ now: DEADLINE - 1 })).toMatchObject({ orders: 0 })
      expect(await m.purge({ now: DEADLINE + 4_999, retentionMs: 5_000 })).toMatchObject({ orders: 0 })
      expect(await m.load(closed.outTradeNo)).toStrictEqual(closed)
      expect(await m.purge({ now: DEADLINE + 5_000, retentionMs: 5_000 })).toMatchObject({ orders: 1 })
      expect(await m.load(closed.outTradeNo)).toBeNull()
    })

    it('keeps open, paid and refunded orders, and a closed one that records money, however old', async () => {
      const { store } = get()
      const m = methodsOf(store)
      const kept = [
        openOrderAt(tradeNo('OPEN'), { status: 'open' }),
        openOrderAt(tradeNo('PAID'), { status: 'paid', paidAt: T0 + MINUTE, transactionId: 'tx-1', authorizationId: 7 }),
        openOrderAt(tradeNo('REFUNDED'), {
          status: 'refunded',
          paidAt: T0 + MINUTE,
          transactionId: 'tx-2',
          authorizationId: 8,
          refundedFen: 1500,
          refunds: [{ outRefundNo: 'R1', refundId: 'rid-1', amountFen: 1500, at: T0 + 2 * MINUTE }],
        }),
        // Closed, yet with a payment time or a refund on record: the payment service contradicted itself.
        openOrderAt(tradeNo('CLOSEDPAIDAT'), { status: 'closed', paidAt: T0 + MINUTE }),
        openOrderAt(tradeNo('CLOSEDREFUND'), {
          status: 'closed',
          refundedFen: 1,
          refunds: [{ outRefundNo: 'R2', refundId: 'rid-2', amountFen: 1, at: T0 + 2 * MINUTE }],
        }),
      ]
      const due = openOrderAt(tradeNo('DUE'), { status: 'closed' })
      await insertAll(store, [...kept, due])
      const result = await m.purge({ now: DEADLINE + 3650 * DAY, batchSize: 1 })
      expect(result).toMatchObject({ orders: 1, more: false })
      for (const o of kept) expect(await m.load(o.outTradeNo), o.outTradeNo).toStrictEqual(o)
      expect(await m.load(due.outTradeNo)).toBeNull()
      expect(await m.list()).toStrictEqual([kept[0]])
    })

    it('follows an order written after it was closed: paid then, it stays; given a later deadline, that one counts', async () => {
      const { store } = get()
      const m = methodsOf(store)
      const a = openOrderAt(tradeNo('A'), { status: 'closed', version: 2 })
      const b = openOrderAt(tradeNo('B'), { status: 'closed', version: 2 })
      const c = openOrderAt(tradeNo('C'), { status: 'paid', paidAt: T0, version: 2 })
      await insertAll(store, [a, b, c])
      const paid = { ...a, status: 'paid' as const, paidAt: T0 + MINUTE, transactionId: 'tx', authorizationId: 3, version: 3 }
      const later = { ...b, expiresAt: DEADLINE + DAY, version: 3 }
      // A paid order written back to closed (the store stores what it is given) is a closed one again.
      const reclosed = { ...c, status: 'closed' as const, paidAt: null, version: 3 }
      expect(await m.save({ op: 'update', order: paid, expectedVersion: 2 })).toBe(true)
      expect(await m.save({ op: 'update', order: later, expectedVersion: 2 })).toBe(true)
      expect(await m.save({ op: 'update', order: reclosed, expectedVersion: 2 })).toBe(true)
      expect(await m.purge({ now: DEADLINE + DAY - 1 })).toMatchObject({ orders: 1 })
      expect(await m.load(paid.outTradeNo)).toStrictEqual(paid)
      expect(await m.load(later.outTradeNo)).toStrictEqual(later)
      expect(await m.load(reclosed.outTradeNo)).toBeNull()
      expect(await m.purge({ now: DEADLINE + DAY })).toMatchObject({ orders: 1 })
      expect(await m.load(later.outTradeNo)).toBeNull()
      expect(await m.load(paid.outTradeNo)).toStrictEqual(paid)
    })

    it('works in batches: maxBatches stops it with more left, the next call finishes, and orders kept for good never fill a batch', async () => {
      const { store } = get()
      const m = methodsOf(store)
      // Seven due, interleaved with closed orders kept for good (a refund recorded), inserted newest deadline first.
      const due = Array.from({ length: 7 }, (_, i) => openOrderAt(tradeNo(`D${i}`), { status: 'closed', expiresAt: DEADLINE + i }))
      const kept = Array.from({ length: 3 }, (_, i) => openOrderAt(tradeNo(`K${i}`), { status: 'closed', expiresAt: DEADLINE + 2 * i, refundedFen: 5 }))
      await insertAll(store, [...due, ...kept].reverse())
      const first = await m.purge({ now: DEADLINE + DAY, batchSize: 2, maxBatches: 2 })
      expect(first).toMatchObject({ orders: 4, batches: 2, more: true })
      // Which four is the store's order of work (the database stores take the oldest deadlines first).
      const gone = (await Promise.all(due.map((o) => m.load(o.outTradeNo)))).filter((o) => o === null)
      expect(gone).toHaveLength(4)
      expect(await m.purge({ now: DEADLINE + DAY, batchSize: 2 })).toMatchObject({ orders: 3, more: false })
      const left = ((await get().dump()).orders ?? []).map((o) => o.outTradeNo).sort()
      expect(left).toEqual(kept.map((o) => o.outTradeNo).sort())
    })

    it('never deletes an order that a write paid while the purge ran, over several connections', async () => {
      const ctx = get()
      const stores = [ctx.store]
      if (ctx.harness.openPeer !== undefined) stores.push(await ctx.harness.openPeer.call(ctx.harness))
      const closed = Array.from({ length: 30 }, (_, i) => openOrderAt(tradeNo(i), { status: 'closed', expiresAt: DEADLINE + i, version: 2 }))
      await insertAll(ctx.store, closed)
      // Each closed order is paid from a connection (a late payment applied) while purges run.
      const writes = closed.map((o, i) =>
        methodsOf(stores[i % stores.length] as Store).save({
          op: 'update',
          order: { ...o, status: 'paid', paidAt: DEADLINE + DAY, transactionId: `tx-${i}`, authorizationId: i + 1, version: 3 },
          expectedVersion: 2,
        }),
      )
      const purges = stores.map((s) => methodsOf(s).purge({ now: DEADLINE + DAY, batchSize: 3 }))
      const [paid, results] = await Promise.all([Promise.all(writes), Promise.all(purges)])
      const deleted = results.reduce((sum, r) => sum + r.orders, 0)
      // Every order is either paid and kept, or deleted before its write (which then found nothing).
      for (const [i, o] of closed.entries()) {
        const stored = await methodsOf(ctx.store).load(o.outTradeNo)
        if (paid[i] === true) expect(stored, o.outTradeNo).toMatchObject({ status: 'paid', transactionId: `tx-${i}` })
        else expect(stored, o.outTradeNo).toBeNull()
      }
      expect(deleted).toBe(paid.filter((p) => !p).length)
    })

    it('through the service: a replaced order is gone after its deadline, the paid and the open one stay, and a late report of it is refused', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const rejected: PaymentRejectedEvent[] = []
      const auth = createScanAuth({
        store: ctx.store,
        qr: ctx.qr,
        now: ctx.clock.now,
        sceneTtlSeconds: SCENE_TTL_SECONDS,
        sessionTtlHours: SESSION_TTL_HOURS,
        freeTrialDays: FREE_TRIAL_DAYS,
        payments: {
          provider: service,
          plans: [
            { id: 'days-30', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } },
            { id: 'points-100', description: '100 points', amountFen: 990, grant: { type: 'points', points: 100 } },
          ],
          orderTtlMinutes: 15,
        },
        hooks: { onPaymentRejected: (event) => rejected.push(event) },
      })
      const m = methodsOf(ctx.store)
      await scanNewScene(auth, 'alice', 'trial-device')
      ctx.clock.advance(FREE_TRIAL_DAYS * DAY)
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      expect(scan.result).toBe('need_purchase')
      // One order replaced by another plan (closed at the service, then here), the other paid,
      // and a third opened with the device's session.
      const replaced = await auth.purchase({ sceneStr, plan: 'days-30' })
      const paidOrder = await auth.purchase({ sceneStr, plan: 'points-100' })
      expect(await auth.getOrder(replaced.orderId)).toMatchObject({ status: 'closed' })
      expect(await auth.applyPayment(service.pay(paidOrder.orderId))).toMatchObject({ result: 'granted' })
      const snapshot = await ctx.dump()
      const token = only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, sceneStr).id).token
      const open = await auth.purchase({ sessionToken: token, plan: 'days-30' })

      // Before the replaced order's deadline it stays, closed; at its deadline it goes.
      ctx.clock.advance(15 * MINUTE - 1)
      expect(await m.purge({ now: ctx.clock.now() })).toMatchObject({ orders: 0 })
      ctx.clock.advance(1)
      expect(await m.purge({ now: ctx.clock.now() })).toMatchObject({ orders: 1 })
      expect(await auth.getOrder(replaced.orderId)).toBeNull()
      expect(await auth.getOrder(paidOrder.orderId)).toMatchObject({ status: 'paid' })
      expect(await auth.getOrder(open.orderId)).toMatchObject({ status: 'open' })
      // The reconciler closes the open one past its deadline; a later purge takes it as well.
      expect(await auth.reconcileOrders({ now: ctx.clock.now() + MINUTE })).toMatchObject({ closed: 1 })
      expect(await m.purge({ now: ctx.clock.now() + MINUTE })).toMatchObject({ orders: 1 })
      expect(await auth.getOrder(open.orderId)).toBeNull()
      expect(await auth.getOrder(paidOrder.orderId)).toMatchObject({ status: 'paid' })
      // A report naming a purged order finds nothing to apply: refused, and the hook is told.
      const late = { ...(await service.queryOrder(replaced.orderId)), tradeState: 'SUCCESS', transactionId: '4200000000000000000000000001' }
      expect(await auth.applyPayment(late as Parameters<typeof auth.applyPayment>[0])).toMatchObject({ result: 'rejected', reason: 'unknown_order' })
      expect(rejected.map((e) => e.reason)).toEqual(['unknown_order'])
    })
  })
}
