/**
 * RedisStore, checked by reading Redis directly: the key layout and packed values, TTLs, version
 * conflicts, NEW_USER resolution, script caching, client ownership, round trips and memory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Cluster, Redis } from 'ioredis'
import { createScanAuth, type ScanAuth, type SceneRecord } from '@scanauth/core'
import { NEW_USER, type ChangeSet } from '@scanauth/core/store'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { RedisStore, RedisStoreError } from '../src/index'
import { commitArgs, parseCommitReply } from '../src/commit-args'
import { COMMIT_SCRIPT } from '../src/scripts/commit'
import { LuaScript } from '../src/scripts/lua-script'
import { connect, countCommands, deleteKeysUnder, keysUnder, REDIS_URL, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const SCENE_MS = 300_000
const SESSION_MS = 168 * 3600_000
const DAY = 24 * 3600_000
const GRACE_MS = 600_000

const hex = (n: number) => `pc_${n.toString(16).padStart(32, '0')}`

function pendingScene(sceneStr: string, at = T0, lifetime = SCENE_MS): Omit<SceneRecord, 'id'> {
  return {
    sceneStr, deviceId: 'dev', status: 'pending', userId: null, createdAt: at, expiresAt: at + lifetime, authorizedAt: null,
    requestedFrom: null, pollSecretHash: null, confirmation: null, version: 1,
  }
}

const newUser = (openid: string) => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })

let client: Redis
let prefix: string
let store: RedisStore
let clock: ManualClock
let auth: ScanAuth
const extraClients: Redis[] = []

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
  clock = new ManualClock(T0)
  auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
})

afterEach(async () => {
  await deleteKeysUnder(client, prefix)
  await Promise.all([client, ...extraClients.splice(0)].map((c) => c.quit()))
})

async function commitOk(changes: ChangeSet, on: RedisStore = store) {
  const result = await on.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

/**
 * Key names under the prefix, with receipts (random names) counted but not listed. Counters (`c:`,
 * the rate limits' windows, named by core; counters.test.ts checks them) are left out.
 */
async function layout(): Promise<{ names: string[]; receipts: number }> {
  const all = (await keysUnder(client, prefix)).map((k) => k.slice(prefix.length)).filter((k) => !k.startsWith('c:'))
  return { names: all.filter((k) => !k.startsWith('r:')).sort(), receipts: all.filter((k) => k.startsWith('r:')).length }
}

