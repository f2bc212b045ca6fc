// PostgresStore and confirm on the phone (docs/behaviour.md B-confirm-1…12) and the poll secret
// (B-secret-1…4), read back with plain SQL: the scene columns of migration 3 written by the
// replaced scanauth_commit, a confirmation through every write of confirm mode, the lookup by
// ticket digest (B-confirm-2, B-confirm-4) in one statement on its index, what the table refuses, the purge,
// and a version 2 schema upgraded with its scenes.
import { createHash } from 'node:crypto'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SceneConfirmation, SceneRecord } from '@scanauth/core'
import { PostgresStore, SCHEMA_VERSION } from '@scanauth/postgres'
import { dropSchema, dumpSchema, freshSchemaName, openPool } from './support/database'
import { writeSchemaUpTo } from './support/old-schema'

const pool = openPool(4)
afterAll(() => pool.end())

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const TTL = 300_000
const DAY = 86_400_000

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

let schema = ''
let store: PostgresStore

beforeEach(() => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
})

afterEach(async () => {
  await store.close()
  await dropSchema(pool, schema)
})

/** Inserts a scene through the store and returns it as stored (with its id). */
async function insert(scene: Omit<SceneRecord, 'id'>): Promise<SceneRecord> {
  const result = await store.commit({ scene: { op: 'insert', scene } })
  if (!result.ok || result.ids.sceneId === null) throw new Error(`insert refused: ${JSON.stringify(result)}`)
  return { ...scene, id: result.ids.sceneId }
}

/** Writes `next` over `scene` through the store (version bumped) and returns it as stored. */
async function update(scene: SceneRecord, next: Partial<SceneRecord>): Promise<SceneRecord> {
  const written = { ...scene, ...next, version: scene.version + 1 }
  expect(await store.commit({ scene: { op: 'update', scene: written, expectedVersion: scene.version } })).toMatchObject({ ok: true })
  return written
}

/** The scene row of `sceneStr`, every column, read with plain SQL. */
async function row(sceneStr: string): Promise<Record<string, unknown> | undefined> {
  return (await pool.query(`SELECT * FROM "${schema}".scanauth_scenes WHERE scene_str = $1`, [sceneStr])).rows[0] as Record<string, unknown> | undefined
}

