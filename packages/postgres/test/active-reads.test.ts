// PostgresStore's reminders' read (Store.listActiveAuthorizations) seen in the database: the plan of
// each statement it sends (one range of a partial index of migration 7, starting at the page's
// cursor; for points the low range only, then the page's rows by primary key), a schema at version 6 upgraded to 7 with the
// authorizations already there, and a tie of many authorizations ending at one millisecond paged
// exactly. The Store contract's cases: testkit.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuthorizationRecord } from '@scanauth/core'
import { MIGRATIONS, PostgresStore, SCHEMA_VERSION } from '@scanauth/postgres'
import { dropSchema, freshSchemaName, openPool } from './support/database'
import { writeSchemaUpTo } from './support/old-schema'

const pool = openPool(6)
afterAll(() => pool.end())

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const DAY = 86_400_000

let schema = ''
let store: PostgresStore
/** The text and values of every named statement the store sends through `pool`, in order. */
let sent: Array<{ text: string; values: unknown[] }> = []
const query = pool.query.bind(pool)

beforeEach(() => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  sent = []
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    if (typeof config === 'object' && config !== null && 'text' in config) {
      const { text, values } = config as { text: string; values?: unknown[] }
      sent.push({ text, values: values ?? [] })
    }
    return (query as (...args: unknown[]) => Promise<unknown>)(config, ...rest)
  }) as typeof pool.query
})

afterEach(async () => {
  pool.query = query as typeof pool.query
  await store.close()
  await dropSchema(pool, schema)
})

/** Inserts a user and its authorizations with raw SQL (`[type, status, endAt, remainingPoints]` each); answers their ids. */
async function insertUser(openid: string, authorizations: Array<[string, string, number | null, number]>): Promise<number[]> {
  const s = `"${schema}"`
  const { rows } = await query<{ id: string }>(
    `INSERT INTO ${s}.scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ($1, $2, $2, false, 1) RETURNING id`,
    [openid, T0],
  )
  const userId = rows[0]?.id
  const ids: number[] = []
  for (const [type, status, endAt, points] of authorizations) {
    const inserted = await query<{ id: string }>(
      `INSERT INTO ${s}.scanauth_authorizations (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $6, 'purchase', $4, $4) RETURNING id`,
      [userId, type, status, T0, endAt, points],
    )
    ids.push(Number(inserted.rows[0]?.id))
  }
  return ids
}

/** The plan of each statement in `sent`, with sequential scans off (a few rows would rightly be read whole). */
async function plans(): Promise<string[]> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SET LOCAL enable_seqscan = off')
    const found: string[] = []
    for (const { text, values } of sent) {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)
      found.push(rows.map((r) => r['QUERY PLAN']).join('\n'))
    }
    await client.query('ROLLBACK')
    return found
  } finally {
    client.release()
  }
}

