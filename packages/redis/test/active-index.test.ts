/**
 * The reminders' indexes of RedisStore (`<p>ae`, `<p>ap`; `src/active-index.ts`), checked by reading
 * Redis directly: the commit script files every active authorization in the index of its type and
 * moves it with the very commit that changes it; a read is one script run; and a prefix written
 * before the indexes existed (a pre-release build of layout 2) gets them built by its first read,
 * exactly, beside commits between the build's runs and beside another process building at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { ACTIVE_INDEX_CURSOR, ACTIVE_INDEXED, queueMember } from '../src/keys'
import { BUILD_ACTIVE_INDEX_SCRIPT } from '../src/scripts/active-index'
import { LuaScript } from '../src/scripts/lua-script'
import { checkIndexes, connect, countCommands, deleteKeysUnder, dumpRecords, keysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const DAY = 24 * 3600_000
const WIDE = { type: 'time', endFrom: 0, endBefore: 1e15, limit: 1000 } as const
const LOW = { type: 'points', pointsBelow: 5, limit: 1000 } as const

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

/** The indexes hold exactly the active authorizations of the records (checkIndexes), every user's indexes too. */
async function expectIndexesRight(): Promise<void> {
  expect(await checkIndexes(client, prefix, await dumpRecords(client, prefix))).toEqual([])
}

/** What a prefix written by a build without the reminders' indexes looks like: no `ai`, no indexes (or stale ones). */
async function forgetIndexes(): Promise<void> {
  await client.del(store.keys.activeByEnd, store.keys.activeByPoints)
  await client.hdel(store.keys.seq, ACTIVE_INDEXED)
}

/** Users `from`..`to` (openids `u-<i>`), each with an active authorization: time ones ending a day apart, points ones with i % 7 points left. */
async function users(from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) {
    if (i % 2 === 0) await auth.grant({ openid: `u-${i}`, type: 'time', durationSeconds: (1 + (i % 9)) * 86_400 })
    else await auth.grant({ openid: `u-${i}`, type: 'points', points: 1 + (i % 7) })
  }
}