describe('key layout', () => {
  it('writes the documented keys, types and packed values', async () => {
    const { sceneStr } = await auth.createScene({ deviceId: 'tv|1' })
    const scan = await auth.handleScan({ sceneStr, openid: 'alice|cn' })
    expect(scan).toEqual({ result: 'authorized', userId: 1 })
    await auth.grant({ userId: 1, type: 'points', points: 5, source: 'shop|x' })
    clock.advance(7 * DAY)
    // The session (7 days) has expired too, but the poll still runs the activation step first:
    // the free trial retires and the points activate.
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
    const token = (await client.get(`${prefix}ls:1`)) as string

    expect(await layout()).toEqual({
      names: ['a', 'aa:1', 'ap', 'l:1', `ls:1`, 'o:alice|cn', `s:${sceneStr}`, 'seq', `t:${token}`, 'u:1', 'us:1'].sort(),
      receipts: 4,
    })
    const k = store.keys
    // createScene counted itself against its rate limits: counters at c:<key>, count|expiresAt.
    const counters = (await keysUnder(client, `${prefix}c:`)).sort()
    expect(counters.length).toBeGreaterThan(0)
    for (const counter of counters) expect(await client.get(counter)).toMatch(/^1\|\d+$/)
    expect(await client.type(k.seq)).toBe('hash')
    // grant + activate of the trial, grant of the points, expire + activate on the poll.
    // `ai`: the reminders' indexes hold every active authorization (kept since the first commit).
    expect(await client.hgetall(k.seq)).toEqual({ layout: '2', ai: '1', s: '1', u: '1', a: '2', t: '1', l: '5' })
    // version|id|userId|status|createdAt|expiresAt|authorizedAt|deviceId
    expect(await client.get(k.scene(sceneStr))).toBe(`2|1|1|a|${T0}|${T0 + SCENE_MS}|${T0}|tv|1`)
    // version|createdAt|lastSeenAt|hasClaimedFree|openid (the grant and the activation bumped the version)
    expect(await client.get(k.user(1))).toBe(`3|${T0}|${T0}|1|alice|cn`)
    expect(await client.get(k.openid('alice|cn'))).toBe('1')
    // userId|status|type|startAt|endAt|remainingPoints|totalPoints|createdAt|updatedAt|source, by id
    const later = T0 + 7 * DAY
    expect(await client.hgetall(k.authorizations)).toEqual({
      '1': `1|e|t|${T0}|${T0 + 7 * DAY}|0|0|${T0}|${later}|free`,
      '2': `1|a|p|${T0}||5|5|${T0}|${later}|shop|x`,
    })
    expect(await client.smembers(k.activeAuthorizations(1))).toEqual(['2'])
    expect(await client.exists(k.queue(1))).toBe(0)
    // The reminders' indexes: the active points one by its points left; the expired trial left
    // <p>ae, which Redis removed once empty.
    expect(await client.zrange(k.activeByPoints, 0, -1, 'WITHSCORES')).toEqual(['0000000000000002', '5'])
    expect(await client.exists(k.activeByEnd)).toBe(0)
    // id|authorizationId|kind|points|remainingPoints|at|[source, idempotencyKey, reason]
    expect(await client.zrange(k.ledger(1), 0, -1, 'WITHSCORES')).toEqual([
      `1|1|g|0|0|${T0}|["free"]`, '1',
      `2|1|a|0|0|${T0}|[]`, '2',
      `3|2|g|5|5|${T0}|["shop|x"]`, '3',
      `4|1|e|0|0|${later}|[]`, '4',
      `5|2|a|0|5|${later}|[]`, '5',
    ])
    expect(await client.zrange(k.userSessions(1), 0, -1, 'WITHSCORES')).toEqual([token, String(T0 + SESSION_MS)])
    // id|userId|sceneId|createdAt|expiresAt|deviceId
    expect(await client.get(k.session(token))).toBe(`1|1|1|${T0}|${T0 + SESSION_MS}|tv|1`)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('round-trips free text holding the separator and fractional times', async () => {
    await commitOk({ scene: { op: 'insert', scene: { ...pendingScene(hex(1)), deviceId: 'a|b||c', expiresAt: T0 + 0.25 } } })
    expect((await store.load({ sceneStr: hex(1) })).scene).toMatchObject({ deviceId: 'a|b||c', expiresAt: T0 + 0.25 })
  })

  it('reports a value it did not write instead of misreading it', async () => {
    await client.set(store.keys.scene(hex(9)), 'not a scene')
    await expect(store.load({ sceneStr: hex(9) })).rejects.toMatchObject({ name: 'RedisStoreError', code: 'malformed_record' })
  })

  it('keeps stores under different prefixes apart', async () => {
    const otherPrefix = testPrefix()
    const other = new RedisStore({ client, keyPrefix: otherPrefix })
    try {
      await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1)) } })
      expect((await other.load({ sceneStr: hex(1) })).scene).toBeNull()
      expect((await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1)) } }, other)).sceneId).toBe(1)
    } finally {
      await deleteKeysUnder(client, otherPrefix)
    }
  })
})

