/**
 * RedisStore's operator reads (listLiveSessions, listUsers, listOrders, schemaState), checked on a
 * real Redis: one round trip each and never a SCAN or KEYS (a page reads one index), the key layout
 * `schemaState` reports for an empty prefix, a current one and one of 0.1.0 (answered, where the
 * scripts refuse it), and the lex bounds `listOrders` turns its cursor and time range into. The Store contract's cases are in
 * testkit (`storeOperatorReadsSuite`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { NEW_USER } from '@scanauth/core/store'
import { LAYOUT_VERSION, RedisStore } from '../src/index'
import { orderMember } from '../src/keys'
import { orderListRange } from '../src/operator-reads'
import { connect, countCommands, deleteKeysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

let client: Redis
let prefix: string
let store: RedisStore

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
})

afterEach(async () => {
  await store.close()
  await deleteKeysUnder(client, prefix)
  await client.quit()
})

/** Inserts a user with a session through a commit; answers the user's id. */
async function userWithSession(openid: string, token: string): Promise<number> {
  const result = await store.commit({
    user: { op: 'insert', user: { openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] },
    session: { token, userId: NEW_USER, deviceId: 'tv', sceneId: 1, createdAt: T0, expiresAt: T0 + 3_600_000 },
  })
  if (!result.ok) throw new Error(result.conflict)
  return result.ids.userId as number
}

describe('RedisStore operator reads', () => {
  it('answers each in one round trip, never with SCAN or KEYS', async () => {
    const userId = await userWithSession('o-1', 'tok-1')
    await store.saveOrder({
      op: 'insert',
      order: {
        outTradeNo: 'SA00000000000000000000000001', userId, planId: 'month', description: 'm', amountFen: 1, grant: { type: 'points', points: 1 },
        sceneStr: null, channel: 'native', status: 'paid', createdAt: T0, expiresAt: T0 + 1, updatedAt: T0, paidAt: T0, transactionId: 'tx', authorizationId: 1,
        refundedFen: 0, refunds: [], version: 1,
      },
    })
    // Once, so that the server has cached every script (EVALSHA then, never EVAL).
    const reads = async () => {
      expect(await store.listLiveSessions({ userId, now: T0, limit: 10 })).toHaveLength(1)
      expect(await store.listUsers({ limit: 10 })).toHaveLength(1)
      for (const query of [{}, { userId }, { status: 'paid' as const }, { userId, status: 'paid' as const, createdFrom: T0, createdBefore: T0 + 1 }]) {
        expect(await store.listOrders({ ...query, limit: 10 })).toHaveLength(1)
      }
    }
    await reads()
    const commands = countCommands(client)
    await reads()
    expect(commands.byName()).toEqual({ evalsha: 6 })
    commands.reset()
    expect(await store.schemaState()).toEqual({ version: Number(LAYOUT_VERSION), latest: Number(LAYOUT_VERSION), pending: [], exists: true })
    expect(commands.byName()).toEqual({ exists: 1, hget: 1 })
  })

  it('schemaState: 0 for an empty prefix, the layout once written, 1 for data of 0.1.0 (answered, where the scripts refuse it)', async () => {
    expect(await store.schemaState()).toEqual({ version: 0, latest: 2, pending: [], exists: true })
    await userWithSession('o-1', 'tok-1')
    expect(await store.schemaState()).toEqual({ version: 2, latest: 2, pending: [], exists: true })

    const old = testPrefix()
    const oldStore = new RedisStore({ client, keyPrefix: old })
    try {
      await client.hset(`${old}seq`, 'u', '1')
      expect(await oldStore.schemaState()).toEqual({ version: 1, latest: 2, pending: [], exists: true })
      await expect(oldStore.listUsers({ limit: 1 })).rejects.toThrow(/key layout 1 .*fresh prefix/)
      await client.hset(`${old}seq`, 'layout', 'x')
      await expect(oldStore.schemaState()).rejects.toMatchObject({ code: 'malformed_record' })
    } finally {
      await deleteKeysUnder(client, old)
    }
  })

  it('turns the cursor and the time range of listOrders into exact lex bounds', () => {
    const member = (at: number, no: string) => orderMember(at, no)
    const digits = (at: number) => String(at).padStart(16, '0')
    expect(orderListRange({})).toEqual({ min: '-', max: '+' })
    expect(orderListRange({ after: { createdAt: T0, outTradeNo: 'SA1' } })).toEqual({ min: `(${member(T0, 'SA1')}`, max: '+' })
    expect(orderListRange({ createdFrom: T0 })).toEqual({ min: `[${digits(T0)}`, max: '+' })
    expect(orderListRange({ createdFrom: T0 + 0.5 })).toEqual({ min: `[${digits(T0 + 1)}`, max: '+' })
    expect(orderListRange({ createdBefore: T0 })).toEqual({ min: '-', max: `(${digits(T0)}` })
    expect(orderListRange({ createdBefore: T0 + 0.5 })).toEqual({ min: '-', max: `(${digits(T0 + 1)}` })
    // The later lower bound wins: the cursor at createdFrom's time, or createdFrom past the cursor.
    expect(orderListRange({ createdFrom: T0, after: { createdAt: T0, outTradeNo: 'SA1' } })?.min).toBe(`(${member(T0, 'SA1')}`)
    expect(orderListRange({ createdFrom: T0 + 1, after: { createdAt: T0, outTradeNo: 'SA1' } })?.min).toBe(`[${digits(T0 + 1)}`)
    expect(orderListRange({ after: { createdAt: T0 + 0.5, outTradeNo: 'SA1' } })?.min).toBe(`[${digits(T0 + 1)}`)
    // Outside every stored time (safe integers ≥ 0): everything, or nothing.
    expect(orderListRange({ createdFrom: -5, after: { createdAt: -1, outTradeNo: 'x' }, createdBefore: 2 ** 60 })).toEqual({ min: '-', max: '+' })
    expect(orderListRange({ createdBefore: 0 })).toBeNull()
    expect(orderListRange({ createdFrom: 2 ** 60 })).toBeNull()
    expect(orderListRange({ after: { createdAt: 2 ** 60, outTradeNo: '' } })).toBeNull()
  })
})
