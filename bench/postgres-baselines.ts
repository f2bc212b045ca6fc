/**
 * The raw node-postgres work the PostgreSQL benchmarks compare the store with: named prepared
 * statements (parsed once per connection, as the store's are) returning rows as arrays (the
 * cheapest way node-postgres reads a row), on the store's own schema and pool.
 *
 * @module
 */
import type pg from 'pg'

/** Rows the read-and-update transactions lock in turn. */
export const RAW_ROWS = 1000

/** The raw statements of one schema. */
export interface RawBaselines {
  /** One point select of a scene by its unique key, the index a poll uses. */
  sceneByStr(sceneStr: string): Promise<unknown>
  /** One select of the user with its live authorizations and the scene's latest session. */
  userLiveAndLatestSession(userId: string, sceneId: string): Promise<unknown>
  /** `BEGIN`; `SELECT … FOR UPDATE` of raw scene `i % RAW_ROWS` by primary key; `UPDATE` of it; `COMMIT`. */
  sceneTx(i: number): Promise<void>
  /** The same on an authorization row of its own (i-th, round robin): spends one of its points. */
  authorizationTx(i: number): Promise<void>
  /** One autocommit `INSERT` of a pending scene. */
  insertScene(): Promise<unknown>
  /** `INSERT … ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count` on a table of its own. */
  upsertCounter(key: string): Promise<unknown>
}

/**
 * Prepares the raw baselines on the migrated schema `schema`: {@link RAW_ROWS} scenes and, under a
 * user of their own, {@link RAW_ROWS} points authorizations of their own (so that their updates
 * touch nothing the store's rows measure), and a counter table of their own.
 * `now()` is the clock the timestamps are written with.
 */
export async function rawBaselines(pool: pg.Pool, schema: string, now: () => number): Promise<RawBaselines> {
  const s = `"${schema}"`
  const { rows } = await pool.query<[string]>({
    text: `INSERT INTO ${s}.scanauth_scenes (scene_str, device_id, status, created_at, expires_at, version)
      SELECT 'raw_' || g, 'raw', 'pending', $1::double precision, $1::double precision + 3600000, 1 FROM generate_series(1, ${RAW_ROWS}) g RETURNING id`,
    values: [now()],
    rowMode: 'array',
  })
  const rawSceneIds = rows.map((r) => r[0])
  const rawUser = await pool.query<[string]>({
    text: `INSERT INTO ${s}.scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ('raw', $1, $1, false, 1) RETURNING id`,
    values: [now()],
    rowMode: 'array',
  })
  // Points enough for any run: the raw transaction spends one per call and never checks.
  const rawAuthorizations = await pool.query<[string]>({
    text: `INSERT INTO ${s}.scanauth_authorizations (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
      SELECT $1, 'points', 'pending', $2, NULL, 1000000000000, 1000000000000, 'raw', $2, $2 FROM generate_series(1, ${RAW_ROWS}) RETURNING id`,
    values: [rawUser.rows[0]?.[0], now()],
    rowMode: 'array',
  })
  const rawAuthorizationIds = rawAuthorizations.rows.map((r) => r[0])
  await pool.query(`CREATE TABLE ${s}.bench_raw_counters (key text COLLATE "C" PRIMARY KEY, count bigint NOT NULL)`)

  const select = (name: string, text: string, values: unknown[]) => pool.query({ name: `bench_${name}`, text, values, rowMode: 'array' })
  const readAndUpdate = (name: string, table: string, set: string) => async (id: string) => {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await client.query({ name: `bench_lock_${name}`, text: `SELECT * FROM ${s}.${table} WHERE id = $1 FOR UPDATE`, values: [id], rowMode: 'array' })
      await client.query({ name: `bench_update_${name}`, text: `UPDATE ${s}.${table} SET ${set} WHERE id = $1`, values: [id, now()] })
      await client.query('COMMIT')
    } finally {
      client.release()
    }
  }
  const sceneTx = readAndUpdate('scene', 'scanauth_scenes', 'authorized_at = $2, version = version + 1')
  const authorizationTx = readAndUpdate('authorization', 'scanauth_authorizations', 'remaining_points = remaining_points - 1, updated_at = $2')
  const insertText = `INSERT INTO ${s}.scanauth_scenes (scene_str, device_id, status, created_at, expires_at, version) VALUES ($1, 'raw', 'pending', $2, $3, 1)`
  let inserted = 0
  const insertValues = () => [`raw_insert_${inserted++}`, now(), now() + 300_000]

  return {
    sceneByStr: (sceneStr) => select('scene', `SELECT * FROM ${s}.scanauth_scenes WHERE scene_str = $1`, [sceneStr]),
    userLiveAndLatestSession: (userId, sceneId) =>
      select(
        'user_live_session',
        `SELECT u.*, a.*, x.* FROM ${s}.scanauth_users u
          LEFT JOIN ${s}.scanauth_authorizations a ON a.user_id = u.id AND a.status IN ('pending', 'active')
          LEFT JOIN LATERAL (SELECT * FROM ${s}.scanauth_sessions WHERE scene_id = $2 ORDER BY id DESC LIMIT 1) x ON true
          WHERE u.id = $1`,
        [userId, sceneId],
      ),
    sceneTx: (i) => sceneTx(rawSceneIds[i % RAW_ROWS] as string),
    authorizationTx: (i) => authorizationTx(rawAuthorizationIds[i % RAW_ROWS] as string),
    insertScene: () => pool.query({ name: 'bench_insert_scene', text: insertText, values: insertValues() }),
    upsertCounter: (key) =>
      pool.query({
        name: 'bench_upsert',
        text: `INSERT INTO ${s}.bench_raw_counters (key, count) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET count = bench_raw_counters.count + 1 RETURNING count`,
        values: [key],
        rowMode: 'array',
      }),
  }
}