describe('expiry', () => {
  it('sets TTLs from the record times: scenes and sessions expire, users and authorizations never', async () => {
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const k = store.keys
    const pending = await client.pttl(k.scene(sceneStr))
    expect(pending).toBeGreaterThan(0)
    expect(pending).toBeLessThanOrEqual(SCENE_MS + GRACE_MS)

    await auth.handleScan({ sceneStr, openid: 'alice' })
    const token = (await client.get(k.latestSession(1))) as string
    // An authorized scene lives as long as its session, so polls keep answering.
    for (const key of [k.scene(sceneStr), k.session(token), k.latestSession(1)]) {
      const ttl = await client.pttl(key)
      expect(ttl, key).toBeGreaterThan(SCENE_MS + GRACE_MS)
      expect(ttl, key).toBeLessThanOrEqual(SESSION_MS + GRACE_MS)
    }
    for (const key of [k.user(1), k.openid('alice'), k.authorizations, k.activeAuthorizations(1), k.ledger(1), k.userSessions(1), k.seq]) {
      expect(await client.pttl(key), key).toBe(-1)
    }
    for (const key of await keysUnder(client, `${prefix}r:`)) {
      expect(await client.pttl(key)).toBeGreaterThan(0)
      expect(await client.pttl(key)).toBeLessThanOrEqual(120_000)
    }
  })

  it('an expired scene keeps the TTL it had (KEEPTTL), however far the clock moved', async () => {
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    clock.advance(30 * DAY)
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
    expect(await client.get(store.keys.scene(sceneStr))).toMatch(/^2\|1\|\|e\|/)
    const ttl = await client.pttl(store.keys.scene(sceneStr))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(SCENE_MS + GRACE_MS)
  })

  it('a TTL computed at or below zero still sets a short one (never PX 0); an endless one sets none', async () => {
    const tight = new RedisStore({ client, keyPrefix: prefix, expiryGraceSeconds: 0 })
    await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1), T0, 0) } }, tight)
    const u = await commitOk({ user: { op: 'insert', user: newUser('o'), insertAuthorizations: [] } }, tight)
    const base = { userId: u.userId as number, deviceId: 'dev', sceneId: 1, createdAt: T0 }
    await commitOk({ session: { ...base, token: 'past', expiresAt: T0 - 5000 } }, tight)
    await commitOk({ session: { ...base, token: 'endless', expiresAt: T0 + 1e16 } }, tight)
    for (const key of [tight.keys.scene(hex(1)), tight.keys.session('past')]) {
      const ttl = await client.pttl(key)
      expect(ttl, key).toBeGreaterThan(0)
      expect(ttl, key).toBeLessThanOrEqual(1000)
    }
    expect(await client.pttl(tight.keys.session('endless'))).toBe(-1)
    expect((await tight.load({ sessionToken: 'past' })).session?.expiresAt).toBe(T0 - 5000)
  })
})

