/**
 * RedisStore's orders (loadOrder, saveOrder, listOpenOrders), checked by reading Redis directly:
 * the order hash and its fields, no TTL on any order key, the three open-order indexes, the
 * closed-order index and the indexes of every order (`listOrders`: `oa`, `oas:<status>`,
 * `oau:<userId>`) in step with each order's status through inserts, updates and closes (also
 * when an update moves an open order to another user, scene or time), refused writes that change
 * nothing, the key prefix, the lex bounds of the cursor, one round trip per method, what the store
 * refuses to write or read, and purgeExpired deleting closed orders past their deadline from the
 * closed-order index (docs/behaviour.md, B-order-purge). The Store contract's cases are in
 * testkit (`storeOrderApiSuite`, `storeOrderPurgeSuite`); on a Cluster: cluster.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { RedisStore, RedisStoreError } from '../src/index'
import type { OrderRecord } from '@scanauth/core'
import { orderMember } from '../src/keys'
import { openOrderRange } from '../src/orders'
import { connect, countCommands, deleteKeysUnder, dumpRecords, keysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60_000

let client: Redis
let prefix: string
let store: RedisStore

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
})

afterEach(async () => {
  await deleteKeysUnder(client, prefix)
  expect(await keysUnder(client, prefix)).toEqual([])
  await client.quit()
})

const tradeNo = (n: number | string) => `SA${String(n).padStart(26, '0')}`

function order(outTradeNo: string, over: Partial<OrderRecord> = {}): OrderRecord {
  return {
    outTradeNo,
    userId: 1,
    planId: 'month',
    description: '月卡',
    amountFen: 1500,
    grant: { type: 'time', days: 30 },
    sceneStr: 'scene-1',
    channel: 'native',
    status: 'open',
    createdAt: T0,
    expiresAt: T0 + 15 * MINUTE,
    updatedAt: T0,
    paidAt: null,
    transactionId: null,
    authorizationId: null,
    refundedFen: 0,
    refunds: [],
    version: 1,
    ...over,
  }
}

async function insert(o: OrderRecord, on: RedisStore = store): Promise<OrderRecord> {
  expect(await on.saveOrder({ op: 'insert', order: o })).toBe(true)
  return o
}

async function update(o: OrderRecord, change: Partial<OrderRecord>): Promise<OrderRecord> {
  const next = { ...o, ...change, version: o.version + 1 }
  expect(await store.saveOrder({ op: 'update', order: next, expectedVersion: o.version })).toBe(true)
  return next
}

/** Key names under the prefix, without it, sorted; a write's receipt (`r:<random id>`, checked apart) left out. */
async function names(): Promise<string[]> {
  return (await receiptsAndNames()).names
}

async function receiptsAndNames(): Promise<{ names: string[]; receipts: string[] }> {
  const all = (await keysUnder(client, prefix)).map((k) => k.slice(prefix.length)).sort()
  return { names: all.filter((k) => !k.startsWith('r:')), receipts: all.filter((k) => k.startsWith('r:')) }
}

/** Every order key and index key has no TTL (PTTL -1). */
async function expectNoTtl(): Promise<void> {
  for (const name of await names()) expect(await client.pttl(`${prefix}${name}`), name).toBe(-1)
}

/** Every index key (`oo`, `ou:*`, `os:*`, `oc`) with its members and scores, read straight from Redis. */
async function indexes(): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {}
  for (const name of await names()) {
    if (name === 'oo' || name === 'oc' || name.startsWith('ou:') || name.startsWith('os:')) found[name] = await client.zrange(`${prefix}${name}`, 0, -1, 'WITHSCORES')
  }
  return found
}

/**
 * What the indexes must hold for the orders stored under the prefix (read straight from Redis):
 * every open order, and only those, in `oo`, its user's `ou:` and its scene's `os:`, at score 0
 * under `<createdAt padded>:<outTradeNo>`, each index in lex order; every closed order, and only
 * those, in `oc` under its outTradeNo at the score of its expiresAt, by score then outTradeNo.
 */