describe('RedisStore: the reminders indexes', () => {
  it('the commit script files each active authorization in the index of its type, and moves it with the commit that changes it', async () => {
    const k = store.keys
    const time = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 2 * 86_400 })
    const queued = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 86_400 })
    const points = await auth.grant({ openid: 'bob', type: 'points', points: 9 })
    expect(await client.zrange(k.activeByEnd, 0, -1, 'WITHSCORES')).toEqual([queueMember(time.id), String(T0 + 2 * DAY)])
    expect(await client.zrange(k.activeByPoints, 0, -1, 'WITHSCORES')).toEqual([queueMember(points.id), '9'])
    await expectIndexesRight()

    // Spent points move the score; the read sees them below the threshold at once.
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'bob' })
    const token = (await dumpRecords(client, prefix)).sessions[0]?.token as string
    await auth.consume({ sessionToken: token, points: 6 })
    expect(await client.zscore(k.activeByPoints, queueMember(points.id))).toBe('3')
    expect((await store.listActiveAuthorizations(LOW)).map((a) => a.id)).toEqual([points.id])

    // Expired by the activation step: out of <p>ae; the queued one in, with its new end.
    clock.advance(2 * DAY)
    await auth.grant({ openid: 'alice', type: 'points', points: 1 })
    expect(await client.zrange(k.activeByEnd, 0, -1, 'WITHSCORES')).toEqual([queueMember(queued.id), String(clock.now() + DAY)])
    // Revoked: out of <p>ap; bob's queued trial (from the scan) comes into <p>ae.
    await auth.revokeAuthorization({ authorizationId: points.id })
    expect(await client.zscore(k.activeByPoints, queueMember(points.id))).toBeNull()
    expect(await client.zcard(k.activeByEnd)).toBe(2)
    await expectIndexesRight()
  })

  it('reads a page with one script run, on a fresh prefix too (an empty page, nothing written)', async () => {
    const fresh = new RedisStore({ client, keyPrefix: testPrefix() })
    expect(await fresh.listActiveAuthorizations(WIDE)).toEqual([])
    expect(await fresh.listActiveAuthorizations(LOW)).toEqual([])
    expect(await keysUnder(client, fresh.keyPrefix)).toEqual([])

    await users(1, 10)
    const counter = countCommands(client)
    const page = await store.listActiveAuthorizations({ ...WIDE, limit: 3, after: { endAt: T0 + 2 * DAY, id: 0 } })
    expect(page).toHaveLength(3)
    expect(counter.byName()).toEqual({ evalsha: 1 })
    counter.reset()
    expect((await store.listActiveAuthorizations({ ...LOW, afterId: 2 })).map((a) => a.remainingPoints)).toEqual([4, 1, 3])
    expect(counter.byName()).toEqual({ evalsha: 1 })
    for (const a of page) expect(a).toStrictEqual((await store.load({ authorizationId: a.id })).authorization)
  })

  it('builds the indexes on a prefix written without them at its first read: stale entries dropped, the answer exact, then marked built', async () => {
    await users(1, 30)
    const before = await store.listActiveAuthorizations(WIDE)
    const low = await store.listActiveAuthorizations(LOW)
    expect(before).toHaveLength(15)
    expect(low.length).toBeGreaterThan(3)
    await forgetIndexes()
    // What a commit of the older build could leave: an entry for an authorization no longer active.
    await client.zadd(store.keys.activeByEnd, T0 + DAY, queueMember(9999))

    const counter = countCommands(client)
    expect(await store.listActiveAuthorizations(WIDE)).toStrictEqual(before)
    // The read, one build run (30 users), the read again.
    expect(counter.byName()).toEqual({ evalsha: 3 })
    expect(await client.hget(store.keys.seq, ACTIVE_INDEXED)).toBe('1')
    expect(await client.hexists(store.keys.seq, ACTIVE_INDEX_CURSOR)).toBe(0)
    await expectIndexesRight()
    counter.reset()
    expect(await store.listActiveAuthorizations(LOW)).toStrictEqual(low)
    expect(counter.byName()).toEqual({ evalsha: 1 })
  })

  it('keeps the indexes right when commits land between the runs of a build, and beside another process building at once', async () => {
    await users(1, 12)
    await forgetIndexes()
    const build = new LuaScript(BUILD_ACTIVE_INDEX_SCRIPT)
    // Three users per run: the first run indexes users 1–3 and leaves the cursor at 4.
    expect(await build.run(client, [store.keys.seq], [prefix, '3'])).toBe(1)
    expect(await client.hget(store.keys.seq, ACTIVE_INDEX_CURSOR)).toBe('4')
    // An indexed user's authorization leaves (revoked), a user not indexed yet changes (points
    // spent), and a new user comes after the last id the build knew of.
    const dump = await dumpRecords(client, prefix)
    const ofUser = (openid: string) => dump.authorizations.find((a) => a.userId === dump.users.find((u) => u.openid === openid)?.id)
    await auth.revokeAuthorization({ authorizationId: ofUser('u-2')?.id as number })
    await auth.revokeAuthorization({ authorizationId: ofUser('u-9')?.id as number })
    await auth.grant({ openid: 'u-9', type: 'points', points: 2 })
    expect(await build.run(client, [store.keys.seq], [prefix, '3'])).toBe(1)
    await users(13, 14)

    // The rest of the build, by two stores on two connections reading at once.
    const other = connect()
    extraClients.push(other)
    const peer = new RedisStore({ client: other, keyPrefix: prefix })
    const [mine, theirs] = await Promise.all([store.listActiveAuthorizations(WIDE), peer.listActiveAuthorizations(WIDE)])
    expect(theirs).toStrictEqual(mine)
    expect(mine.map((a) => a.userId)).not.toContain(ofUser('u-2')?.userId)
    await expectIndexesRight()
    expect(await client.hget(store.keys.seq, ACTIVE_INDEXED)).toBe('1')
    const snapshot = await dumpRecords(client, prefix)
    const expected = snapshot.authorizations.filter((a) => a.status === 'active' && a.type === 'time').sort((a, b) => (a.endAt as number) - (b.endAt as number) || a.id - b.id)
    expect(mine).toStrictEqual(expected)
    expect((await store.listActiveAuthorizations(LOW)).map((a) => a.id)).toEqual(
      snapshot.authorizations.filter((a) => a.status === 'active' && a.type === 'points' && a.remainingPoints > 0 && a.remainingPoints < 5).map((a) => a.id).sort((a, b) => a - b),
    )
  })
})
