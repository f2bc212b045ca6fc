// PostgresStore.purgeExpired beyond the contract suite's purge cases: what each batch sends, and
// why a purge that runs beside commits deletes nothing they still need (src/purge.ts): a scene
// written between the candidate select and the DELETE keeps its row.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { eventually, ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { dropSchema, dumpSchema, freshSchemaName, openPool } from './support/database'

const pool = openPool(4)
afterAll(() => pool.end())

const SCENE_TTL = 300_000

/** Whether `text` is a purge batch's first statement, the select of candidate scenes. */
function isCandidateSelect(text: string): boolean {
  return text.startsWith('SELECT id, version, expires_at, session_end')
}
let schema = ''
let store: PostgresStore
let clock: ManualClock
let auth: ScanAuth
const query = pool.query.bind(pool)
/** Runs after each statement the pool answers, with its text, before the caller sees the answer. */
let afterStatement: (text: string) => Promise<void> = async () => undefined
let sent: string[] = []

beforeEach(async () => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  await store.migrate()
  clock = new ManualClock()
  auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
  pool.query = (async (config: unknown, ...rest: unknown[]) => {
    const text = typeof config === 'string' ? config : ((config as { text: string }).text ?? '')
    sent.push(text)
    const answer = await (query as (...args: unknown[]) => Promise<unknown>)(config, ...rest)
    await afterStatement(text)
    return answer
  }) as typeof pool.query
})

afterEach(async () => {
  pool.query = query as typeof pool.query
  afterStatement = async () => undefined
  await store.close()
  await dropSchema(pool, schema)
})

it('sends two statements per batch: the scene candidates, then one DELETE of every kind', async () => {
  for (let i = 0; i < 5; i++) await auth.createScene({ deviceId: `tv-${i}` })
  clock.advance(SCENE_TTL)
  sent = []
  const result = await store.purgeExpired({ now: clock.now(), batchSize: 2 })
  expect(result).toMatchObject({ scenes: 5, sessions: 0, batches: 3, more: false })
  expect(sent).toHaveLength(6)
  expect(sent.filter((text) => isCandidateSelect(text))).toHaveLength(3)
  expect(sent.filter((text) => /^WITH gone_scenes AS/.test(text))).toHaveLength(3)
})

it('keeps a scene that a commit wrote after the purge read it, and deletes it on the next purge', async () => {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  clock.advance(SCENE_TTL)
  // Between the candidate select and the DELETE, a poll marks the expired scene `expired`
  // (B-poll-2): a commit that bumps its version.
  afterStatement = async (text) => {
    if (!isCandidateSelect(text)) return
    afterStatement = async () => undefined
    expect((await auth.getStatus(sceneStr)).status).toBe('expired')
  }
  expect(await store.purgeExpired({ now: clock.now() })).toMatchObject({ scenes: 0 })
  expect((await dumpSchema(pool, schema)).scenes).toMatchObject([{ sceneStr, status: 'expired' }])
  expect(await store.purgeExpired({ now: clock.now() })).toMatchObject({ scenes: 1 })
  expect((await dumpSchema(pool, schema)).scenes).toEqual([])
})

it('keeps a counter restarted while its DELETE waits: the DELETE judges expiries as they are when it reaches the row', async () => {
  const now = clock.now()
  await store.incrementCounter('window', now + 1000, now)
  // Another session restarts the expired counter (what incrementCounter does: count 1, a later
  // expiry) and holds the row until the purge's DELETE, which chose the row as expired, waits on it.
  const other = await pool.connect()
  try {
    await other.query('BEGIN')
    await other.query(`UPDATE "${schema}".scanauth_counters SET count = 1, expires_at = $1 WHERE key = 'window'`, [now + 60_000])
    const purging = store.purgeExpired({ now: now + 1000 })
    // Read outside `other`'s transaction, which would see one snapshot of pg_stat_activity throughout.
    await eventually('the purge DELETE to wait for the restarted row', async () => {
      const { rows } = await query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%gone_counters%' AND query LIKE $1`,
        [`%${schema}%`],
      )
      return rows.length > 0
    })
    await other.query('COMMIT')
    expect(await purging).toMatchObject({ counters: 0 })
  } finally {
    // After a failure above: end the transaction, so that the purge can finish and the client goes back clean.
    await other.query('ROLLBACK')
    other.release()
  }
  expect(await store.incrementCounter('window', now + 60_000, now + 1001)).toBe(2)
})

it('refuses to run before migrate(), like every other operation', async () => {
  const fresh = new PostgresStore({ pool, schema: freshSchemaName() })
  await expect(fresh.purgeExpired({ now: clock.now() })).rejects.toMatchObject({ code: 'not_migrated' })
})