async function expectedIndexes(): Promise<Record<string, string[]>> {
  const orders = (await dumpRecords(client, prefix)).orders
  const open = orders.filter((o) => o.status === 'open')
  const want: Record<string, string[]> = {}
  const add = (name: string, o: OrderRecord) => (want[name] ??= []).push(orderMember(o.createdAt, o.outTradeNo))
  for (const o of open) {
    add('oo', o)
    add(`ou:${o.userId}`, o)
    if (o.sceneStr !== null) add(`os:${o.sceneStr}`, o)
  }
  for (const name of Object.keys(want)) want[name] = (want[name] as string[]).sort().flatMap((m) => [m, '0'])
  const closed = orders
    .filter((o) => o.status === 'closed')
    .sort((a, b) => a.expiresAt - b.expiresAt || (a.outTradeNo < b.outTradeNo ? -1 : 1))
  if (closed.length > 0) want.oc = closed.flatMap((o) => [o.outTradeNo, String(o.expiresAt)])
  return want
}

/** The indexes of every order (`oa`, `oas:*`, `oau:*`, for `listOrders`) with their members and scores, read straight from Redis. */
async function listingIndexes(): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {}
  for (const name of await names()) {
    if (name === 'oa' || name.startsWith('oas:') || name.startsWith('oau:')) found[name] = await client.zrange(`${prefix}${name}`, 0, -1, 'WITHSCORES')
  }
  return found
}

/** Every order stored under the prefix, whatever its status, in `oa`, its status's `oas:` and its user's `oau:`, at score 0, in lex order. */
async function expectedListingIndexes(): Promise<Record<string, string[]>> {
  const want: Record<string, string[]> = {}
  for (const o of (await dumpRecords(client, prefix)).orders) {
    for (const name of ['oa', `oas:${o.status}`, `oau:${o.userId}`]) (want[name] ??= []).push(orderMember(o.createdAt, o.outTradeNo))
  }
  for (const name of Object.keys(want)) want[name] = (want[name] as string[]).sort().flatMap((m) => [m, '0'])
  return want
}

async function expectIndexesInStep(): Promise<void> {
  expect(await indexes()).toEqual(await expectedIndexes())
  expect(await listingIndexes()).toEqual(await expectedListingIndexes())
}

