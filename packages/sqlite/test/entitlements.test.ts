// Backend-specific tests of the entitlement parts of SqliteStore (ledger entries, idempotency keys,
// revoked authorizations, endSessions, head-of-queue loads), each checked with raw SQL on its own
// connection: what the commit wrote, what it left alone, and what a load reads.
import { describe, expect, it } from 'vitest'
import { type UserRecord } from '@scanauth/core'
import { NEW_USER, type ChangeSet, type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'
import { checkInvariants } from '@scanauth/testkit'
import type { SqliteStore } from '@scanauth/sqlite'
import { dumpFile } from './support/files'
import { DAY, HOUR, service, useTempFile } from './support/fixture'

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00Z')

const newUser = (openid: string): Omit<UserRecord, 'id'> => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })
const points = (n: number, status: NewAuthorization['status'] = 'pending', createdAt = T0): NewAuthorization => ({
  type: 'points', status, startAt: createdAt, endAt: null, remainingPoints: n, totalPoints: n, source: 'purchase', createdAt, updatedAt: createdAt,
})
const grantEntry = (authorizationId: NewLedgerEntry['authorizationId'], n: number, idempotencyKey: string | null = null): NewLedgerEntry => ({
  userId: NEW_USER, authorizationId, kind: 'grant', points: n, remainingPoints: n, at: T0, source: 'purchase', idempotencyKey, reason: null,
})

async function commitOk(store: SqliteStore, changes: ChangeSet) {
  const result = await store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

describe('commit: ledger entries and idempotency records', () => {
  it('writes the rows as given, references resolved to the ids assigned in the same commit', async () => {
    const store = fixture.openStore()
    await commitOk(store, { user: { op: 'insert', user: newUser('earlier'), insertAuthorizations: [points(1)] } }) // ids 1 taken
    const ids = await commitOk(store, {
      user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [points(5), points(3, 'active')] },
      ledger: [grantEntry({ inserted: 0 }, 5, 'pay-1'), grantEntry({ inserted: 1 }, 3), { ...grantEntry({ inserted: 1 }, 0), kind: 'activate', remainingPoints: 3, source: null }],
      idempotency: { key: 'pay-1', fingerprint: 'fp', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
    })
    expect(ids).toEqual({ sceneId: null, userId: 2, sessionId: null, authorizationIds: [2, 3] })
    const raw = fixture.rawDb()
    expect(raw.prepare('SELECT id, user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason FROM scanauth_ledger ORDER BY id').raw().all()).toEqual([
      [1, 2, 2, 'grant', 5, 5, T0, 'purchase', 'pay-1', null],
      [2, 2, 3, 'grant', 3, 3, T0, 'purchase', null, null],
      [3, 2, 3, 'activate', 0, 3, T0, null, null, null],
    ])
    expect(raw.prepare('SELECT * FROM scanauth_idempotency').all()).toEqual([{ key: 'pay-1', fingerprint: 'fp', authorization_id: 2, result: null, created_at: T0 }])
  })

  it('checks the key with the other expectations: a taken key writes nothing, whatever else the change set holds', async () => {
    const store = fixture.openStore()
    const { auth } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    const scene = (await store.load({ sceneStr })).scene
    await commitOk(store, { idempotency: { key: 'k', fingerprint: 'a', authorizationId: null, result: '{}', createdAt: T0 } })
    const before = dumpFile(fixture.temp.filename)
    const refused = await store.commit({
      scene: { op: 'update', scene: { ...(scene as NonNullable<typeof scene>), status: 'expired', version: 2 }, expectedVersion: 1 },
      user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [points(5)] },
      ledger: [grantEntry({ inserted: 0 }, 5, 'k')],
      idempotency: { key: 'k', fingerprint: 'b', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
    })
    expect(refused).toEqual({ ok: false, conflict: 'idempotency' })
    expect(dumpFile(fixture.temp.filename)).toEqual(before)
    // The scene's and the user's expectations come first, as in MemoryStore.
    const staleScene = await store.commit({
      scene: { op: 'update', scene: { ...(scene as NonNullable<typeof scene>), status: 'expired', version: 2 }, expectedVersion: 7 },
      idempotency: { key: 'k', fingerprint: 'b', authorizationId: null, result: null, createdAt: T0 },
    })
    expect(staleScene).toEqual({ ok: false, conflict: 'scene' })
  })

  it('refuses references to authorizations the change set does not insert, and applies none of it', async () => {
    const store = fixture.openStore()
    const before = dumpFile(fixture.temp.filename)
    const ledgerRef = store.commit({ user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [points(5)] }, ledger: [grantEntry({ inserted: 1 }, 5)] })
    await expect(ledgerRef).rejects.toMatchObject({ code: 'invalid_change_set' })
    const keyRef = store.commit({
      user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [] },
      idempotency: { key: 'k', fingerprint: 'f', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
    })
    await expect(keyRef).rejects.toMatchObject({ code: 'invalid_change_set' })
    await expect(store.commit({ ledger: [grantEntry(1, 5)] })).rejects.toMatchObject({ code: 'invalid_change_set' }) // NEW_USER without a user
    expect(dumpFile(fixture.temp.filename)).toEqual(before)
  })

  it('stores status revoked, and a revocation through the service keeps the ledger in step', async () => {
    const store = fixture.openStore()
    const { auth } = service(store)
    const first = await auth.grant({ openid: 'o1', type: 'points', points: 5, source: 'purchase', idempotencyKey: 'order-1' })
    const second = await auth.grant({ openid: 'o1', type: 'time', durationSeconds: 3600, source: 'purchase' })
    await auth.revokeAuthorization({ authorizationId: first.id, reason: 'refund' })
    const raw = fixture.rawDb()
    expect(raw.prepare('SELECT id, status FROM scanauth_authorizations ORDER BY id').raw().all()).toEqual([[first.id, 'revoked'], [second.id, 'active']])
    expect(raw.prepare(`SELECT kind, reason FROM scanauth_ledger WHERE kind IN ('revoke', 'activate') ORDER BY id`).raw().all()).toEqual([
      ['activate', null],
      ['revoke', 'refund'],
      ['activate', null],
    ])
    expect(checkInvariants(dumpFile(fixture.temp.filename))).toEqual([])
  })

  it('keeps ledger entries and idempotency keys through purgeExpired', async () => {
    const store = fixture.openStore()
    const { auth, clock } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    await auth.handleScan({ sceneStr, openid: 'o1' })
    await auth.grant({ openid: 'o1', type: 'points', points: 5, idempotencyKey: 'order-1' })
    const before = dumpFile(fixture.temp.filename)
    clock.advance(400 * DAY)
    expect(await store.purgeExpired({ now: clock.now() })).toMatchObject({ scenes: 1, sessions: 1 })
    const after = dumpFile(fixture.temp.filename)
    expect(after.ledger).toEqual(before.ledger)
    expect(after.idempotency).toEqual(before.idempotency)
    expect(before.ledger.length).toBeGreaterThan(0)
  })
})

