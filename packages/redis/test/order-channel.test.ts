/**
 * RedisStore and an order's payment channel (`OrderRecord.channel`, docs/behaviour.md B-phone-1),
 * checked by reading and writing Redis directly: the `channel` field of the order hash, a hash
 * written before the field existed (no `channel`) read as `native` by every read (loadOrder,
 * listOpenOrders, listOrders) and given the field by its next update, a stored value the store
 * does not know refused as a malformed record, and a channel encodeOrder does not know refused
 * before anything is sent. The rest of the order hash: orders.test.ts; the Store contract: testkit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import type { OrderRecord } from '@scanauth/core'
import { RedisStore, RedisStoreError } from '../src/index'
import { decodeOrder, encodeOrder } from '../src/codec-orders'
import { connect, countCommands, deleteKeysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const NO = 'SA00000000000000000000000001'

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
  await client.quit()
})

function order(over: Partial<OrderRecord> = {}): OrderRecord {
  return {
    outTradeNo: NO, userId: 1, planId: 'month', description: '月卡', amountFen: 1500, grant: { type: 'time', days: 30 },
    sceneStr: 'scene-1', channel: 'native', status: 'open', createdAt: T0, expiresAt: T0 + 900_000, updatedAt: T0,
    paidAt: null, transactionId: null, authorizationId: null, refundedFen: 0, refunds: [], version: 1, ...over,
  }
}

/** The pairs encodeOrder gives, as an object (what HGETALL of the stored order answers). */
const fields = (o: OrderRecord): Record<string, string> => {
  const pairs = encodeOrder(o)
  return Object.fromEntries(Array.from({ length: pairs.length / 2 }, (_, i) => [pairs[2 * i], pairs[2 * i + 1]]))
}

describe('RedisStore orders: the channel field', () => {
  it('writes channel as a field of the hash, native included, and reads each back as written', async () => {
    const jsapi = order({ channel: 'jsapi' })
    const native = order({ outTradeNo: 'SA00000000000000000000000002' })
    for (const o of [jsapi, native]) expect(await store.saveOrder({ op: 'insert', order: o })).toBe(true)
    expect(await client.hget(store.keys.order(jsapi.outTradeNo), 'channel')).toBe('jsapi')
    expect(await client.hget(store.keys.order(native.outTradeNo), 'channel')).toBe('native')
    expect(await client.hgetall(store.keys.order(jsapi.outTradeNo))).toEqual(fields(jsapi))
    expect(await store.loadOrder(jsapi.outTradeNo)).toStrictEqual(jsapi)
    expect(await store.loadOrder(native.outTradeNo)).toStrictEqual(native)
  })

  it('reads a hash without channel (written before it existed) as native everywhere, and the next update writes it', async () => {
    const old = order()
    await store.saveOrder({ op: 'insert', order: old })
    // What a release before the field left: the same hash without it (the indexes do not name it).
    expect(await client.hdel(store.keys.order(NO), 'channel')).toBe(1)
    expect(await store.loadOrder(NO)).toStrictEqual(old)
    expect(await store.listOpenOrders({ limit: 10 })).toStrictEqual([old])
    expect(await store.listOrders({ limit: 10 })).toStrictEqual([old])
    const paid = { ...old, status: 'paid' as const, paidAt: T0 + 1, version: 2 }
    expect(await store.saveOrder({ op: 'update', order: paid, expectedVersion: 1 })).toBe(true)
    expect(await client.hget(store.keys.order(NO), 'channel')).toBe('native')
    expect(await store.listOrders({ limit: 10 })).toStrictEqual([paid])
    // The decoder on its own: no field is native, any other text is not a hash this store wrote.
    const { channel: _, ...without } = fields(old)
    expect(decodeOrder(NO, without)).toStrictEqual(old)
    expect(() => decodeOrder(NO, { ...without, channel: 'h5' })).toThrow(expect.objectContaining({ code: 'malformed_record' }))
    expect(() => decodeOrder(NO, { ...without, channel: '' })).toThrow(expect.objectContaining({ code: 'malformed_record' }))
  })

  it('refuses to read a stored channel it does not know', async () => {
    await store.saveOrder({ op: 'insert', order: order() })
    await client.hset(store.keys.order(NO), 'channel', 'Native')
    await expect(store.loadOrder(NO)).rejects.toMatchObject({ code: 'malformed_record' })
    await expect(store.listOpenOrders({ limit: 10 })).rejects.toMatchObject({ code: 'malformed_record' })
  })

  it('refuses to write a channel it does not know (invalid_order), sending nothing and leaving the stored order as it was', async () => {
    const stored = order({ channel: 'jsapi' })
    await store.saveOrder({ op: 'insert', order: stored })
    const commands = countCommands(client)
    for (const channel of ['h5', 'JSAPI', '', null, undefined]) {
      const bad = { ...stored, channel: channel as unknown as OrderRecord['channel'], version: 2 }
      expect(() => encodeOrder(bad)).toThrow(RedisStoreError)
      const attempt = store.saveOrder({ op: 'update', order: bad, expectedVersion: 1 })
      await expect(attempt).rejects.toMatchObject({ code: 'invalid_order', message: expect.stringMatching(/unknown channel/) })
    }
    expect(commands.total()).toBe(0)
    expect(await store.loadOrder(NO)).toStrictEqual(stored)
  })
})