describe('RedisStore orders: keys and values', () => {
  it('writes an open order as one hash at <prefix>od:<outTradeNo> and files it in oo, ou:<userId> and os:<sceneStr>, none with a TTL', async () => {
    const o = await insert(order(tradeNo(1), { userId: 7, sceneStr: 'sc', createdAt: T0 + 5 }))
    expect(await names()).toEqual(['oa', 'oas:open', 'oau:7', 'od:' + tradeNo(1), 'oo', 'os:sc', 'ou:7'])
    expect(await client.type(store.keys.order(tradeNo(1)))).toBe('hash')
    // One field per record field, numbers in decimal, grant and refunds as JSON, nulls left out.
    expect(await client.hgetall(store.keys.order(tradeNo(1)))).toEqual({
      version: '1',
      status: 'open',
      channel: 'native',
      userId: '7',
      planId: 'month',
      description: '月卡',
      amountFen: '1500',
      grant: '{"type":"time","days":30}',
      createdAt: String(T0 + 5),
      expiresAt: String(T0 + 15 * MINUTE),
      updatedAt: String(T0),
      refundedFen: '0',
      refunds: '[]',
      sceneStr: 'sc',
    })
    const member = `000${T0 + 5}:${tradeNo(1)}`
    expect(member).toBe(orderMember(o.createdAt, o.outTradeNo))
    expect(member.indexOf(':')).toBe(16)
    expect(await indexes()).toEqual({ oo: [member, '0'], 'os:sc': [member, '0'], 'ou:7': [member, '0'] })
    expect(await listingIndexes()).toEqual({ oa: [member, '0'], 'oas:open': [member, '0'], 'oau:7': [member, '0'] })
    await expectNoTtl()
    expect(await store.loadOrder(tradeNo(1))).toStrictEqual(o)
    // The one key with a TTL is the write's receipt (commitReceiptSeconds, default 120 s).
    const { receipts } = await receiptsAndNames()
    expect(receipts).toHaveLength(1)
    expect(await client.get(`${prefix}${receipts[0]}`)).toBe('1')
    const ttl = await client.pttl(`${prefix}${receipts[0]}`)
    expect(ttl).toBeGreaterThan(100_000)
    expect(ttl).toBeLessThanOrEqual(120_000)
  })

  it('keeps nullable fields apart from empty strings, and drops a field when an update sets it back to null', async () => {
    const o = await insert(order(tradeNo(1), { sceneStr: '', description: '', planId: '', transactionId: '' }))
    expect(await client.hget(store.keys.order(tradeNo(1)), 'sceneStr')).toBe('')
    expect(await store.loadOrder(tradeNo(1))).toStrictEqual(o)
    // An empty scene_str is still a scene of its own, apart from a session purchase (null).
    expect(await names()).toEqual(['oa', 'oas:open', 'oau:1', 'od:' + tradeNo(1), 'oo', 'os:', 'ou:1'])
    const paid = await update(o, { status: 'paid', paidAt: T0 + 1, transactionId: 'tx', authorizationId: 9 })
    const cleared = await update(paid, { status: 'closed', paidAt: null, transactionId: null, authorizationId: null, sceneStr: null })
    const fields = Object.keys(await client.hgetall(store.keys.order(tradeNo(1))))
    expect(fields).not.toContain('paidAt')
    expect(fields).not.toContain('transactionId')
    expect(fields).not.toContain('authorizationId')
    expect(fields).not.toContain('sceneStr')
    expect(await store.loadOrder(tradeNo(1))).toStrictEqual(cleared)
  })

  it('a session purchase (sceneStr null) is filed in oo and its user index only', async () => {
    await insert(order(tradeNo(1), { sceneStr: null, userId: 3 }))
    expect(await names()).toEqual(['oa', 'oas:open', 'oau:3', 'od:' + tradeNo(1), 'oo', 'ou:3'])
    await expectIndexesInStep()
    expect(await store.listOpenOrders({ userId: 3, limit: 10 })).toHaveLength(1)
  })

  it('writes only under its own prefix, braces and colons in names notwithstanding', async () => {
    const otherPrefix = testPrefix()
    const other = new RedisStore({ client, keyPrefix: otherPrefix })
    try {
      await insert(order('SA:{x}:1', { sceneStr: '{a}:b*?[c]' }))
      await insert(order(tradeNo(2), { userId: 2 }), other)
      expect(await names()).toEqual(['oa', 'oas:open', 'oau:1', 'od:SA:{x}:1', 'oo', 'os:{a}:b*?[c]', 'ou:1'])
      const otherNames = (await keysUnder(client, otherPrefix)).map((k) => k.slice(otherPrefix.length)).filter((k) => !k.startsWith('r:'))
      expect(otherNames.sort()).toEqual(['oa', 'oas:open', 'oau:2', 'od:' + tradeNo(2), 'oo', 'os:scene-1', 'ou:2'])
      expect(await store.loadOrder(tradeNo(2))).toBeNull()
      expect(await other.loadOrder('SA:{x}:1')).toBeNull()
      expect((await store.listOpenOrders({ limit: 10 })).map((o) => o.outTradeNo)).toEqual(['SA:{x}:1'])
      expect((await store.listOpenOrders({ sceneStr: '{a}:b*?[c]', limit: 10 })).map((o) => o.outTradeNo)).toEqual(['SA:{x}:1'])
    } finally {
      await deleteKeysUnder(client, otherPrefix)
    }
  })
})

