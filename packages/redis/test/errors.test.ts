/**
 * RedisStoreError: every code the store raises, each reached the way an application would meet it
 * (bad options, a query or change set that breaks the Store contract, values in Redis the store did
 * not write), plus the replies no real script gives, fed straight to the functions that read them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { NEW_USER, type LoadQuery } from '@scanauth/core/store'
import { RedisStore, RedisStoreError, type RedisStoreErrorCode } from '../src/index'
import { parseCommitReply } from '../src/commit-args'
import { decodeLoadReply } from '../src/load'
import { connect, countCommands, deleteKeysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const SCENE = `pc_${'0'.repeat(31)}1`

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

/** The error `run` throws or rejects with, checked to be a RedisStoreError with `code`. */
async function storeError(code: RedisStoreErrorCode, run: () => unknown): Promise<RedisStoreError> {
  let caught: unknown
  try {
    await run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(RedisStoreError)
  const error = caught as RedisStoreError
  expect(error.code).toBe(code)
  expect(error.name).toBe('RedisStoreError')
  expect(error.message.startsWith('[@scanauth/redis] ')).toBe(true)
  return error
}

describe('invalid_options', () => {
  it('names the option that is wrong', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ client: undefined }, /client: client must be an ioredis Redis or Cluster/],
      [{ client: {} }, /client/],
      [{ client: 'redis://127.0.0.1' }, /client/],
      [{ keyPrefix: '' }, /keyPrefix/],
      [{ keyPrefix: 'x'.repeat(257) }, /keyPrefix/],
      [{ expiryGraceSeconds: -1 }, /expiryGraceSeconds/],
      [{ commitReceiptSeconds: 1.5 }, /commitReceiptSeconds/],
    ]
    for (const [options, named] of cases) {
      const error = await storeError('invalid_options', () => new RedisStore({ client, ...options } as never))
      expect(error.message).toMatch(/^\[@scanauth\/redis\] new RedisStore: /)
      expect(error.message).toMatch(named)
    }
  })
})

describe('invalid_query and invalid_change_set', () => {
  it('refuses a load by userId and openid at once, before sending anything', async () => {
    const counter = countCommands(client)
    const query: LoadQuery = { userId: 1, openid: 'alice' }
    const error = await storeError('invalid_query', () => store.load(query))
    expect(error.message).toMatch(/userId or openid, not both/)
    expect(counter.total()).toBe(0)
  })

  it('refuses a scene that points at NEW_USER when no user is inserted, and writes nothing', async () => {
    const scene = {
      id: 1, sceneStr: SCENE, deviceId: 'd', status: 'authorized' as const, userId: NEW_USER, createdAt: T0, expiresAt: T0 + 1000, authorizedAt: T0,
      requestedFrom: null, pollSecretHash: null, confirmation: null, version: 2,
    }
    const error = await storeError('invalid_change_set', () => store.commit({ scene: { op: 'update', scene, expectedVersion: 1 } }))
    expect(error.message).toMatch(/NEW_USER/)
    expect(await client.exists(store.keys.scene(SCENE), store.keys.seq)).toBe(0)
  })
})

describe('malformed_record', () => {
  const user = (openid: string) => `1|${T0}|${T0}|0|${openid}`

  it('reports a scene value it did not write, quoting its start', async () => {
    await client.set(store.keys.scene(SCENE), `1|1||z|${T0}|${T0 + 1000}||dev`)
    const error = await storeError('malformed_record', () => store.load({ sceneStr: SCENE }))
    expect(error.message).toBe(`[@scanauth/redis] malformed scene record "1|1||z|${T0}|${T0 + 1000}||dev"`)
  })

  it('reports a user value it did not write, found by openid', async () => {
    await client.set(store.keys.openid('alice'), '1')
    await client.set(store.keys.user(1), `1|${T0}|${T0}|yes|alice`)
    const error = await storeError('malformed_record', () => store.load({ openid: 'alice' }))
    expect(error.message).toMatch(/malformed user record/)
  })

  it('reports an authorization value it did not write, and an authorization id that is not a number', async () => {
    await client.set(store.keys.user(1), user('bob'))
    await client.hset(store.keys.authorizations, '1', `1|a|q|${T0}||5|5|${T0}|${T0}|shop`)
    await client.sadd(store.keys.activeAuthorizations(1), '1')
    expect((await storeError('malformed_record', () => store.load({ userId: 1 }))).message).toMatch(/malformed authorization record/)

    await client.del(store.keys.activeAuthorizations(1))
    await client.sadd(store.keys.activeAuthorizations(1), 'one')
    await client.hset(store.keys.authorizations, 'one', `1|a|p|${T0}||5|5|${T0}|${T0}|shop`)
    expect((await storeError('malformed_record', () => store.load({ userId: 1 }))).message).toMatch(/malformed authorization id record "one"/)
  })

  it('reports a session value it did not write, and cuts a long value short', async () => {
    await client.set(store.keys.session('tok'), 'x'.repeat(500))
    const error = await storeError('malformed_record', () => store.load({ sessionToken: 'tok' }))
    expect(error.message).toBe(`[@scanauth/redis] malformed session record "${'x'.repeat(80)}"`)
  })
})

describe('unexpected_reply', () => {
  // The scripts never answer these; the store says so instead of inventing a result.
  it('refuses a commit reply of an unknown shape', async () => {
    for (const reply of [null, 42, ['ok'], 'ok|1|2', 'nope|||', 'conflict|session']) {
      const error = await storeError('unexpected_reply', () => parseCommitReply(reply))
      expect(error.message).toMatch(/^\[@scanauth\/redis\] unexpected commit reply /)
    }
    const long = await storeError('unexpected_reply', () => parseCommitReply('y'.repeat(300)))
    expect(long.message).toBe(`[@scanauth/redis] unexpected commit reply "${'y'.repeat(79)}…`)
  })

  it('refuses a load reply of an unknown shape', async () => {
    for (const reply of [null, 'ok', [null, null, null]]) {
      await storeError('unexpected_reply', () => decodeLoadReply({ userId: 1 }, reply))
    }
  })
})