describe('commit', () => {
  it('refuses a stale scene version and writes nothing of that change set', async () => {
    await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1)) } })
    const stored = (await store.load({ sceneStr: hex(1) })).scene as SceneRecord
    await commitOk({ scene: { op: 'update', scene: { ...stored, status: 'expired', version: 2 }, expectedVersion: 1 } })
    const before = { value: await client.get(store.keys.scene(hex(1))), seq: await client.hgetall(store.keys.seq) }
    const stale = await store.commit({
      scene: { op: 'update', scene: { ...stored, status: 'authorized', userId: NEW_USER, authorizedAt: T0, version: 2 }, expectedVersion: 1 },
      user: { op: 'insert', user: newUser('late'), insertAuthorizations: [] },
      session: { token: 'tok', userId: NEW_USER, deviceId: 'dev', sceneId: stored.id, createdAt: T0, expiresAt: T0 + 1000 },
    })
    expect(stale).toEqual({ ok: false, conflict: 'scene' })
    expect({ value: await client.get(store.keys.scene(hex(1))), seq: await client.hgetall(store.keys.seq) }).toEqual(before)
    expect((await layout()).names).toEqual([`s:${hex(1)}`, 'seq'])
  })

  it('refuses a stale user version and leaves the user and its authorizations as they were', async () => {
    const ids = await commitOk({ user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [] } })
    const user = { ...newUser('o1'), id: ids.userId as number, version: 2 }
    await commitOk({ user: { op: 'update', user, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [] } })
    const before = await client.get(store.keys.user(1))
    const auth = { type: 'points' as const, status: 'pending' as const, startAt: T0, endAt: null, remainingPoints: 1, totalPoints: 1, source: 'x', createdAt: T0, updatedAt: T0 }
    const stale = await store.commit({ user: { op: 'update', user: { ...user, version: 9 }, expectedVersion: 1, insertAuthorizations: [auth], updateAuthorizations: [] } })
    expect(stale).toEqual({ ok: false, conflict: 'user' })
    expect(await client.get(store.keys.user(1))).toBe(before)
    expect(await client.exists(store.keys.authorizations, store.keys.queue(1))).toBe(0)
  })

  it('resolves NEW_USER to the id the script assigned, in the scene and the session', async () => {
    await commitOk({ user: { op: 'insert', user: newUser('first'), insertAuthorizations: [] } }) // takes id 1
    const created = await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1)) } })
    const stored = (await store.load({ sceneStr: hex(1) })).scene as SceneRecord
    const ids = await commitOk({
      scene: { op: 'update', scene: { ...stored, status: 'authorized', userId: NEW_USER, authorizedAt: T0, version: 2 }, expectedVersion: 1 },
      user: { op: 'insert', user: newUser('second'), insertAuthorizations: [] },
      session: { token: 'tok', userId: NEW_USER, deviceId: 'dev', sceneId: created.sceneId as number, createdAt: T0, expiresAt: T0 + 1000 },
    })
    expect(ids.userId).toBe(2)
    expect((await client.get(store.keys.scene(hex(1))))?.split('|')[2]).toBe('2')
    expect((await client.get(store.keys.session('tok')))?.split('|')[1]).toBe('2')
    expect(await client.get(store.keys.openid('second'))).toBe('2')
  })

  it('refuses NEW_USER in a change set that inserts no user, before sending anything', async () => {
    const counter = countCommands(client)
    await expect(store.commit({ session: { token: 't', userId: NEW_USER, deviceId: 'd', sceneId: 1, createdAt: T0, expiresAt: T0 + 1 } })).rejects.toThrow(RedisStoreError)
    expect(counter.total()).toBe(0)
  })

  it('assigns increasing ids from the counters across stores on different connections', async () => {
    const otherClient = connect()
    extraClients.push(otherClient)
    const other = new RedisStore({ client: otherClient, keyPrefix: prefix })
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? store : other).commit({ scene: { op: 'insert', scene: pendingScene(hex(i + 1)) } })),
    )
    const ids = results.map((r) => (r.ok ? r.ids.sceneId : null))
    expect(new Set(ids).size).toBe(40)
    expect([...ids].sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    expect(await client.hget(store.keys.seq, 's')).toBe('40')
  })

  it('answers a re-sent commit from its receipt and applies it once', async () => {
    const script = new LuaScript(COMMIT_SCRIPT)
    const points = { type: 'points' as const, status: 'active' as const, startAt: T0, endAt: null, remainingPoints: 3, totalPoints: 3, source: 'x', createdAt: T0, updatedAt: T0 }
    const args = commitArgs(
      { user: { op: 'insert', user: newUser('once'), insertAuthorizations: [points] } },
      { prefix, receiptId: 'fixed-receipt', receiptTtlMs: 60_000, graceMs: GRACE_MS },
    )
    const first = parseCommitReply(await script.run(client, [store.keys.seq], args))
    const again = parseCommitReply(await script.run(client, [store.keys.seq], args))
    expect(first).toEqual({ ok: true, ids: { sceneId: null, userId: 1, sessionId: null, authorizationIds: [1] } })
    expect(again).toEqual(first)
    expect(await client.hgetall(store.keys.seq)).toEqual({ layout: '2', ai: '1', u: '1', a: '1' })
    expect(await client.hlen(store.keys.authorizations)).toBe(1)
    expect(await client.smembers(store.keys.activeAuthorizations(1))).toEqual(['1'])
  })

  it('writes no receipts when they are turned off', async () => {
    const bare = new RedisStore({ client, keyPrefix: prefix, commitReceiptSeconds: 0 })
    await commitOk({ scene: { op: 'insert', scene: pendingScene(hex(1)) } }, bare)
    expect(await layout()).toEqual({ names: [`s:${hex(1)}`, 'seq'], receipts: 0 })
  })
})