describe('RedisStore orders: indexes in step', () => {
  it('through insert, update, pay, close, refund and a re-open, and an index that empties is gone', async () => {
    const a = await insert(order(tradeNo('A'), { userId: 1, sceneStr: 's1', createdAt: T0 }))
    const b = await insert(order(tradeNo('B'), { userId: 1, sceneStr: 's2', createdAt: T0 + 1 }))
    const c = await insert(order(tradeNo('C'), { userId: 2, sceneStr: 's1', createdAt: T0 + 1 }))
    await insert(order(tradeNo('D'), { userId: 3, sceneStr: 's3', status: 'paid', paidAt: T0 }))
    await expectIndexesInStep()
    expect(await names()).not.toContain('ou:3') // inserted paid: never filed among the open ones
    expect(Object.keys(await indexes()).sort()).toEqual(['oo', 'os:s1', 'os:s2', 'ou:1', 'ou:2'])

    const a2 = await update(a, { updatedAt: T0 + MINUTE, expiresAt: T0 + 30 * MINUTE }) // still open
    await expectIndexesInStep()
    const paid = await update(a2, { status: 'paid', paidAt: T0 + MINUTE, transactionId: 'tx', authorizationId: 4 })
    await expectIndexesInStep()
    const closed = await update(b, { status: 'closed' })
    await expectIndexesInStep()
    // The user's index and s2's emptied: Redis removed them.
    expect(await client.exists(store.keys.userOpenOrders(1), store.keys.sceneOpenOrders('s2'))).toBe(0)
    await update(paid, { status: 'refunded', refundedFen: 1500, refunds: [{ outRefundNo: 'R1', refundId: 'r1', amountFen: 1500, at: T0 + 2 * MINUTE }] })
    await expectIndexesInStep()
    // The store follows the status it is given (core decides whether that may happen).
    await update(closed, { status: 'open' })
    await expectIndexesInStep()
    expect((await store.listOpenOrders({ limit: 10 })).map((o) => o.outTradeNo)).toEqual([tradeNo('B'), tradeNo('C')])
    expect(c.status).toBe('open')
    await expectNoTtl()
    // A receipt per write that succeeded (4 inserts, 5 updates), none for refused ones.
    expect((await receiptsAndNames()).receipts).toHaveLength(9)
    expect(await store.saveOrder({ op: 'update', order: { ...c, version: 5 }, expectedVersion: 4 })).toBe(false)
    expect((await receiptsAndNames()).receipts).toHaveLength(9)
  })

  it('an update that moves an open order to another user, scene or time takes it out of the old indexes', async () => {
    const o = await insert(order(tradeNo(1), { userId: 1, sceneStr: 's1', createdAt: T0 }))
    const moved = await update(o, { userId: 2, sceneStr: 's2', createdAt: T0 + 9 })
    await expectIndexesInStep()
    expect(Object.keys(await indexes()).sort()).toEqual(['oo', 'os:s2', 'ou:2'])
    expect(await store.listOpenOrders({ userId: 1, limit: 10 })).toEqual([])
    expect(await store.listOpenOrders({ userId: 2, sceneStr: 's2', limit: 10 })).toStrictEqual([moved])
    await update(moved, { sceneStr: null })
    expect(Object.keys(await indexes()).sort()).toEqual(['oo', 'ou:2'])
    await expectIndexesInStep()
  })

  it('a refused insert or update writes nothing: the hash and the indexes stay as they were', async () => {
    const o = await insert(order(tradeNo(1)))
    const before = { hash: await client.hgetall(store.keys.order(tradeNo(1))), indexes: await indexes(), names: await names() }
    expect(await store.saveOrder({ op: 'insert', order: order(tradeNo(1), { userId: 5, sceneStr: 'x', createdAt: T0 + 1 }) })).toBe(false)
    expect(await store.saveOrder({ op: 'update', order: { ...o, status: 'closed', version: 3 }, expectedVersion: 2 })).toBe(false)
    expect(await store.saveOrder({ op: 'update', order: order(tradeNo(2), { version: 2 }), expectedVersion: 1 })).toBe(false)
    expect({ hash: await client.hgetall(store.keys.order(tradeNo(1))), indexes: await indexes(), names: await names() }).toEqual(before)
  })
})

