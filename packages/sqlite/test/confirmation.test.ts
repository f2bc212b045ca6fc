// SqliteStore and confirm on the phone (docs/behaviour.md B-confirm-1…12) and the poll secret
// (B-secret-1…4), seen in the file itself through a raw connection of the test's own: the scene
// columns of migration 7, a confirmation through every write of confirm mode, the lookup by ticket
// digest (B-confirm-2, B-confirm-4), what the table refuses, the purge, and a version 6 file upgraded with its
// scenes. The lookup's plan: query-plans.test.ts.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { SceneConfirmation, SceneRecord } from '@scanauth/core'
import { MIGRATIONS, VERSION_TABLE, type SqliteStore } from '@scanauth/sqlite'
import { dumpFile } from './support/files'
import { DAY, useTempFile } from './support/fixture'
import { writeSchemaUpTo } from './support/old-schema'

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const TTL = 300_000

/** A SHA-256 digest in base64url, as core stores the ticket, CSRF token and poll secret. */
const digest = (secret: string) => createHash('sha256').update(secret).digest('base64url')
const TICKET = digest('ticket-1')

const newScene = (sceneStr: string, over: Partial<SceneRecord> = {}): Omit<SceneRecord, 'id'> => ({
  sceneStr,
  deviceId: 'tv-1',
  status: 'pending',
  userId: null,
  createdAt: T0,
  expiresAt: T0 + TTL,
  authorizedAt: null,
  requestedFrom: '203.0.113.*',
  pollSecretHash: digest('poll-secret-1'),
  confirmation: null,
  version: 1,
  ...over,
})

/** Inserts a scene through the store and returns it as stored (with its id). */
async function insert(store: SqliteStore, scene: Omit<SceneRecord, 'id'>): Promise<SceneRecord> {
  const result = await store.commit({ scene: { op: 'insert', scene } })
  if (!result.ok || result.ids.sceneId === null) throw new Error(`insert refused: ${JSON.stringify(result)}`)
  return { ...scene, id: result.ids.sceneId }
}

/** Writes `next` over `scene` through the store (version bumped) and returns it as stored. */
async function update(store: SqliteStore, scene: SceneRecord, next: Partial<SceneRecord>): Promise<SceneRecord> {
  const written = { ...scene, ...next, version: scene.version + 1 }
  expect(await store.commit({ scene: { op: 'update', scene: written, expectedVersion: scene.version } })).toMatchObject({ ok: true })
  return written
}

/** The scene row of `sceneStr`, every column, read straight from the file. */
function row(sceneStr: string): Record<string, unknown> | undefined {
  return fixture.rawDb({ readonly: true }).prepare('SELECT * FROM scanauth_scenes WHERE scene_str = ?').get(sceneStr) as Record<string, unknown> | undefined
}

