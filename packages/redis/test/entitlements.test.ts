/**
 * The entitlement parts of RedisStore, checked by reading Redis directly: the queue and active
 * indexes (a user's load reads the active ones and the head only), the ledger and idempotency
 * values, `endSessions` on the session keys, their TTLs and the per-user session index, the
 * refusal of a 0.1.0 prefix, and the round trips of the entitlement operations.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { NEW_USER, type ChangeSet, type NewAuthorization } from '@scanauth/core/store'
import { checkInvariants, ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { queueMember } from '../src/keys'
import { checkIndexes, connect, countCommands, deleteKeysUnder, dumpRecords, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const DAY = 24 * 3600_000
const GRACE_MS = 600_000

let client: Redis
let prefix: string
let store: RedisStore
let clock: ManualClock
let auth: ScanAuth

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
  clock = new ManualClock(T0)
  auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
})

afterEach(async () => {
  await deleteKeysUnder(client, prefix)
  await client.quit()
})

async function commitOk(changes: ChangeSet) {
  const result = await store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

const points = (createdAt: number, status: NewAuthorization['status'] = 'pending'): NewAuthorization => ({
  type: 'points',
  status,
  startAt: createdAt,
  endAt: null,
  remainingPoints: 1,
  totalPoints: 1,
  source: 'shop',
  createdAt,
  updatedAt: createdAt,
})

const newUser = (openid: string) => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })

async function sessionOf(openid: string): Promise<{ token: string; sceneStr: string }> {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  await auth.handleScan({ sceneStr, openid })
  const status = await auth.getStatus(sceneStr)
  if (status.status !== 'authorized') throw new Error(`unexpected ${status.status}`)
  return { token: status.sessionToken, sceneStr }
}

describe('queue and active indexes', () => {
  it('files pending ones in the queue by (createdAt, id), ties past a digit boundary included; a load reads the head only', async () => {
    // Ids 1..12 with one createdAt: as strings "10" < "9", zero-padded members sort as numbers.
    const ids = await commitOk({ user: { op: 'insert', user: newUser('o'), insertAuthorizations: [...Array.from({ length: 12 }, () => points(T0 + 5)), points(T0, 'active')] } })
    const k = store.keys
    const members = await client.zrange(k.queue(1), 0, -1)
    expect(members).toEqual(ids.authorizationIds.slice(0, 12).map(queueMember))
    expect(await client.smembers(k.activeAuthorizations(1))).toEqual(['13'])

    const counter = countCommands(client)
    const loaded = await store.load({ userId: 1 })
    expect(counter.byName()).toEqual({ evalsha: 1 })
    expect(loaded.user?.authorizations.map((a) => a.id)).toEqual([13, 1])
    expect((await store.load({ openid: 'o', wholeQueue: true })).user?.authorizations.map((a) => a.id)).toEqual([13, ...ids.authorizationIds.slice(0, 12)])
    expect(await checkIndexes(client, prefix, await dumpRecords(client, prefix))).toEqual([])
  })

  it('moves an authorization between the indexes as core changes its status, and keeps every record in one hash', async () => {
    await auth.grant({ openid: 'alice', type: 'points', points: 2 })
    await auth.grant({ openid: 'alice', type: 'points', points: 3 })
    const third = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 3600 })
    const k = store.keys
    expect(await client.smembers(k.activeAuthorizations(1))).toEqual(['1'])
    expect(await client.zcard(k.queue(1))).toBe(2)
    await auth.revokeAuthorization({ authorizationId: 1, reason: 'refund' })
    expect(await client.smembers(k.activeAuthorizations(1))).toEqual(['2'])
    expect(await client.zrange(k.queue(1), 0, -1)).toEqual([queueMember(third.id)])
    expect((await client.hget(k.authorizations, '1'))?.split('|').slice(0, 2)).toEqual(['1', 'r'])
    expect(await client.hlen(k.authorizations)).toBe(3)
    const snapshot = await dumpRecords(client, prefix)
    expect(checkInvariants(snapshot)).toEqual([])
    expect(await checkIndexes(client, prefix, snapshot)).toEqual([])
  })

  it('a user with 10,000 queued authorizations still loads two of them in one round trip', async () => {
    const ids = await commitOk({ user: { op: 'insert', user: newUser('big'), insertAuthorizations: [points(T0, 'active'), ...Array.from({ length: 10_000 }, (_, i) => points(T0 + 1 + i))] } })
    const counter = countCommands(client)
    const loaded = await store.load({ userId: ids.userId as number })
    expect(counter.total()).toBe(1)
    expect(loaded.user?.authorizations.map((a) => a.id)).toEqual([1, 2])
    // The whole queue is read in slices (Lua's unpack() would refuse 10,000 values at once).
    expect((await store.load({ userId: ids.userId as number, wholeQueue: true })).user?.authorizations).toHaveLength(10_001)
  })
})

describe('ledger and idempotency records', () => {
  it('packs free text holding separators, quotes and empty strings, keeping null apart from ""', async () => {
    const ids = await commitOk({
      user: { op: 'insert', user: newUser('o'), insertAuthorizations: [{ ...points(T0), source: '' }] },
      ledger: [
        { userId: NEW_USER, authorizationId: { inserted: 0 }, kind: 'grant', points: 1, remainingPoints: 1, at: T0 + 0.5, source: '', idempotencyKey: 'a|"b"\n', reason: null },
        { userId: NEW_USER, authorizationId: { inserted: 0 }, kind: 'revoke', points: 0, remainingPoints: 1, at: T0, source: null, idempotencyKey: null, reason: '退款 | ok' },
      ],
      idempotency: { key: 'pay|1 ', fingerprint: 'fp', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
    })
    const k = store.keys
    expect(await client.zrange(k.ledger(1), 0, -1)).toEqual([`1|1|g|1|1|${T0 + 0.5}|["","a|\\"b\\"\\n"]`, `2|1|r|0|1|${T0}|[null,null,"退款 | ok"]`])
    expect(await client.get(k.idempotency('pay|1 '))).toBe(`1|${T0}|["fp"]`)
    const [grant, revoke] = await store.listLedger({ userId: ids.userId as number, afterId: 0, limit: 10 })
    expect(grant).toMatchObject({ source: '', idempotencyKey: 'a|"b"\n', reason: null, at: T0 + 0.5 })
    expect(revoke).toMatchObject({ source: null, idempotencyKey: null, reason: '退款 | ok' })
    expect((await store.load({ idempotencyKey: 'pay|1 ' })).idempotency).toEqual({ key: 'pay|1 ', fingerprint: 'fp', authorizationId: 1, result: null, createdAt: T0 })
  })

  it('an idempotency conflict writes nothing: no counter moves, no key appears', async () => {
    await commitOk({ idempotency: { key: 'k', fingerprint: 'f', authorizationId: null, result: '{"status":"ok"}', createdAt: T0 } })
    const before = { seq: await client.hgetall(store.keys.seq), keys: (await dumpRecords(client, prefix)).idempotency.length }
    const refused = await store.commit({
      user: { op: 'insert', user: newUser('late'), insertAuthorizations: [points(T0)] },
      ledger: [{ userId: NEW_USER, authorizationId: { inserted: 0 }, kind: 'grant', points: 1, remainingPoints: 1, at: T0, source: 'shop', idempotencyKey: 'k', reason: null }],
      idempotency: { key: 'k', fingerprint: 'other', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
    })
    expect(refused).toEqual({ ok: false, conflict: 'idempotency' })
    expect({ seq: await client.hgetall(store.keys.seq), keys: (await dumpRecords(client, prefix)).idempotency.length }).toEqual(before)
    expect(await client.exists(store.keys.openid('late'), store.keys.authorizations, store.keys.ledger(1))).toBe(0)
  })

  it('refuses a reference to an authorization the change set does not insert, before sending anything', async () => {
    const counter = countCommands(client)
    const entry = { userId: 1, kind: 'consume' as const, points: -1, remainingPoints: 0, at: T0, source: null, idempotencyKey: null, reason: null }
    const refused = { name: 'RedisStoreError', code: 'invalid_change_set' }
    await expect(store.commit({ ledger: [{ ...entry, authorizationId: { inserted: 0 } }] })).rejects.toMatchObject(refused)
    await expect(store.commit({ idempotency: { key: 'k', fingerprint: 'f', authorizationId: { inserted: -1 }, result: null, createdAt: T0 } })).rejects.toMatchObject(refused)
    expect(counter.total()).toBe(0)
  })
})

describe('endSessions', () => {
  it('rewrites the session with expiresAt = at and the grace as TTL, the latest-session pointer too', async () => {
    const { token, sceneStr } = await sessionOf('alice')
    const k = store.keys
    clock.advance(DAY)
    expect(await auth.revokeSession(token)).toBe(true)
    const at = T0 + DAY
    expect((await client.get(k.session(token)))?.split('|')[4]).toBe(String(at))
    for (const key of [k.session(token), k.latestSession(1)]) {
      const ttl = await client.pttl(key)
      expect(ttl, key).toBeGreaterThan(GRACE_MS - 5000)
      expect(ttl, key).toBeLessThanOrEqual(GRACE_MS)
    }
    expect(await client.exists(k.userSessions(1))).toBe(0)
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
    // Gone for good once the grace is over: the poll then finds no session and still answers expired.
    await client.del(k.session(token), k.latestSession(1))
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
  })

  it('keeps the user index to live sessions: tidies tokens whose key is gone and those over by the clock', async () => {
    const a = await sessionOf('alice')
    const b = await sessionOf('alice')
    const k = store.keys
    expect(await client.zcard(k.userSessions(1))).toBe(2)
    await client.del(k.session(a.token)) // as if its TTL had run out
    expect(await store.endSessions({ userId: 1 }, clock.now())).toBe(1)
    expect(await client.exists(k.userSessions(1))).toBe(0)
    expect(await auth.verifySession(b.token)).toBeNull()
    // A session inserted after the others are over drops them from the index (the trial is over
    // too: the scan answers need_purchase, with a session all the same).
    await sessionOf('alice')
    expect(await client.zcard(k.userSessions(1))).toBe(1)
    clock.advance(200 * DAY)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect((await auth.handleScan({ sceneStr, openid: 'alice' })).result).toBe('need_purchase')
    expect(await client.zrange(k.userSessions(1), 0, -1)).toEqual([await client.get(k.latestSession(4))])
  })

  it('a token naming no session ends nothing and writes nothing', async () => {
    expect(await store.endSessions({ token: 'nope' }, T0)).toBe(0)
    expect(await store.endSessions({ userId: 42 }, T0)).toBe(0)
    expect(await dumpRecords(client, prefix)).toMatchObject({ sessions: [], users: [] })
  })
})

describe('a 0.1.0 prefix (key layout 1)', () => {
  it('is refused by every script instead of being misread; a fresh prefix is marked with layout 2', async () => {
    // What 0.1.0 left: counters without a layout field, a user with its live authorizations in al:1.
    await client.hset(store.keys.seq, { s: '1', u: '1', a: '1', t: '0' })
    await client.set(store.keys.user(1), `1|${T0}|${T0}|0|alice`)
    await client.set(store.keys.openid('alice'), '1')
    await client.hset(`${prefix}al:1`, '1', `a|p|${T0}||5|5|${T0}|${T0}|shop`)
    const refusal = /key layout 1 .*fresh prefix/
    await expect(store.load({ openid: 'alice' })).rejects.toThrow(refusal)
    await expect(auth.grant({ openid: 'alice', type: 'points', points: 1 })).rejects.toThrow(refusal)
    await expect(store.endSessions({ userId: 1 }, T0)).rejects.toThrow(refusal)
    await expect(store.listActiveAuthorizations({ type: 'points', pointsBelow: 5, limit: 10 })).rejects.toThrow(refusal)
    expect(await client.hgetall(store.keys.seq)).toEqual({ s: '1', u: '1', a: '1', t: '0' })

    const fresh = new RedisStore({ client, keyPrefix: testPrefix() })
    try {
      expect((await fresh.load({ openid: 'alice' })).user).toBeNull()
      await fresh.commit({ user: { op: 'insert', user: newUser('alice'), insertAuthorizations: [] } })
      expect(await client.hmget(fresh.keys.seq, 'layout', 'ai')).toEqual(['2', '1'])
    } finally {
      await deleteKeysUnder(client, fresh.keyPrefix)
    }
  })
})

describe('round trips of the entitlement operations', () => {
  it('grant and consume with a key, their repeats, revocation, listLedger, revokeSession, getUser', async () => {
    const { token } = await sessionOf('alice')
    await auth.grant({ openid: 'alice', type: 'points', points: 5 })
    const counter = countCommands(client)
    const trips = async (op: () => Promise<unknown>) => {
      counter.reset()
      await op()
      return counter.byName()
    }
    const grant = () => auth.grant({ openid: 'alice', type: 'points', points: 5, idempotencyKey: 'pay-1' })
    expect(await trips(grant)).toEqual({ evalsha: 2 }) // load (user + key), commit
    expect(await trips(grant)).toEqual({ evalsha: 1, hget: 1 }) // load finds the key; the authorization by id
    const consume = () => auth.consume({ sessionToken: token, idempotencyKey: 'tap-1' })
    expect(await trips(consume)).toEqual({ evalsha: 2 }) // session, its user and the key in one load (B-load-2); commit
    expect(await trips(consume)).toEqual({ evalsha: 1 }) // the load finds the key
    expect(await trips(() => auth.revokeAuthorization({ authorizationId: 2 }))).toEqual({ hget: 1, evalsha: 2 })
    expect(await trips(() => auth.listLedger({ userId: 1 }))).toEqual({ zrangebyscore: 1 })
    expect(await trips(() => auth.getUser({ openid: 'alice' }))).toEqual({ evalsha: 1 })
    expect(await trips(() => auth.revokeSession(token))).toEqual({ evalsha: 1 })
    expect(checkInvariants(await dumpRecords(client, prefix))).toEqual([])
  })
})