describe('RedisStore orders: listing', () => {
  it('reads a scene index filtered by user in batches, and stops at limit', async () => {
    // 250 open orders of other users in one scene, then 3 of user 1: the filter passes batches by.
    for (let i = 0; i < 250; i++) await insert(order(tradeNo(`x${i}`), { userId: 100 + i, createdAt: T0 + i }))
    const mine = []
    for (let i = 0; i < 3; i++) mine.push(await insert(order(tradeNo(`m${i}`), { userId: 1, createdAt: T0 + 300 + i })))
    expect(await store.listOpenOrders({ sceneStr: 'scene-1', userId: 1, limit: 10 })).toStrictEqual(mine)
    expect(await store.listOpenOrders({ sceneStr: 'scene-1', userId: 1, limit: 2 })).toStrictEqual(mine.slice(0, 2))
    const after = { createdAt: (mine[0] as OrderRecord).createdAt, outTradeNo: (mine[0] as OrderRecord).outTradeNo }
    expect(await store.listOpenOrders({ sceneStr: 'scene-1', userId: 1, after, limit: 10 })).toStrictEqual(mine.slice(1))
    expect(await store.listOpenOrders({ sceneStr: 'scene-1', limit: 5 })).toHaveLength(5)
    expect(await store.listOpenOrders({ limit: 1000 })).toHaveLength(253)
  })

  it('answers each method in one round trip', async () => {
    const o = await insert(order(tradeNo(1))) // caches the script on the server
    await store.listOpenOrders({ limit: 1 })
    const commands = countCommands(client)
    await store.loadOrder(tradeNo(1))
    expect(commands.byName()).toEqual({ hgetall: 1 })
    commands.reset()
    await insert(order(tradeNo(2)))
    await update(o, { status: 'paid' })
    expect(await store.saveOrder({ op: 'update', order: { ...o, version: 9 }, expectedVersion: 8 })).toBe(false)
    expect(commands.byName()).toEqual({ evalsha: 3 })
    commands.reset()
    for (const query of [{}, { userId: 1 }, { sceneStr: 'scene-1' }, { userId: 1, sceneStr: 'scene-1', createdAtOrBefore: T0, after: { createdAt: T0, outTradeNo: '' } }]) {
      expect(await store.listOpenOrders({ ...query, limit: 10 })).toHaveLength(1)
    }
    expect(commands.byName()).toEqual({ evalsha: 4 })
    commands.reset()
    // Nothing to ask: a limit below 1 or a bound no stored order can meet sends nothing.
    expect(await store.listOpenOrders({ limit: 0 })).toEqual([])
    expect(await store.listOpenOrders({ createdAtOrBefore: -1, limit: 10 })).toEqual([])
    expect(commands.total()).toBe(0)
  })

  it('turns the cursor and createdAtOrBefore into exact lex bounds, times between integers and out of range included', () => {
    const at = T0
    expect(openOrderRange({})).toEqual({ min: '-', max: '+' })
    expect(openOrderRange({ after: { createdAt: at, outTradeNo: 'SA1' } })).toEqual({ min: `(${orderMember(at, 'SA1')}`, max: '+' })
    expect(openOrderRange({ after: { createdAt: at + 0.5, outTradeNo: 'SA1' } })).toEqual({ min: `[000${at + 1}`, max: '+' })
    expect(openOrderRange({ after: { createdAt: -5, outTradeNo: 'SA1' } })).toEqual({ min: '-', max: '+' })
    expect(openOrderRange({ after: { createdAt: Number.MAX_SAFE_INTEGER + 2, outTradeNo: '' } })).toBeNull()
    // ';' is the character after ':': every member of that millisecond is below the bound.
    expect(openOrderRange({ createdAtOrBefore: at })).toEqual({ min: '-', max: `(000${at};` })
    expect(openOrderRange({ createdAtOrBefore: at + 0.9 })).toEqual({ min: '-', max: `(000${at};` })
    expect(openOrderRange({ createdAtOrBefore: -0.5 })).toBeNull()
    expect(openOrderRange({ createdAtOrBefore: Number.MAX_SAFE_INTEGER })).toEqual({ min: '-', max: '+' })
  })

  it('lists by fractional bounds as the contract orders numbers', async () => {
    const [a, b, c] = [order(tradeNo(1), { createdAt: T0 }), order(tradeNo(2), { createdAt: T0 + 1 }), order(tradeNo(3), { createdAt: T0 + 2 })]
    for (const o of [c, a, b]) await insert(o)
    expect(await store.listOpenOrders({ createdAtOrBefore: T0 + 1.5, limit: 10 })).toStrictEqual([a, b])
    expect(await store.listOpenOrders({ after: { createdAt: T0 + 0.5, outTradeNo: 'zzz' }, limit: 10 })).toStrictEqual([b, c])
    expect(await store.listOpenOrders({ createdAtOrBefore: Number.MAX_SAFE_INTEGER * 2, limit: 10 })).toStrictEqual([a, b, c])
  })

  it('keeps listing after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)', async () => {
    const o = await insert(order(tradeNo(1)))
    await client.script('FLUSH')
    expect(await store.listOpenOrders({ limit: 10 })).toStrictEqual([o])
    await client.script('FLUSH')
    await update(o, { status: 'closed' })
    expect(await store.listOpenOrders({ limit: 10 })).toEqual([])
  })
})

