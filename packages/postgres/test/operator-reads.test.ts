// PostgresStore's operator reads (Store.listLiveSessions / listUsers / listOrders / schemaState) seen
// in the database: the plan of every statement they send (an index range, and for orders one that
// starts at the page's cursor or createdFrom and needs no sort), the indexes of migration 5 and a
// schema at version 4 upgraded to them, and schemaState before migrate() on a schema that does not
// exist, that holds no tables, and that is behind. The Store contract's cases: testkit.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StoreSnapshot } from '@scanauth/testkit'
import { MIGRATIONS, PostgresStore, SCHEMA_VERSION } from '@scanauth/postgres'
import { dropSchema, freshSchemaName, openPool } from './support/database'
import { writeSchemaUpTo } from './support/old-schema'

type OrderRecord = NonNullable<StoreSnapshot['orders']>[number]

const pool = openPool(6)
afterAll(() => pool.end())

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60_000

let schema = ''
let store: PostgresStore
/** The text and values of every named statement the store sends through `pool`, in order. */
let sent: Array<{ text: string; values: unknown[] }> = []
const query = pool.query.bind(pool)

beforeEach(async () => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  await store.migrate()
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

const order = (i: number): OrderRecord => ({
  outTradeNo: `SA${String(i).padStart(26, '0')}`,
  userId: i % 4,
  planId: 'month',
  description: '月卡',
  amountFen: 1500,
  grant: { type: 'time', days: 30 },
  sceneStr: null,
  channel: i % 2 === 0 ? 'native' : 'jsapi',
  status: (['open', 'paid', 'closed', 'refunded'] as const)[i % 4] as OrderRecord['status'],
  createdAt: T0 + (i % 5) * MINUTE,
  expiresAt: T0 + 20 * MINUTE,
  updatedAt: T0,
  paidAt: null,
  transactionId: null,
  authorizationId: null,
  refundedFen: 0,
  refunds: [],
  version: 1,
})

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

describe('PostgresStore operator reads', () => {
  it('lists orders from one index range per set of filters, starting at the cursor or createdFrom, with no sort', async () => {
    for (let i = 0; i < 40; i++) await store.saveOrder({ op: 'insert', order: order(i) })
    const after = { createdAt: T0 + MINUTE, outTradeNo: order(10).outTradeNo }
    sent = []
    await store.listOrders({ limit: 5, after })
    await store.listOrders({ status: 'paid', limit: 5, createdFrom: T0 + MINUTE })
    await store.listOrders({ userId: 1, limit: 5, after, createdBefore: T0 + 3 * MINUTE })
    await store.listOrders({ userId: 2, status: 'closed', limit: 5, createdFrom: T0 + 2 * MINUTE, after })
    expect(sent).toHaveLength(4)
    const indexes = ['scanauth_orders_by_time', 'scanauth_orders_open', 'scanauth_orders_by_user_time', 'scanauth_orders_by_user']
    for (const [i, plan] of (await plans()).entries()) {
      expect(plan, plan).toContain(`Index Scan using ${indexes[i]}`)
      expect(plan, plan).not.toMatch(/Sort/)
      // The page's one lower bound is an index condition: the range starts where the page does.
      expect(plan, plan).toMatch(/Index Cond: .*ROW\(created_at, out_trade_no\) >=? /)
    }
  })

  it("lists a user's live sessions from the user's range of scanauth_sessions_by_user, and users by primary key", async () => {
    sent = []
    await store.listLiveSessions({ userId: 7, now: T0, limit: 5 })
    await store.listUsers({ afterId: 3, limit: 5 })
    const [sessions, users] = await plans()
    expect(sessions, sessions).toMatch(/Index Scan using scanauth_sessions_by_user .*\n.*Index Cond: \(\(user_id = .*\) AND \(expires_at > /)
    expect(users, users).toMatch(/Index Scan using scanauth_users_pkey .*\n.*Index Cond: \(id > /)
  })

  it('adds the two order indexes of migration 5 to a schema at version 4, over the orders already there', async () => {
    await dropSchema(pool, schema)
    await writeSchemaUpTo(pool, schema, 4)
    await query(
      `INSERT INTO "${schema}".scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days,
        status, created_at, expires_at, updated_at, refunded_fen, refunds, version)
        VALUES ('SA00000000000000000000000001', 7, 'month', 'm', 1500, 'time', 30, 'paid', $1, $1, $1, 0, '[]', 1)`,
      [T0],
    )
    const upgraded = new PostgresStore({ pool, schema })
    expect(await upgraded.schemaState()).toEqual({
      version: 4,
      latest: SCHEMA_VERSION,
      pending: [
        { version: 5, name: 'orders by time and by user for listOrders' },
        { version: 6, name: 'orders: payment channel' },
        { version: 7, name: 'active authorizations by end and by points left, for reminders' },
      ],
      exists: true,
    })
    expect(await upgraded.migrate()).toEqual({ from: 4, to: SCHEMA_VERSION })
    const { rows } = await query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('scanauth_orders_by_time', 'scanauth_orders_by_user_time') ORDER BY 1`, [schema])
    expect(rows).toEqual([{ indexname: 'scanauth_orders_by_time' }, { indexname: 'scanauth_orders_by_user_time' }])
    expect((await upgraded.listOrders({ userId: 7, limit: 10 })).map((o) => o.outTradeNo)).toEqual(['SA00000000000000000000000001'])
    await upgraded.close()
  })

  it('answers schemaState before migrate(): a schema that does not exist, one without our tables, one that is current; and writes nothing', async () => {
    const missing = freshSchemaName()
    const fresh = new PostgresStore({ pool, schema: missing })
    const all = MIGRATIONS.map((m) => ({ version: m.version, name: m.name }))
    expect(await fresh.schemaState()).toEqual({ version: 0, latest: SCHEMA_VERSION, pending: all, exists: false })
    expect((await query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing])).rowCount).toBe(0)
    await query(`CREATE SCHEMA "${missing}"`)
    try {
      expect(await fresh.schemaState()).toEqual({ version: 0, latest: SCHEMA_VERSION, pending: all, exists: true })
      // The store's other methods still wait for migrate().
      await expect(fresh.listUsers({ limit: 1 })).rejects.toMatchObject({ code: 'not_migrated' })
    } finally {
      await dropSchema(pool, missing)
    }
    expect(await new PostgresStore({ pool, schema }).schemaState()).toEqual({ version: SCHEMA_VERSION, latest: SCHEMA_VERSION, pending: [], exists: true })
  })
})