describe('scripts and the client', () => {
  it('survives SCRIPT FLUSH: NOSCRIPT falls back to EVAL, which caches the script again', async () => {
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await client.script('FLUSH')
    const counter = countCommands(client)
    expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'authorized', userId: 1 })
    // The load script and the commit script each: EVALSHA (NOSCRIPT), then EVAL.
    expect(counter.byName()).toEqual({ evalsha: 2 })
    expect(counter.fallbacks()).toBe(2)
    counter.reset()
    expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
    expect(counter.byName()).toEqual({ get: 1, evalsha: 1 })
  })

  it('never quits, disconnects or decorates the application client', async () => {
    const before = Object.keys((client as unknown as { scriptsSet: object }).scriptsSet)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'alice' })
    await store.close()
    expect(client.status).toBe('ready')
    expect(await client.ping()).toBe('PONG')
    expect(Object.keys((client as unknown as { scriptsSet: object }).scriptsSet)).toEqual(before)
    expect((await store.load({ sceneStr })).scene?.status).toBe('authorized')
  })

  it('rejects a client with an ioredis keyPrefix, a Cluster prefix without a hash tag, and bad numbers', async () => {
    const prefixed = new Redis(REDIS_URL, { lazyConnect: true, keyPrefix: 'app:' })
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyRedisConnect: true, lazyConnect: true } as never)
    try {
      expect(() => new RedisStore({ client: prefixed })).toThrow(/keyPrefix/)
      expect(() => new RedisStore({ client: cluster, keyPrefix: 'no-tag:' })).toThrow(/hash tag/)
      expect(() => new RedisStore({ client: cluster, keyPrefix: 'empty:{}:' })).toThrow(/hash tag/)
      expect(new RedisStore({ client: cluster }).keyPrefix).toBe('scanauth:{sa}:')
      expect(() => new RedisStore({ client, expiryGraceSeconds: -1 })).toThrow(RedisStoreError)
      expect(() => new RedisStore({ client, commitReceiptSeconds: 1.5 })).toThrow(RedisStoreError)
      expect(() => new RedisStore({ client: {} as Redis })).toThrow(/ioredis/)
    } finally {
      prefixed.disconnect()
      cluster.disconnect()
    }
  })
})

describe('round trips and memory', () => {
  it('a pending poll is one GET, a scan two script calls, a scene creation one besides its rate limits; a pending scene stays under 300 bytes', async () => {
    const counter = countCommands(client)
    const warm = await auth.createScene({ deviceId: 'warm-up' })
    await auth.handleScan({ sceneStr: warm.sceneStr, openid: 'warm' }) // scripts cached on the server
    counter.reset()

    // The commit, after one counter script per rate limit on by default (the device, then the
    // daily QR budget; docs/redis.md's round-trip table).
    const { sceneStr } = await auth.createScene({ deviceId: 'tv-livingroom-0001' })
    expect(counter.byName()).toEqual({ evalsha: 3 })
    counter.reset()
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
    expect(counter.byName()).toEqual({ get: 1 })

    const bytes = (await client.memory('USAGE', store.keys.scene(sceneStr))) as number
    console.info(`memory per pending scene: ${bytes} bytes (MEMORY USAGE, prefix of ${prefix.length} characters)`)
    expect(bytes).toBeLessThanOrEqual(300)

    counter.reset()
    await auth.handleScan({ sceneStr, openid: 'alice' })
    expect(counter.byName()).toEqual({ evalsha: 2 })
  })

  it('a session check (verifySession, what every guarded request runs) is one round trip: the load script reads the session, then its user (B-load-2)', async () => {
    const counter = countCommands(client)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'alice' })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error('not authorized')
    counter.reset()
    expect(await auth.verifySession(status.sessionToken)).toMatchObject({ userId: 1, authorization: { type: 'time' } })
    expect(counter.byName()).toEqual({ evalsha: 1 })
    counter.reset()
    expect(await auth.verifySession('no-such-session')).toBeNull()
    expect(counter.byName()).toEqual({ evalsha: 1 })
    // A consumption: the same one load; a time authorization spends nothing, so nothing is committed.
    counter.reset()
    expect(await auth.consume({ sessionToken: status.sessionToken })).toMatchObject({ status: 'ok' })
    expect(counter.byName()).toEqual({ evalsha: 1 })
  })
})