describe('RedisStore orders: purge (B-order-purge)', () => {
  it('files a closed order in oc at its deadline, takes it out when it leaves closed, and purges the hash with its member', async () => {
    const a = await insert(order(tradeNo('A'), { expiresAt: T0 + 5 }))
    const b = await insert(order(tradeNo('B'), { expiresAt: T0 + 3 }))
    const c = await insert(order(tradeNo('C'), { expiresAt: T0 + 4, status: 'closed' })) // inserted closed
    const closedA = await update(a, { status: 'closed' })
    const closedB = await update(b, { status: 'closed' })
    expect(await client.zrange(store.keys.closedOrders, 0, -1, 'WITHSCORES')).toEqual([tradeNo('B'), String(T0 + 3), tradeNo('C'), String(T0 + 4), tradeNo('A'), String(T0 + 5)])
    await expectIndexesInStep()
    await expectNoTtl()
    // Paid after all (a late payment applied): out of oc, and never purged.
    const paid = await update(closedB, { status: 'paid', paidAt: T0 + 9, transactionId: 'tx', authorizationId: 1 })
    await expectIndexesInStep()

    const commands = countCommands(client)
    expect(await store.purgeExpired({ now: T0 + 4 })).toMatchObject({ scenes: 0, sessions: 0, counters: 0, orders: 1, batches: 1, more: false })
    // One script run per batch, nothing else.
    expect(commands.byName()).toEqual({ evalsha: 1 })
    expect(await client.exists(store.keys.order(c.outTradeNo))).toBe(0)
    expect(await store.loadOrder(c.outTradeNo)).toBeNull()
    expect(await store.loadOrder(closedA.outTradeNo)).toStrictEqual(closedA)
    expect(await store.loadOrder(paid.outTradeNo)).toStrictEqual(paid)
    await expectIndexesInStep()
    expect(await store.purgeExpired({ now: T0 + 5 })).toMatchObject({ orders: 1 })
    // What stays of the paid order: its hash and its entries in the indexes of every order.
    expect(await names()).toEqual(['oa', 'oas:paid', 'oau:1', 'od:' + tradeNo('B')])
    await expectIndexesInStep()
  })

  it('passes over closed orders that record money, so a batch full of them still reaches the due one behind', async () => {
    for (let i = 0; i < 5; i++) await insert(order(tradeNo(`K${i}`), { status: 'closed', expiresAt: T0 + i, refundedFen: 1 }))
    await insert(order(tradeNo('P'), { status: 'closed', expiresAt: T0 + 1, paidAt: T0 }))
    const due = await insert(order(tradeNo('DUE'), { status: 'closed', expiresAt: T0 + 10 }))
    expect(await store.purgeExpired({ now: T0 + 10, batchSize: 2, maxBatches: 1 })).toMatchObject({ orders: 1, batches: 1, more: false })
    expect(await store.loadOrder(due.outTradeNo)).toBeNull()
    // The six kept stay, in oc too (a later write of them files them anew anyway).
    expect(await client.zcard(store.keys.closedOrders)).toBe(6)
    await expectIndexesInStep()
  })

  it('compares a fractional deadline exactly, and takes an oc member whose order is not closed out of oc alone', async () => {
    const half = await insert(order(tradeNo('H'), { status: 'closed', expiresAt: T0 + 0.5 }))
    expect(await store.purgeExpired({ now: T0 + 0.25, retentionMs: 0 })).toMatchObject({ orders: 0 })
    expect(await store.purgeExpired({ now: T0 + 1.5, retentionMs: 1.25 })).toMatchObject({ orders: 0 })
    expect(await store.purgeExpired({ now: T0 + 1.75, retentionMs: 1.25 })).toMatchObject({ orders: 1 })
    expect(await store.loadOrder(half.outTradeNo)).toBeNull()
    // A member written by hand for an open order: the purge drops the member, not the order.
    const open = await insert(order(tradeNo('O')))
    await client.zadd(store.keys.closedOrders, T0, open.outTradeNo)
    expect(await store.purgeExpired({ now: T0 + 1 })).toMatchObject({ orders: 0 })
    expect(await client.exists(store.keys.closedOrders)).toBe(0)
    expect(await store.loadOrder(open.outTradeNo)).toStrictEqual(open)
  })
})