describe('confirm on the phone: the scene columns', () => {
  it('stores the client address and the poll secret digest of a new scene, its confirmation as NULL columns, and reads them back', async () => {
    const store = fixture.openStore()
    const scene = await insert(store, newScene('pc_1'))
    const bare = await insert(store, newScene('pc_2', { requestedFrom: null, pollSecretHash: null }))
    expect(row('pc_1')).toMatchObject({
      requested_from: '203.0.113.*',
      poll_secret_hash: scene.pollSecretHash,
      confirm_scanned_by: null,
      confirm_scanned_at: null,
      confirm_ticket_hash: null,
      confirm_csrf_hash: null,
    })
    expect((await store.load({ sceneStr: 'pc_1' })).scene).toStrictEqual(scene)
    expect((await store.load({ sceneStr: 'pc_2' })).scene).toStrictEqual(bare)
    expect(dumpFile(fixture.temp.filename).scenes).toStrictEqual([scene, bare])
  })

  it('round-trips a confirmation through every write of confirm mode (scanned, page opened, denied), found by its ticket throughout', async () => {
    const store = fixture.openStore()
    const pending = await insert(store, newScene('pc_1'))
    // A fractional millisecond too: the column keeps whatever the clock returned (not STRICT, schema.ts).
    const confirmation: SceneConfirmation = { scannedBy: 'o-scanner', scannedAt: T0 + 1500.25, ticketHash: TICKET, csrfHash: null }
    const scanned = await update(store, pending, { status: 'scanned', confirmation })
    expect(row('pc_1')).toMatchObject({ status: 'scanned', confirm_scanned_by: 'o-scanner', confirm_scanned_at: T0 + 1500.25, confirm_ticket_hash: TICKET, confirm_csrf_hash: null })
    expect((await store.load({ sceneStr: 'pc_1' })).scene).toStrictEqual(scanned)
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(scanned)

    // The page is opened: only the CSRF digest changes (the ticket's index entry stays as it is).
    const opened = await update(store, scanned, { confirmation: { ...confirmation, csrfHash: digest('csrf-1') } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(opened)
    // The scanner denies: the decided scene is still found by its ticket (a reused link says "already used").
    const denied = await update(store, opened, { status: 'denied' })
    expect(row('pc_1')).toMatchObject({ status: 'denied', confirm_ticket_hash: TICKET, confirm_csrf_hash: digest('csrf-1') })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(denied)
    expect(dumpFile(fixture.temp.filename).scenes).toStrictEqual([denied])
  })

  it('answers null for a ticket digest no scene has, and loads the other parts of the same query as usual', async () => {
    const store = fixture.openStore()
    const pending = await insert(store, newScene('pc_1'))
    await update(store, pending, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })
    await insert(store, newScene('pc_2'))
    expect((await store.load({ confirmTicketHash: digest('ticket-unknown') })).scene).toBeNull()
    // A scene without a confirmation is never found by a ticket, not even by an empty digest.
    expect((await store.load({ confirmTicketHash: '' })).scene).toBeNull()
    await store.commit({ user: { op: 'insert', user: { openid: 'o-1', createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] } })
    const both = await store.load({ confirmTicketHash: TICKET, openid: 'o-1' })
    expect(both.scene?.sceneStr).toBe('pc_1')
    expect(both.user?.user.openid).toBe('o-1')
  })

  it('refuses in the table a confirmation without who scanned, a ticket digest used twice, and a status it does not know', async () => {
    const store = fixture.openStore()
    const first = await insert(store, newScene('pc_1'))
    await update(store, first, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })
    const second = await insert(store, newScene('pc_2'))
    // A ticket names one scene: the unique index refuses the same digest on another (never happens: tickets are random).
    await expect(update(store, second, { status: 'scanned', confirmation: { scannedBy: 'o-2', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })).rejects.toThrow(
      /UNIQUE constraint failed: scanauth_scenes.confirm_ticket_hash/,
    )
    expect(row('pc_2')).toMatchObject({ status: 'pending', confirm_ticket_hash: null, version: 1 })
    const db = fixture.rawDb()
    expect(() => db.exec(`UPDATE scanauth_scenes SET confirm_ticket_hash = 'x' WHERE scene_str = 'pc_2'`)).toThrow(/CHECK constraint failed/)
    expect(() => db.exec(`UPDATE scanauth_scenes SET confirm_scanned_by = NULL WHERE scene_str = 'pc_1'`)).toThrow(/CHECK constraint failed/)
    expect(() => db.exec(`UPDATE scanauth_scenes SET status = 'bogus'`)).toThrow(/CHECK constraint failed/)
    db.exec(`UPDATE scanauth_scenes SET status = 'denied' WHERE scene_str = 'pc_2'`)
    expect(row('pc_2')).toMatchObject({ status: 'denied' })
  })

  it('purges a decided scene with its confirmation: its ticket then finds nothing', async () => {
    const store = fixture.openStore()
    const pending = await insert(store, newScene('pc_1'))
    const scanned = await update(store, pending, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: digest('csrf') } })
    await update(store, scanned, { status: 'denied' })
    await insert(store, newScene('pc_2', { expiresAt: T0 + 10 * DAY }))
    expect(await store.purgeExpired({ now: T0 + DAY })).toMatchObject({ scenes: 1, more: false })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toBeNull()
    expect(dumpFile(fixture.temp.filename).scenes.map((s) => s.sceneStr)).toEqual(['pc_2'])
  })
})