describe('load: the head of the queue', () => {
  it('reads the active one and the first pending one by (created_at, id), however the rows were inserted', async () => {
    const store = fixture.openStore()
    const queue = Array.from({ length: 2000 }, (_, i) => points(1, 'pending', T0 + 10 + i))
    // The earliest pending one is inserted last (a clock set back); two share its created_at.
    const ids = await commitOk(store, {
      user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [points(9, 'active', T0 + 5), ...queue, points(1, 'pending', T0 + 1), points(1, 'pending', T0 + 1)] },
    })
    const active = ids.authorizationIds[0]
    const head = ids.authorizationIds[2001]
    for (const loaded of [await store.load({ userId: ids.userId as number }), await store.load({ openid: 'o1' })]) {
      expect(loaded.user?.authorizations.map((a) => [a.id, a.status])).toEqual([[head, 'pending'], [active, 'active']])
    }
    const whole = (await store.load({ openid: 'o1', wholeQueue: true })).user?.authorizations ?? []
    expect(whole).toHaveLength(2003)
    expect(whole.slice(0, 4).map((a) => a.id)).toEqual([ids.authorizationIds[2001], ids.authorizationIds[2002], active, ids.authorizationIds[1]])
    // A user with neither: the user alone.
    await commitOk(store, { user: { op: 'insert', user: newUser('o2'), insertAuthorizations: [{ ...points(1), status: 'exhausted' }] } })
    expect((await store.load({ openid: 'o2' })).user?.authorizations).toEqual([])
  })
})

describe('endSessions', () => {
  it('sets expires_at on live sessions only, and the service then treats them as over', async () => {
    const store = fixture.openStore()
    const { auth, clock } = service(store)
    const tokens: string[] = []
    for (const openid of ['o1', 'o1', 'o1', 'o2']) {
      const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
      await auth.handleScan({ sceneStr, openid })
      const status = await auth.getStatus(sceneStr)
      tokens.push((status as { sessionToken: string }).sessionToken)
    }
    clock.advance(HOUR)
    const at = clock.now()
    const raw = fixture.rawDb()
    const expiries = () => raw.prepare('SELECT expires_at FROM scanauth_sessions ORDER BY id').pluck().all()
    const live = expiries()[3]
    expect(await auth.revokeSession(tokens[0] as string)).toBe(true)
    expect(await auth.revokeSession(tokens[0] as string)).toBe(false)
    expect(await auth.revokeSessions({ openid: 'o1' })).toBe(2)
    expect(expiries()).toEqual([at, at, at, live])
    expect(await auth.verifySession(tokens[1] as string)).toBeNull()
    expect(await auth.verifySession(tokens[3] as string)).not.toBeNull()
  })
})