describe('RedisStore orders: refusals', () => {
  it('refuses an order it cannot store faithfully, before sending anything', async () => {
    const bad: Array<[Partial<OrderRecord>, RegExp]> = [
      [{ createdAt: T0 + 0.5 }, /createdAt must be a safe integer/],
      [{ createdAt: -1 }, /createdAt must be a safe integer/],
      [{ createdAt: 2 ** 53 }, /createdAt must be a safe integer/],
      [{ amountFen: Number.NaN }, /amountFen must be a finite number/],
      [{ paidAt: Number.POSITIVE_INFINITY }, /paidAt must be a finite number/],
      [{ status: 'lost' as OrderRecord['status'] }, /unknown status/],
      [{ channel: 'h5' as OrderRecord['channel'] }, /unknown channel "h5"/],
      [{ channel: undefined as unknown as OrderRecord['channel'] }, /unknown channel/],
      [{ grant: { type: 'time' } as unknown as OrderRecord['grant'] }, /grant.days must be a finite number/],
      [{ refunds: [{ outRefundNo: 'R', refundId: 1 as unknown as string, amountFen: 1, at: T0 }] }, /refunds\[0\].refundId must be a string/],
    ]
    const commands = countCommands(client)
    for (const [over, message] of bad) {
      const attempt = store.saveOrder({ op: 'insert', order: order(tradeNo(1), over) })
      await expect(attempt).rejects.toBeInstanceOf(RedisStoreError)
      await expect(attempt).rejects.toMatchObject({ code: 'invalid_order', message: expect.stringMatching(message) })
    }
    expect(commands.total()).toBe(0)
    expect(await names()).toEqual([])
  })

  it('refuses to read a hash at an order key that it did not write', async () => {
    await client.hset(store.keys.order(tradeNo(1)), { status: 'open', userId: 'one' })
    await expect(store.loadOrder(tradeNo(1))).rejects.toMatchObject({ code: 'malformed_record' })
    await client.hset(store.keys.order(tradeNo(2)), { ...(await encoded(order(tradeNo(2)))), grant: '{"type":"time"}' })
    await expect(store.loadOrder(tradeNo(2))).rejects.toMatchObject({ code: 'malformed_record' })
  })

  it('refuses a 0.1.0 prefix (key layout 1) like every other script', async () => {
    await client.hset(store.keys.seq, 's', '3')
    await expect(store.saveOrder({ op: 'insert', order: order(tradeNo(1)) })).rejects.toThrow(/key layout 1 .*fresh prefix/)
    await expect(store.listOpenOrders({ limit: 10 })).rejects.toThrow(/key layout 1/)
    await expect(store.purgeExpired({ now: T0 })).rejects.toThrow(/key layout 1/)
    expect(await names()).toEqual(['seq'])
  })
})

/** The hash a stored order has, read back after saving it under a scratch prefix. */
async function encoded(o: OrderRecord): Promise<Record<string, string>> {
  const scratch = testPrefix()
  try {
    await insert(o, new RedisStore({ client, keyPrefix: scratch }))
    return await client.hgetall(`${scratch}od:${o.outTradeNo}`)
  } finally {
    await deleteKeysUnder(client, scratch)
  }
}