describe('PostgresStore: the reminders read', () => {
  it('reads one range of the partial index of each type: time from its row-value cursor with no sort, points only the low range', async () => {
    await store.migrate()
    for (let i = 0; i < 30; i++) await insertUser(`u-${i}`, [['time', 'active', T0 + (i % 5) * DAY, 0], ['points', 'expired', null, 3]])
    for (let i = 0; i < 30; i++) await insertUser(`p-${i}`, [['points', 'active', null, i]])
    await query(`ANALYZE "${schema}".scanauth_authorizations`)
    sent = []
    const time = await store.listActiveAuthorizations({ type: 'time', endFrom: T0, endBefore: T0 + 3 * DAY, after: { endAt: T0 + DAY, id: 7 }, limit: 5 })
    const points = await store.listActiveAuthorizations({ type: 'points', pointsBelow: 4, afterId: 0, limit: 2 })
    expect(time.map((a) => a.endAt)).toEqual([T0 + DAY, T0 + DAY, T0 + DAY, T0 + DAY, T0 + DAY])
    expect(points.map((a) => a.remainingPoints)).toEqual([1, 2])
    expect(sent).toHaveLength(2)
    const [timePlan, pointsPlan] = (await plans()) as [string, string]
    expect(timePlan, timePlan).toContain('Index Scan using scanauth_authorizations_active_time')
    expect(timePlan, timePlan).toMatch(/Index Cond: \(\(ROW\(end_at, id\) > ROW\(.*\)\) AND \(end_at < /)
    expect(timePlan, timePlan).not.toMatch(/Sort/)
    // The low range of the partial index (an index or bitmap scan), then the page's rows by primary key.
    expect(pointsPlan, pointsPlan).toMatch(/Index (Only )?Scan (using|on) scanauth_authorizations_active_points/)
    expect(pointsPlan, pointsPlan).toMatch(/Index Cond: \(\(remaining_points > 0\) AND \(remaining_points < /)
    expect(pointsPlan, pointsPlan).toMatch(/Index (Only )?Scan (using|on) scanauth_authorizations_pkey[^\n]*\n(.*\n)?.*Index Cond: \(id = ANY /)
    expect(pointsPlan, pointsPlan).not.toMatch(/Seq Scan/)
    // Nothing walks the primary key in id order (which would read every authorization after the cursor).
    expect(pointsPlan, pointsPlan).not.toMatch(/Index Cond: \(id > /)
  })

  it('upgrades a schema at version 6 to 7: the two partial indexes built over the authorizations there, holding only the active ones of their type', async () => {
    await writeSchemaUpTo(pool, schema, 6)
    const [expired, activeTime] = await insertUser('a', [['time', 'expired', T0 + DAY, 0], ['time', 'active', T0 + 3 * DAY, 0]])
    const [lowPoints] = await insertUser('b', [['points', 'active', null, 2], ['time', 'pending', T0 + 9 * DAY, 0]])
    await insertUser('c', [['points', 'exhausted', null, 0], ['points', 'revoked', null, 1]])
    await insertUser('d', [['points', 'active', null, 40]])
    expect(await store.schemaState()).toMatchObject({ version: 6, pending: [{ version: 7, name: 'active authorizations by end and by points left, for reminders' }] })
    expect(MIGRATIONS.at(-1)?.version).toBe(SCHEMA_VERSION)
    expect(await store.migrate()).toEqual({ from: 6, to: SCHEMA_VERSION })
    const { rows } = await query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'scanauth_authorizations_active_%' ORDER BY 1`, [schema])
    expect(rows).toEqual([{ indexname: 'scanauth_authorizations_active_points' }, { indexname: 'scanauth_authorizations_active_time' }])
    const time = await store.listActiveAuthorizations({ type: 'time', endFrom: 0, endBefore: T0 + 10 * DAY, limit: 10 })
    expect(time.map((a) => a.id)).toEqual([activeTime])
    expect(time[0]).toStrictEqual((await store.load({ authorizationId: activeTime as number })).authorization)
    expect((await store.listActiveAuthorizations({ type: 'points', pointsBelow: 5, limit: 10 })).map((a) => a.id)).toEqual([lowPoints])
    expect(expired).toBeLessThan(activeTime as number)
  })

  it('pages exactly through a tie of many authorizations that end at one millisecond', async () => {
    await store.migrate()
    await query(`INSERT INTO "${schema}".scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version)
      SELECT 'tie-' || g, $1, $1, false, 1 FROM generate_series(1, 300) g`, [T0])
    await query(`INSERT INTO "${schema}".scanauth_authorizations (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
      SELECT id, 'time', 'active', $1, $2, 0, 0, 'purchase', $1, $1 FROM "${schema}".scanauth_users ORDER BY id`, [T0, T0 + DAY])
    await insertUser('before', [['time', 'active', T0 + DAY - 1, 0]])
    await insertUser('after', [['time', 'active', T0 + DAY + 1, 0]])
    const window = { type: 'time', endFrom: T0, endBefore: T0 + 2 * DAY } as const
    const all = await store.listActiveAuthorizations({ ...window, limit: 1000 })
    expect(all.map((a) => a.endAt)).toEqual([T0 + DAY - 1, ...Array.from({ length: 300 }, () => T0 + DAY), T0 + DAY + 1])
    const paged: AuthorizationRecord[] = []
    let after: { endAt: number; id: number } | undefined
    for (;;) {
      const page = await store.listActiveAuthorizations(after === undefined ? { ...window, limit: 7 } : { ...window, after, limit: 7 })
      paged.push(...page)
      const last = page[page.length - 1]
      if (page.length < 7 || last === undefined) break
      after = { endAt: last.endAt as number, id: last.id }
    }
    expect(paged).toStrictEqual(all)
  })
})
