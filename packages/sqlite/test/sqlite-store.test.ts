// Backend-specific tests of SqliteStore: each one looks at the file with raw SQL (its own
// connection) to check what the store wrote, how it configured the file, and how it queries it.
// Schema and migrations: schema.test.ts; query plans: query-plans.test.ts; the entitlement
// statements (ledger, idempotency keys, endSessions): entitlements.test.ts.
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type SceneRecord } from '@scanauth/core'
import { NEW_USER, type ChangeSet } from '@scanauth/core/store'
import { checkInvariants, ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { SqliteStore, SqliteStoreError } from '@scanauth/sqlite'
import { dumpFile } from './support/files'
import { DAY, HOUR, SECOND, service, useTempFile } from './support/fixture'

const fixture = useTempFile()
const openStore = (filename?: string) => fixture.openStore(filename)
const rawDb = (options?: Database.Options) => fixture.rawDb(options)

describe('connection settings', () => {
  it('puts the file in WAL mode and sets busy_timeout, foreign_keys and synchronous', () => {
    const store = openStore()
    expect(rawDb().pragma('journal_mode', { simple: true })).toBe('wal')
    expect(store.database.pragma('busy_timeout', { simple: true })).toBe(5000)
    expect(store.database.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(store.database.pragma('synchronous', { simple: true })).toBe(2) // FULL
  })

  it('takes the busy timeout and synchronous mode from the options', () => {
    const store = new SqliteStore({ filename: fixture.temp.filename, busyTimeoutMs: 1234, synchronous: 'normal' })
    fixture.track(store)
    expect(store.database.pragma('busy_timeout', { simple: true })).toBe(1234)
    expect(store.database.pragma('synchronous', { simple: true })).toBe(1) // NORMAL
  })

  it('rejects invalid options with SqliteStoreError invalid_options naming the problem', () => {
    const db = rawDb()
    expect(() => new SqliteStore({ filename: fixture.temp.filename, database: db })).toThrow(/exactly one of filename and database/)
    expect(() => new SqliteStore({})).toThrow(SqliteStoreError)
    expect(() => new SqliteStore({ filename: fixture.temp.filename, busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/)
    expect(() => new SqliteStore({ filename: fixture.temp.filename, bogus: 1 } as never)).toThrow(SqliteStoreError)
  })
})

describe('ownership', () => {
  it('close() leaves an application database open, and the store refuses further use', async () => {
    const db = rawDb()
    db.exec('CREATE TABLE app_things (id INTEGER PRIMARY KEY)')
    const store = new SqliteStore({ database: db })
    await store.close()
    expect(db.open).toBe(true)
    expect(db.prepare('SELECT COUNT(*) FROM app_things').pluck().get()).toBe(0)
    await expect(store.load({ sceneStr: 'x' })).rejects.toMatchObject({ code: 'closed' })
    await store.close() // idempotent
  })

  it('close() closes a database the store opened', async () => {
    const store = new SqliteStore({ filename: fixture.temp.filename })
    await store.close()
    expect(store.database.open).toBe(false)
  })

  it('works on an in-memory database (no WAL there)', async () => {
    const store = new SqliteStore({ filename: ':memory:' })
    fixture.track(store)
    expect(store.database.pragma('journal_mode', { simple: true })).toBe('memory')
    const { auth } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    expect(await auth.handleScan({ sceneStr, openid: 'o1' })).toEqual({ result: 'authorized', userId: 1 })
  })

  it('refuses a closed or read-only application database', () => {
    openStore() // create the file
    const readonly = rawDb({ readonly: true })
    expect(() => new SqliteStore({ database: readonly })).toThrow(/read-only/)
    const closed = new Database(fixture.temp.filename)
    closed.close()
    expect(() => new SqliteStore({ database: closed })).toThrow(/closed/)
  })
})

describe('commit', () => {
  async function pendingScene(store: SqliteStore): Promise<SceneRecord> {
    const { auth } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    return (await store.load({ sceneStr })).scene as SceneRecord
  }

  it('reports a conflict on a stale scene version and writes nothing', async () => {
    const store = openStore()
    const scene = await pendingScene(store)
    const expire = (expectedVersion: number): ChangeSet => ({
      scene: { op: 'update', scene: { ...scene, status: 'expired', version: expectedVersion + 1 }, expectedVersion },
    })
    expect(await store.commit(expire(1))).toMatchObject({ ok: true })
    const before = dumpFile(fixture.temp.filename)
    expect(await store.commit(expire(1))).toEqual({ ok: false, conflict: 'scene' })
    expect(dumpFile(fixture.temp.filename)).toEqual(before)
    expect(before.scenes[0]).toMatchObject({ status: 'expired', version: 2 })
  })

  it('reports a conflict on a taken scene_str, a taken openid and a stale user version', async () => {
    const store = openStore()
    const scene = await pendingScene(store)
    const { id: _id, ...sceneFields } = scene
    expect(await store.commit({ scene: { op: 'insert', scene: sceneFields } })).toEqual({ ok: false, conflict: 'scene' })
    const user = { openid: 'o1', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 1 }
    const first = await store.commit({ user: { op: 'insert', user, insertAuthorizations: [] } })
    expect(first).toMatchObject({ ok: true, ids: { userId: 1 } })
    expect(await store.commit({ user: { op: 'insert', user, insertAuthorizations: [] } })).toEqual({ ok: false, conflict: 'user' })
    const update = (expectedVersion: number): ChangeSet => ({
      user: { op: 'update', user: { ...user, id: 1, lastSeenAt: 5, version: 9 }, expectedVersion, insertAuthorizations: [], updateAuthorizations: [] },
    })
    expect(await store.commit(update(7))).toEqual({ ok: false, conflict: 'user' })
    expect(dumpFile(fixture.temp.filename).users).toEqual([{ ...user, id: 1 }])
    expect(await store.commit(update(1))).toMatchObject({ ok: true })
  })

  it('checks every expectation before writing: a stale user leaves the scene untouched', async () => {
    const store = openStore()
    const scene = await pendingScene(store)
    const before = dumpFile(fixture.temp.filename)
    const result = await store.commit({
      scene: { op: 'update', scene: { ...scene, status: 'expired', version: 2 }, expectedVersion: 1 },
      user: { op: 'update', user: { id: 42, openid: 'nobody', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 2 }, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [] },
    })
    expect(result).toEqual({ ok: false, conflict: 'user' })
    expect(dumpFile(fixture.temp.filename)).toEqual(before)
  })

  it('resolves NEW_USER to the id of the user inserted by the same commit', async () => {
    const store = openStore()
    // Burn user id 1 so that the new user's id differs from any default.
    await store.commit({ user: { op: 'insert', user: { openid: 'first', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] } })
    const scene = await pendingScene(store)
    const free = { type: 'time' as const, status: 'active' as const, startAt: 5, endAt: 5 + DAY, remainingPoints: 0, totalPoints: 0, source: 'free', createdAt: 5, updatedAt: 5 }
    const result = await store.commit({
      scene: { op: 'update', scene: { ...scene, status: 'authorized', userId: NEW_USER, authorizedAt: 5, version: 2 }, expectedVersion: 1 },
      user: { op: 'insert', user: { openid: 'second', createdAt: 5, lastSeenAt: 5, hasClaimedFree: true, version: 1 }, insertAuthorizations: [free] },
      session: { token: 'tok', userId: NEW_USER, deviceId: 'dev', sceneId: scene.id, createdAt: 5, expiresAt: 5 + HOUR },
    })
    expect(result).toEqual({ ok: true, ids: { sceneId: null, userId: 2, sessionId: 1, authorizationIds: [1] } })
    const raw = rawDb()
    expect(raw.prepare('SELECT user_id FROM scanauth_scenes').pluck().get()).toBe(2)
    expect(raw.prepare('SELECT user_id FROM scanauth_sessions').pluck().get()).toBe(2)
    expect(raw.prepare('SELECT user_id FROM scanauth_authorizations').pluck().get()).toBe(2)
  })

  it('refuses a change set that breaks the contract, and applies none of it', async () => {
    const store = openStore()
    const user = { openid: 'o1', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 1 }
    const points = { type: 'points' as const, status: 'pending' as const, startAt: 1, endAt: null, remainingPoints: 3, totalPoints: 3, source: 'admin', createdAt: 1, updatedAt: 1 }
    await store.commit({ user: { op: 'insert', user, insertAuthorizations: [points] } })
    await store.commit({ user: { op: 'insert', user: { ...user, openid: 'o2' }, insertAuthorizations: [] } })
    const before = dumpFile(fixture.temp.filename)
    // User 2 tries to update user 1's authorization.
    const steal: ChangeSet = {
      user: { op: 'update', user: { ...user, id: 2, openid: 'o2', version: 2 }, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [{ ...points, id: 1, userId: 2, remainingPoints: 0 }] },
    }
    await expect(store.commit(steal)).rejects.toMatchObject({ code: 'invalid_change_set' })
    // A session for NEW_USER without a user insert.
    await expect(store.commit({ session: { token: 't', userId: NEW_USER, deviceId: 'd', sceneId: 1, createdAt: 1, expiresAt: 2 } })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(dumpFile(fixture.temp.filename)).toEqual(before)
  })

  it('writes records exactly as given, indexed columns included', async () => {
    const store = openStore()
    const scene = await pendingScene(store)
    const user = { openid: 'o1', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 1 }
    const points = { type: 'points' as const, status: 'pending' as const, startAt: 1, endAt: null, remainingPoints: 3, totalPoints: 3, source: 'admin', createdAt: 1, updatedAt: 1 }
    await store.commit({ user: { op: 'insert', user, insertAuthorizations: [points] } })
    // The usual case keeps the indexed columns; this commit changes every one of them.
    const movedScene = { ...scene, sceneStr: 'pc_ffffffffffffffffffffffffffffffff', expiresAt: scene.expiresAt + 1, version: 2 }
    const movedUser = { ...user, id: 1, openid: 'o1-renamed', version: 2 }
    const movedAuthorization = { ...points, id: 1, userId: 1, status: 'active' as const, createdAt: 7, remainingPoints: 2 }
    const result = await store.commit({
      scene: { op: 'update', scene: movedScene, expectedVersion: 1 },
      user: { op: 'update', user: movedUser, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [movedAuthorization] },
    })
    expect(result).toMatchObject({ ok: true })
    const after = dumpFile(fixture.temp.filename)
    expect(after.scenes).toEqual([movedScene])
    expect(after.users).toEqual([movedUser])
    expect(after.authorizations).toEqual([movedAuthorization])
    // And the indexes follow: the new keys find the records, the old ones do not.
    expect((await store.load({ sceneStr: scene.sceneStr })).scene).toBeNull()
    expect((await store.load({ sceneStr: movedScene.sceneStr })).scene).toEqual(movedScene)
    expect((await store.load({ openid: 'o1' })).user).toBeNull()
    expect((await store.load({ openid: 'o1-renamed' })).user).toEqual({ user: movedUser, authorizations: [movedAuthorization] })
  })

  it('round-trips a fractional timestamp exactly (core accepts sessionTtlHours: 1 / 7)', async () => {
    const store = openStore()
    const scene = await pendingScene(store)
    const expiresAt = scene.createdAt + HOUR / 7 // 514285.714... ms later
    expect(Number.isInteger(expiresAt)).toBe(false)
    const result = await store.commit({
      scene: { op: 'update', scene: { ...scene, status: 'authorized', userId: NEW_USER, authorizedAt: scene.createdAt, version: 2 }, expectedVersion: 1 },
      user: { op: 'insert', user: { openid: 'o1', createdAt: 1, lastSeenAt: 1, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] },
      session: { token: 'tok', userId: NEW_USER, deviceId: 'dev', sceneId: scene.id, createdAt: scene.createdAt, expiresAt },
    })
    expect(result.ok).toBe(true)
    expect((await store.load({ sessionToken: 'tok' })).session?.expiresAt).toBe(expiresAt)
  })

  it('makes a commit through one connection visible to another at once', async () => {
    const a = openStore()
    const b = openStore()
    const { auth } = service(a)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    expect((await b.load({ sceneStr })).scene?.sceneStr).toBe(sceneStr)
  })

  it('never reuses an id, even after the row with the highest id was purged', async () => {
    const store = openStore()
    const { auth, clock } = service(store)
    await auth.createScene({ deviceId: 'a' })
    await auth.createScene({ deviceId: 'b' })
    clock.advance(HOUR)
    expect(await store.purgeExpired({ now: clock.now() })).toMatchObject({ scenes: 2 })
    const { sceneStr } = await auth.createScene({ deviceId: 'c' })
    expect((await store.load({ sceneStr })).scene?.id).toBe(3)
  })
})

describe('purgeExpired', () => {
  /** A scene of each kind, built through the service at 2026-01-01T00:00Z (scenes live 300 s, sessions 168 h). */
  async function world(store: SqliteStore) {
    const { auth, clock } = service(store)
    const start = clock.now()
    const pending = await auth.createScene({ deviceId: 'pending' })
    const authorized = await auth.createScene({ deviceId: 'authorized' })
    await auth.handleScan({ sceneStr: authorized.sceneStr, openid: 'o1' })
    await auth.grant({ openid: 'o1', type: 'points', points: 5 })
    return { auth, clock, start, pending, authorized }
  }

  it('deletes expired scenes, and an authorized scene only with its latest session; keeps users and authorizations', async () => {
    const store = openStore()
    const { start, pending, authorized } = await world(store)
    const before = dumpFile(fixture.temp.filename)

    // Both scenes are past their expiry, but the authorized one's session lives for 168 h.
    expect(await store.purgeExpired({ now: start + HOUR })).toMatchObject({ scenes: 1, sessions: 0, batches: 1, more: false })
    let after = dumpFile(fixture.temp.filename)
    expect(after.scenes.map((s) => s.sceneStr)).toEqual([authorized.sceneStr])
    expect(after.sessions).toHaveLength(1)
    expect(after.scenes).not.toContainEqual(expect.objectContaining({ sceneStr: pending.sceneStr }))

    // Once the session has expired too, both go.
    expect(await store.purgeExpired({ now: start + 168 * HOUR })).toMatchObject({ scenes: 1, sessions: 1, batches: 1, more: false })
    after = dumpFile(fixture.temp.filename)
    expect(after.scenes).toEqual([])
    expect(after.sessions).toEqual([])
    expect(after.users).toEqual(before.users)
    expect(after.authorizations).toEqual(before.authorizations)
    expect(checkInvariants(after)).toEqual([])
  })

  it('keeps records for the retention window after their expiry', async () => {
    const store = openStore()
    const { start } = await world(store)
    const atSessionEnd = start + 168 * HOUR
    // The pending scene expired long before; the authorized one waits for its session's retention.
    expect(await store.purgeExpired({ now: atSessionEnd, retentionMs: DAY })).toMatchObject({ scenes: 1, sessions: 0 })
    expect(await store.purgeExpired({ now: atSessionEnd + DAY - 1, retentionMs: DAY })).toMatchObject({ scenes: 0, sessions: 0 })
    expect(await store.purgeExpired({ now: atSessionEnd + DAY, retentionMs: DAY })).toMatchObject({ scenes: 1, sessions: 1 })
  })

  it('works in bounded batches, skips over kept scenes, and can stop early with more left', async () => {
    const store = openStore()
    const { auth, clock } = service(store)
    // 7 authorized scenes (kept for their sessions) interleaved with 14 plain expired ones.
    for (let i = 0; i < 7; i++) {
      await auth.createScene({ deviceId: `p${i}` })
      const { sceneStr } = await auth.createScene({ deviceId: `a${i}` })
      await auth.handleScan({ sceneStr, openid: `o${i}` })
      await auth.createScene({ deviceId: `q${i}` })
      clock.advance(SECOND)
    }
    const now = clock.now() + HOUR
    const partial = await store.purgeExpired({ now, batchSize: 4, maxBatches: 2 })
    expect(partial).toMatchObject({ batches: 2, more: true })
    expect(partial.scenes).toBeLessThanOrEqual(8)
    const rest = await store.purgeExpired({ now, batchSize: 4 })
    expect(rest.more).toBe(false)
    expect(partial.scenes + rest.scenes).toBe(14)
    const left = dumpFile(fixture.temp.filename)
    expect(left.scenes.map((s) => s.deviceId).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6'])
    expect(left.sessions).toHaveLength(7)
    expect(checkInvariants(left)).toEqual([])
  })

  it('leaves the service working: a purged scene is unknown, sessions of kept users still consume', async () => {
    const store = openStore()
    const { auth, clock, pending, authorized } = await world(store)
    clock.advance(HOUR)
    const status = await auth.getStatus(authorized.sceneStr)
    await store.purgeExpired({ now: clock.now() })
    await expect(auth.getStatus(pending.sceneStr)).rejects.toMatchObject({ code: 'scene_not_found' })
    expect(status.status).toBe('authorized')
    const token = (status as { sessionToken: string }).sessionToken
    expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok' })
  })

  it('keeps and deletes exactly what MemoryStore.purgeExpired does', async () => {
    const sqlite = openStore()
    const memory = new MemoryStore()
    const clock = new ManualClock()
    const services = [sqlite, memory].map((store) => createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, sessionTtlHours: 1 }))
    // Scenes every 10 minutes for 3 hours; every other one scanned 2 minutes after creation.
    for (let i = 0; i < 18; i++) {
      const created = await Promise.all(services.map((auth) => auth.createScene({ deviceId: `d${i}` })))
      if (i % 2 === 0) {
        clock.advance(2 * 60 * SECOND)
        await Promise.all(services.map((auth, k) => auth.handleScan({ sceneStr: created[k]?.sceneStr as string, openid: `o${i % 3}` })))
        clock.advance(8 * 60 * SECOND)
      } else clock.advance(10 * 60 * SECOND)
    }
    const start = Date.parse('2026-01-01T00:00:00Z')
    const left = () => {
      const m = memory.snapshot()
      const s = dumpFile(fixture.temp.filename)
      const names = (list: Array<{ deviceId: string }>) => list.map((x) => x.deviceId).sort()
      return { memory: [names(m.scenes), names(m.sessions)], sqlite: [names(s.scenes), names(s.sessions)] }
    }
    for (const [minutes, retention] of [[30, 0], [95, 0], [150, 20], [170, 0], [400, 0]] as const) {
      const now = start + minutes * 60 * SECOND
      const removed = await sqlite.purgeExpired({ now, retentionMs: retention * 60 * SECOND, batchSize: 3 })
      const fromMemory = await memory.purgeExpired({ now, retentionMs: retention * 60 * SECOND })
      expect({ scenes: removed.scenes, sessions: removed.sessions }).toEqual({ scenes: fromMemory.scenes, sessions: fromMemory.sessions })
      const state = left()
      expect(state.sqlite).toEqual(state.memory)
    }
    expect(left().sqlite).toEqual([[], []])
  })

  it('rejects invalid purge options', async () => {
    const store = openStore()
    await expect(store.purgeExpired({ now: Date.now(), batchSize: 0 })).rejects.toThrow(/batchSize/)
    await expect(store.purgeExpired({ now: Date.now(), retentionMs: -1 })).rejects.toMatchObject({ code: 'invalid_options' })
    await expect(store.purgeExpired({ now: Number.NaN })).rejects.toMatchObject({ code: 'invalid_options' })
  })
})

describe('backups (docs/sqlite.md)', () => {
  it('database.backup() and VACUUM INTO, taken while the store is open, open as complete stores', async () => {
    const store = openStore()
    const { auth } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    await auth.handleScan({ sceneStr, openid: 'o1' })
    const original = dumpFile(fixture.temp.filename)

    const online = `${fixture.temp.dir}/backup-online.db`
    await store.database.backup(online)
    const vacuumed = `${fixture.temp.dir}/backup-vacuum.db`
    store.database.prepare('VACUUM INTO ?').run(vacuumed)

    for (const copy of [online, vacuumed]) {
      const restored = openStore(copy)
      expect(dumpFile(copy)).toEqual(original)
      expect((await restored.load({ sceneStr })).scene?.status).toBe('authorized')
    }
  })
})