describe('migration 7', () => {
  it('upgrades a version 6 file: old scenes read back with the new fields null, ids and sequence kept, denied accepted, tickets indexed', async () => {
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 6)
    db.exec(`
      INSERT INTO scanauth_users (id, openid, created_at, last_seen_at, has_claimed_free, version) VALUES (1, 'o-old', ${T0}, ${T0}, 1, 2);
      INSERT INTO scanauth_scenes (id, scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version) VALUES
        (3, 'pc_old_pending', 'tv-1', 'pending', NULL, ${T0}, ${T0 + TTL}, NULL, 1),
        (4, 'pc_old_authorized', 'tv-2', 'authorized', 1, ${T0}, ${T0 + TTL}, ${T0 + 5}, 2);
      UPDATE sqlite_sequence SET seq = 9 WHERE name = 'scanauth_scenes';
      -- The application's own view on our table must survive the rebuild.
      CREATE VIEW app_scenes AS SELECT id, status FROM scanauth_scenes;
    `)
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(6)

    const store = fixture.openStore()
    expect(db.prepare(`SELECT version FROM ${VERSION_TABLE} ORDER BY version`).pluck().all()).toEqual(MIGRATIONS.map((m) => m.version))
    expect(MIGRATIONS.map((m) => m.version)).toContain(7)
    const old = (id: number, sceneStr: string, over: Partial<SceneRecord>): SceneRecord => ({
      ...newScene(sceneStr, { requestedFrom: null, pollSecretHash: null, confirmation: null }),
      id,
      ...over,
    })
    const pending = old(3, 'pc_old_pending', {})
    const authorized = old(4, 'pc_old_authorized', { deviceId: 'tv-2', status: 'authorized', userId: 1, authorizedAt: T0 + 5, version: 2 })
    expect((await store.load({ sceneStr: 'pc_old_pending' })).scene).toStrictEqual(pending)
    expect((await store.load({ sceneStr: 'pc_old_authorized' })).scene).toStrictEqual(authorized)
    expect(dumpFile(fixture.temp.filename).scenes).toStrictEqual([pending, authorized])
    expect(db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'scanauth_scenes'`).pluck().get()).toBe(9)
    const indexes = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'scanauth_scenes' ORDER BY name`).pluck().all()
    expect(indexes).toEqual(['scanauth_scenes_by_confirm_ticket_hash', 'scanauth_scenes_by_expiry', 'scanauth_scenes_by_scene_str'])
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(db.pragma('foreign_key_check')).toEqual([])
    expect(db.prepare('SELECT id, status FROM app_scenes ORDER BY id').all()).toEqual([{ id: 3, status: 'pending' }, { id: 4, status: 'authorized' }])
    expect(store.database.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(store.database.pragma('legacy_alter_table', { simple: true })).toBe(0)

    // The store works on the upgraded file: an old scene takes a confirmation and is found by it,
    // a denial is stored, and a new scene's id continues after the sequence (never reused).
    const scanned = await update(store, pending, { status: 'scanned', confirmation: { scannedBy: 'o-old', scannedAt: T0 + 1, ticketHash: TICKET, csrfHash: null } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(scanned)
    const denied = await update(store, scanned, { status: 'denied' })
    expect((await store.load({ sceneStr: 'pc_old_pending' })).scene).toStrictEqual(denied)
    expect((await insert(store, newScene('pc_new'))).id).toBe(10)
  })
})
