// Schema and migrations of SqliteStore, checked on files written by hand with raw SQL: a new file,
// a file holding only the application's tables (version 0), a version 1 file, a version 2 file
// (0.1.0) with data, a newer file.
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '@scanauth/testkit'
import { MIGRATIONS, SCHEMA_VERSION, SqliteStore, SqliteStoreError, VERSION_TABLE } from '@scanauth/sqlite'
import { dumpFile } from './support/files'
import { service, useTempFile } from './support/fixture'
import { LATER, V2_DATA, V2_SCHEMA } from './support/v2-schema'

const fixture = useTempFile()
const openStore = () => fixture.openStore()
const rawDb = () => fixture.rawDb()

describe('schema and migrations', () => {
  it('records every migration in the version table of a new file', () => {
    openStore()
    const rows = rawDb().prepare(`SELECT version, name FROM ${VERSION_TABLE} ORDER BY version`).all()
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })))
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length)
  })

  it('opens an existing current file without migrating again', () => {
    openStore()
    openStore()
    expect(rawDb().prepare(`SELECT COUNT(*) FROM ${VERSION_TABLE}`).pluck().get()).toBe(SCHEMA_VERSION)
  })

  it('adds its tables to a database that holds only the application’s own (version 0)', () => {
    const db = rawDb()
    db.exec(`CREATE TABLE app_things (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO app_things (name) VALUES ('kept')`)
    openStore()
    expect(db.prepare('SELECT name FROM app_things').pluck().all()).toEqual(['kept'])
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(SCHEMA_VERSION)
  })

  it('upgrades a version 1 file written by hand, keeping its data', async () => {
    // Version 1 exactly as released: the tables and lookup indexes, without the expiry indexes.
    const db = rawDb()
    db.exec(`
      CREATE TABLE ${VERSION_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
      INSERT INTO ${VERSION_TABLE} VALUES (1, 'tables and lookup indexes', 0);
      CREATE TABLE scanauth_users (id INTEGER PRIMARY KEY AUTOINCREMENT, openid TEXT NOT NULL, created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL, has_claimed_free INTEGER NOT NULL CHECK (has_claimed_free IN (0, 1)), version INTEGER NOT NULL);
      CREATE UNIQUE INDEX scanauth_users_by_openid ON scanauth_users (openid);
      CREATE TABLE scanauth_scenes (id INTEGER PRIMARY KEY AUTOINCREMENT, scene_str TEXT NOT NULL, device_id TEXT NOT NULL,
        status TEXT NOT NULL, user_id INTEGER REFERENCES scanauth_users (id), created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL, authorized_at INTEGER, version INTEGER NOT NULL);
      CREATE UNIQUE INDEX scanauth_scenes_by_scene_str ON scanauth_scenes (scene_str);
      CREATE TABLE scanauth_authorizations (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL REFERENCES scanauth_users (id),
        type TEXT NOT NULL, status TEXT NOT NULL, start_at INTEGER NOT NULL, end_at INTEGER, remaining_points INTEGER NOT NULL,
        total_points INTEGER NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX scanauth_authorizations_by_user ON scanauth_authorizations (user_id, status, created_at, id);
      CREATE TABLE scanauth_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL, user_id INTEGER NOT NULL REFERENCES scanauth_users (id),
        device_id TEXT NOT NULL, scene_id INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
      CREATE UNIQUE INDEX scanauth_sessions_by_token ON scanauth_sessions (token);
      CREATE INDEX scanauth_sessions_by_scene ON scanauth_sessions (scene_id, id);
      INSERT INTO scanauth_users VALUES (1, 'o-old', 10, 20, 1, 3);
      INSERT INTO scanauth_authorizations VALUES (1, 1, 'time', 'active', 10, 9000000000000, 0, 0, 'free', 10, 10);
      INSERT INTO scanauth_scenes VALUES (1, 'pc_00000000000000000000000000000001', 'dev', 'authorized', 1, 10, 9000000000000, 10, 2);
      INSERT INTO scanauth_sessions VALUES (1, 'tok-old', 1, 'dev', 1, 10, 9000000000000);
    `)
    const indexes = () => db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'scanauth_%' ORDER BY name`).pluck().all()
    expect(indexes()).not.toContain('scanauth_scenes_by_expiry')

    const store = openStore()
    expect(db.prepare(`SELECT version FROM ${VERSION_TABLE} ORDER BY version`).pluck().all()).toEqual(MIGRATIONS.map((m) => m.version))
    expect(indexes()).toEqual(expect.arrayContaining(['scanauth_scenes_by_expiry', 'scanauth_sessions_by_expiry']))
    const loaded = await store.load({ sceneStr: 'pc_00000000000000000000000000000001', openid: 'o-old', sessionToken: 'tok-old' })
    expect(loaded.scene).toMatchObject({ id: 1, status: 'authorized', userId: 1, version: 2 })
    expect(loaded.user?.user).toEqual({ id: 1, openid: 'o-old', createdAt: 10, lastSeenAt: 20, hasClaimedFree: true, version: 3 })
    expect(loaded.user?.authorizations).toHaveLength(1)
    expect(loaded.session).toMatchObject({ id: 1, token: 'tok-old', sceneId: 1 })
  })

  it('upgrades a version 2 file (0.1.0) holding data: ids, rows and sequence kept, revoked accepted, ledger backfilled', async () => {
    const db = rawDb()
    db.exec(V2_SCHEMA)
    db.exec(V2_DATA)
    // The application's own objects on our table: a view naming it, and a table referencing it.
    db.exec(`CREATE VIEW app_live AS SELECT id, status FROM scanauth_authorizations WHERE status = 'active';
      CREATE TABLE app_receipts (id INTEGER PRIMARY KEY, authorization_id INTEGER NOT NULL REFERENCES scanauth_authorizations (id));
      INSERT INTO app_receipts VALUES (1, 2)`)
    const before = db.prepare('SELECT * FROM scanauth_authorizations ORDER BY id').all()

    const store = openStore()
    expect(db.prepare(`SELECT version FROM ${VERSION_TABLE} ORDER BY version`).pluck().all()).toEqual(MIGRATIONS.map((m) => m.version))
    expect(db.prepare('SELECT * FROM scanauth_authorizations ORDER BY id').all()).toEqual(before)
    expect(db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'scanauth_authorizations'`).pluck().get()).toBe(9)
    const indexes = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'scanauth_%'`).pluck().all()
    expect(indexes).toEqual(expect.arrayContaining(['scanauth_authorizations_by_user', 'scanauth_ledger_by_user', 'scanauth_sessions_by_user']))
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(db.pragma('foreign_key_check')).toEqual([])
    expect(db.prepare('SELECT id, status FROM app_live').all()).toEqual([{ id: 2, status: 'active' }])
    // The connection's settings are back as they were.
    expect(store.database.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(store.database.pragma('legacy_alter_table', { simple: true })).toBe(0)

    // The backfilled ledger adds up to every authorization (testkit's replay), in per-authorization order.
    const upgraded = dumpFile(fixture.temp.filename)
    expect(checkInvariants(upgraded)).toEqual([])
    expect(upgraded.ledger.map((e) => [e.authorizationId, e.kind, e.points, e.remainingPoints])).toEqual([
      [1, 'grant', 0, 0], [1, 'activate', 0, 0], [1, 'expire', 0, 0],
      [2, 'grant', 10, 10], [2, 'activate', 0, 10], [2, 'consume', -3, 7],
      [3, 'grant', 5, 5],
      [4, 'grant', 4, 4], [4, 'activate', 0, 4], [4, 'consume', -4, 0], [4, 'exhaust', 0, 0],
    ])

    // The service runs on it: the loads see the old rows, a revocation is stored, a new id is 10.
    const { auth, clock } = service(store)
    clock.set(200)
    expect((await store.load({ openid: 'o-old' })).user?.authorizations.map((a) => a.id)).toEqual([2, 3])
    expect(await auth.revokeAuthorization({ authorizationId: 2, reason: 'refund' })).toMatchObject({ id: 2, status: 'revoked' })
    expect(db.prepare('SELECT status FROM scanauth_authorizations WHERE id = 3').pluck().get()).toBe('active')
    expect(await auth.grant({ openid: 'o-spent', type: 'points', points: 1, source: 'admin' })).toMatchObject({ id: 10 })
    expect(await auth.consume({ sessionToken: 'tok-old' })).toMatchObject({ status: 'ok', authorization: { remainingPoints: 4 } })
    expect((await store.load({ sessionToken: 'tok-old' })).session?.expiresAt).toBe(LATER)
    expect(checkInvariants(dumpFile(fixture.temp.filename))).toEqual([])
    // The CHECK still refuses what is not a status.
    expect(() => db.prepare(`UPDATE scanauth_authorizations SET status = 'bogus' WHERE id = 1`).run()).toThrow(/CHECK constraint/)
  })

  it('rolls a failing migration 3 back: the version 2 file keeps its tables, rows and version', () => {
    const db = rawDb()
    db.exec(V2_SCHEMA)
    db.exec(V2_DATA)
    db.exec('CREATE TABLE scanauth_idempotency (anything TEXT)') // squats on a name migration 3 creates
    const schemaBefore = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()
    const authorizations = () => db.prepare('SELECT * FROM scanauth_authorizations ORDER BY id').all()
    const rowsBefore = authorizations()
    expect(() => new SqliteStore({ filename: fixture.temp.filename })).toThrow(/migration 3 \(entitlements.*\) failed/)
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(2)
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schemaBefore)
    expect(db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'scanauth_authorizations'`).pluck().get()).toBe(9)
    expect(authorizations()).toEqual(rowsBefore)
    expect(rowsBefore).toHaveLength(4)
  })

  it('refuses a file from a newer release, with a clear error, and leaves the file as it was', () => {
    const db = rawDb()
    db.exec(`CREATE TABLE ${VERSION_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
      INSERT INTO ${VERSION_TABLE} VALUES (1, 'a', 0), (${SCHEMA_VERSION + 1}, 'from the future', 0)`)
    const open = () => new SqliteStore({ filename: fixture.temp.filename })
    expect(open).toThrow(SqliteStoreError)
    expect(open).toThrow(new RegExp(`schema version ${SCHEMA_VERSION + 1}.*supports versions up to ${SCHEMA_VERSION}`))
    try {
      open()
    } catch (error) {
      expect((error as SqliteStoreError).code).toBe('schema_too_new')
    }
    expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'scanauth_s%s'`).pluck().all()).toEqual([VERSION_TABLE])
  })

  it('reports a failing migration step and leaves the file at its previous version', () => {
    const db = rawDb()
    db.exec('CREATE TABLE scanauth_users (anything TEXT)') // squats on a name migration 1 creates
    expect(() => new SqliteStore({ filename: fixture.temp.filename })).toThrow(/migration 1 \(tables and lookup indexes\) failed/)
    expect(db.prepare(`SELECT COUNT(*) FROM sqlite_schema WHERE name = ?`).pluck().get(VERSION_TABLE)).toBe(0)
  })

  it('stores timestamps as INTEGER and booleans as 0/1', async () => {
    const store = openStore()
    const { auth } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
    await auth.handleScan({ sceneStr, openid: 'o1' })
    const db = rawDb()
    expect(db.prepare('SELECT typeof(created_at), typeof(expires_at), typeof(authorized_at) FROM scanauth_scenes').raw().get()).toEqual(['integer', 'integer', 'integer'])
    expect(db.prepare('SELECT has_claimed_free, typeof(last_seen_at) FROM scanauth_users').raw().get()).toEqual([1, 'integer'])
    expect(db.prepare('SELECT typeof(start_at), typeof(end_at), typeof(updated_at) FROM scanauth_authorizations').raw().get()).toEqual(['integer', 'integer', 'integer'])
  })
})