describe('confirm on the phone: the scene columns', () => {
  beforeEach(() => store.migrate())

  it('stores the client address and the poll secret digest of a new scene, its confirmation as NULL columns, and reads them back', async () => {
    const scene = await insert(newScene('pc_1'))
    const bare = await insert(newScene('pc_2', { requestedFrom: null, pollSecretHash: null }))
    expect(await row('pc_1')).toMatchObject({
      requested_from: '203.0.113.*',
      poll_secret_hash: scene.pollSecretHash,
      confirm_scanned_by: null,
      confirm_scanned_at: null,
      confirm_ticket_hash: null,
      confirm_csrf_hash: null,
    })
    expect((await store.load({ sceneStr: 'pc_1' })).scene).toStrictEqual(scene)
    expect((await store.load({ sceneStr: 'pc_2' })).scene).toStrictEqual(bare)
    expect((await dumpSchema(pool, schema)).scenes).toStrictEqual([scene, bare])
  })

  it('round-trips a confirmation through every write of confirm mode (scanned, page opened, denied), found by its ticket throughout', async () => {
    const pending = await insert(newScene('pc_1'))
    // A fractional millisecond too: double precision keeps whatever the clock returned (schema.ts).
    const confirmation: SceneConfirmation = { scannedBy: 'o-scanner', scannedAt: T0 + 1500.25, ticketHash: TICKET, csrfHash: null }
    const scanned = await update(pending, { status: 'scanned', confirmation })
    expect(await row('pc_1')).toMatchObject({ status: 'scanned', confirm_scanned_by: 'o-scanner', confirm_scanned_at: T0 + 1500.25, confirm_ticket_hash: TICKET, confirm_csrf_hash: null })
    expect((await store.load({ sceneStr: 'pc_1' })).scene).toStrictEqual(scanned)
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(scanned)

    const opened = await update(scanned, { confirmation: { ...confirmation, csrfHash: digest('csrf-1') } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(opened)
    // The scanner denies: the decided scene is still found by its ticket (a reused link says "already used").
    const denied = await update(opened, { status: 'denied' })
    expect(await row('pc_1')).toMatchObject({ status: 'denied', confirm_ticket_hash: TICKET, confirm_csrf_hash: digest('csrf-1') })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(denied)
    expect((await dumpSchema(pool, schema)).scenes).toStrictEqual([denied])
  })

  it('answers null for a ticket digest no scene has, and loads the other parts of the same query in the same statement', async () => {
    const pending = await insert(newScene('pc_1'))
    await update(pending, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })
    await insert(newScene('pc_2'))
    expect((await store.load({ confirmTicketHash: digest('ticket-unknown') })).scene).toBeNull()
    expect((await store.load({ confirmTicketHash: '' })).scene).toBeNull()
    await store.commit({ user: { op: 'insert', user: { openid: 'o-1', createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] } })

    // One round trip (B-load-2's rule for every load): count what reaches the pool.
    const query = pool.query.bind(pool)
    const sent: string[] = []
    pool.query = ((config: unknown, ...rest: unknown[]) => {
      sent.push(typeof config === 'string' ? config : (config as { text: string }).text)
      return (query as (...args: unknown[]) => unknown)(config, ...rest)
    }) as typeof pool.query
    let both
    try {
      both = await store.load({ confirmTicketHash: TICKET, openid: 'o-1' })
    } finally {
      pool.query = query as typeof pool.query
    }
    expect(both.scene?.sceneStr).toBe('pc_1')
    expect(both.user?.user.openid).toBe('o-1')
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatch(/scanauth_scenes x WHERE x\.confirm_ticket_hash = \$1\) AS "scene"/)
  })

  it('finds a scene by ticket through the partial index: the equality implies its predicate', async () => {
    const client = await pool.connect()
    try {
      // The table is nearly empty, so take sequential scans off the table to see what can be used.
      await client.query('SET enable_seqscan = off')
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM "${schema}".scanauth_scenes WHERE confirm_ticket_hash = '${TICKET}'`,
      )
      expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using scanauth_scenes_by_confirm_ticket_hash/)
    } finally {
      await client.query('RESET enable_seqscan')
      client.release()
    }
  })

  it('refuses in the table a confirmation without who scanned, a ticket digest used twice, and a status it does not know', async () => {
    const first = await insert(newScene('pc_1'))
    await update(first, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })
    const second = await insert(newScene('pc_2'))
    // A ticket names one scene (never twice in practice: tickets are random); the commit writes nothing.
    await expect(update(second, { status: 'scanned', confirmation: { scannedBy: 'o-2', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })).rejects.toMatchObject({
      code: '23505',
      constraint: 'scanauth_scenes_by_confirm_ticket_hash',
    })
    expect(await row('pc_2')).toMatchObject({ status: 'pending', confirm_ticket_hash: null, version: '1' })
    const t = `"${schema}".scanauth_scenes`
    await expect(pool.query(`UPDATE ${t} SET confirm_ticket_hash = 'x' WHERE scene_str = 'pc_2'`)).rejects.toMatchObject({ constraint: 'scanauth_scenes_confirmation_check' })
    await expect(pool.query(`UPDATE ${t} SET confirm_scanned_by = NULL WHERE scene_str = 'pc_1'`)).rejects.toMatchObject({ constraint: 'scanauth_scenes_confirmation_check' })
    await expect(pool.query(`UPDATE ${t} SET status = 'bogus'`)).rejects.toMatchObject({ constraint: 'scanauth_scenes_status_check' })
    await pool.query(`UPDATE ${t} SET status = 'denied' WHERE scene_str = 'pc_2'`)
    expect(await row('pc_2')).toMatchObject({ status: 'denied' })
  })

  it('keeps the stored fields when a process of the previous release writes the scene (its draft has none of the new keys)', async () => {
    const pending = await insert(newScene('pc_1'))
    const scanned = await update(pending, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: null } })
    // What the previous release's JSON.stringify sends: the record without the three keys.
    const { requestedFrom: _from, pollSecretHash: _secret, confirmation: _confirmation, ...older } = scanned
    const draft = { ...older, status: 'expired', version: scanned.version + 1 } as unknown as SceneRecord
    expect(await store.commit({ scene: { op: 'update', scene: draft, expectedVersion: scanned.version } })).toMatchObject({ ok: true })
    // Its own fields written, ours kept: the poll secret digest above all (B-secret-2).
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual({ ...scanned, status: 'expired', version: scanned.version + 1 })
    // Its inserts store NULL for them, as the rows older than the columns have.
    const inserted = await store.commit({ scene: { op: 'insert', scene: { ...older, sceneStr: 'pc_2', version: 1 } as unknown as SceneRecord } })
    expect(inserted).toMatchObject({ ok: true })
    expect((await store.load({ sceneStr: 'pc_2' })).scene).toMatchObject({ requestedFrom: null, pollSecretHash: null, confirmation: null })
  })

  it('purges a decided scene with its confirmation: its ticket then finds nothing', async () => {
    const pending = await insert(newScene('pc_1'))
    const scanned = await update(pending, { status: 'scanned', confirmation: { scannedBy: 'o-1', scannedAt: T0, ticketHash: TICKET, csrfHash: digest('csrf') } })
    await update(scanned, { status: 'denied' })
    await insert(newScene('pc_2', { expiresAt: T0 + 10 * DAY }))
    expect(await store.purgeExpired({ now: T0 + DAY })).toMatchObject({ scenes: 1, more: false })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toBeNull()
    expect((await dumpSchema(pool, schema)).scenes.map((s) => s.sceneStr)).toEqual(['pc_2'])
  })
})

describe('migration 3', () => {
  it('upgrades a version 2 schema: old scenes read back with the new fields null, the commit function replaced, denied accepted, tickets indexed', async () => {
    await writeSchemaUpTo(pool, schema, 2)
    const t = `"${schema}".scanauth_scenes`
    await pool.query(`INSERT INTO "${schema}".scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ('o-old', $1, $1, true, 2)`, [T0])
    await pool.query(
      `INSERT INTO ${t} (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version) VALUES
        ('pc_old_pending', 'tv-1', 'pending', NULL, $1, $2, NULL, 1),
        ('pc_old_authorized', 'tv-2', 'authorized', 1, $1, $2, $3, 2)`,
      [T0, T0 + TTL, T0 + 5],
    )
    const commitFunctions = async () =>
      (await pool.query(`SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'scanauth_commit'`, [schema])).rows as Array<{
        prosrc: string
      }>
    expect((await commitFunctions())[0]?.prosrc).not.toMatch(/confirm_ticket_hash/)

    expect(await store.migrate()).toEqual({ from: 2, to: SCHEMA_VERSION })
    // Migration 3 and every later one.
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(3)
    const versions = (await pool.query(`SELECT version FROM "${schema}".scanauth_schema_migrations ORDER BY version`)).rows.map((r: { version: number }) => r.version)
    expect(versions).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1))
    // Replaced in place: one function, now writing the new columns.
    const functions = await commitFunctions()
    expect(functions).toHaveLength(1)
    expect(functions[0]?.prosrc).toMatch(/confirm_ticket_hash = CASE WHEN draft \? 'confirmation' THEN draft #>> '\{confirmation,ticketHash\}'/)

    const old = (id: number, sceneStr: string, over: Partial<SceneRecord>): SceneRecord => ({
      ...newScene(sceneStr, { requestedFrom: null, pollSecretHash: null, confirmation: null }),
      id,
      ...over,
    })
    const pending = old(1, 'pc_old_pending', {})
    const authorized = old(2, 'pc_old_authorized', { deviceId: 'tv-2', status: 'authorized', userId: 1, authorizedAt: T0 + 5, version: 2 })
    expect((await store.load({ sceneStr: 'pc_old_pending' })).scene).toStrictEqual(pending)
    expect((await store.load({ sceneStr: 'pc_old_authorized' })).scene).toStrictEqual(authorized)
    expect((await dumpSchema(pool, schema)).scenes).toStrictEqual([pending, authorized])
    const indexes = (await pool.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'scanauth_scenes' ORDER BY 1`, [schema])).rows.map(
      (r: { indexname: string }) => r.indexname,
    )
    expect(indexes).toEqual(['scanauth_scenes_by_confirm_ticket_hash', 'scanauth_scenes_by_expiry', 'scanauth_scenes_pkey', 'scanauth_scenes_scene_str_key'])

    // The store works on the upgraded schema: an old scene takes a confirmation and is found by it,
    // a denial is stored, and a new scene's id continues after the old ones.
    const scanned = await update(pending, { status: 'scanned', confirmation: { scannedBy: 'o-old', scannedAt: T0 + 1, ticketHash: TICKET, csrfHash: null } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toStrictEqual(scanned)
    const denied = await update(scanned, { status: 'denied' })
    expect((await store.load({ sceneStr: 'pc_old_pending' })).scene).toStrictEqual(denied)
    expect((await insert(newScene('pc_new'))).id).toBe(3)
    // A second migrate() finds the schema current.
    expect(await new PostgresStore({ pool, schema }).migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  })
})
