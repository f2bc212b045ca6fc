// PostgresStore's orders (Store.loadOrder / saveOrder / listOpenOrders) seen in the database itself,
// through raw SQL on the test's own pool: the table of migration 2 (column types, collation,
// indexes), the row each write leaves (fen as bigint, the grant's columns, the refunds' jsonb), a
// refused write leaving the row untouched, a schema at version 1 upgraded with its data, the plans
// of the listings (an index range in order, no sort), purgeExpired deleting the rows of closed
// orders past their payment deadline through the partial index of migration 4 (docs/behaviour.md,
// B-order-purge) while every other row stays, and the channel column of migration 6 (a version 5
// schema's orders read as native). The Store contract's order cases: testkit.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StoreSnapshot } from '@scanauth/testkit'
import { PostgresStore, SCHEMA_VERSION } from '@scanauth/postgres'
import { dropSchema, freshSchemaName, openPool } from './support/database'
import { writeSchemaUpTo } from './support/old-schema'

type OrderRecord = NonNullable<StoreSnapshot['orders']>[number]

const pool = openPool(6)
afterAll(() => pool.end())

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const DAY = 86_400_000

let schema = ''
let store: PostgresStore
/** The text and values of every statement the store sends through `pool`, in order. */
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

const order = (outTradeNo: string, over: Partial<OrderRecord> = {}): OrderRecord => ({
  outTradeNo,
  userId: 7,
  planId: 'month',
  description: '月卡',
  amountFen: 1500,
  grant: { type: 'time', days: 30 },
  sceneStr: 'scene-1',
  channel: 'native',
  status: 'open',
  createdAt: T0,
  expiresAt: T0 + 900_000,
  updatedAt: T0,
  paidAt: null,
  transactionId: null,
  authorizationId: null,
  refundedFen: 0,
  refunds: [],
  version: 1,
  ...over,
})

/** The stored row of `outTradeNo`, bigints as node-postgres reads them (decimal strings), jsonb parsed. */
async function row(outTradeNo: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await query(`SELECT * FROM "${schema}".scanauth_orders WHERE out_trade_no = $1`, [outTradeNo])
  return rows[0] as Record<string, unknown> | undefined
}

describe('PostgresStore orders', () => {
  it('creates scanauth_orders (migration 2): bigint fen, double precision times, jsonb refunds, "C" keys, three listing indexes', async () => {
    const { rows: columns } = await query<{ column_name: string; data_type: string; collation_name: string | null; is_nullable: string }>(
      `SELECT column_name, data_type, collation_name, is_nullable FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'scanauth_orders' ORDER BY ordinal_position`,
      [schema],
    )
    const byName = Object.fromEntries(columns.map((c) => [c.column_name, c]))
    expect(columns.map((c) => c.column_name)).toEqual([
      'out_trade_no', 'user_id', 'plan_id', 'description', 'amount_fen', 'grant_type', 'grant_days', 'grant_points', 'scene_str',
      'status', 'created_at', 'expires_at', 'updated_at', 'paid_at', 'transaction_id', 'authorization_id', 'refunded_fen', 'refunds', 'version',
      'channel', // migration 6
    ])
    for (const name of ['amount_fen', 'refunded_fen', 'user_id', 'grant_points', 'authorization_id', 'version']) expect(byName[name]?.data_type, name).toBe('bigint')
    for (const name of ['created_at', 'expires_at', 'updated_at', 'paid_at', 'grant_days']) expect(byName[name]?.data_type, name).toBe('double precision')
    expect(byName.refunds?.data_type).toBe('jsonb')
    expect(byName.out_trade_no?.collation_name).toBe('C')
    expect(byName.scene_str?.collation_name).toBe('C')
    expect(byName.scene_str?.is_nullable).toBe('YES')
    expect(byName.channel).toMatchObject({ data_type: 'text', is_nullable: 'NO' })
    const { rows: indexes } = await query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'scanauth_orders' ORDER BY indexname`,
      [schema],
    )
    expect(indexes.map((i) => [i.indexname, i.indexdef.replace(/^.*USING btree /, '')])).toEqual([
      ['scanauth_orders_by_scene', '(scene_str, status, created_at, out_trade_no)'],
      // Migration 5: every order by time, and a user's whatever their status, for listOrders.
      ['scanauth_orders_by_time', '(created_at, out_trade_no)'],
      ['scanauth_orders_by_user', '(user_id, status, created_at, out_trade_no)'],
      ['scanauth_orders_by_user_time', '(user_id, created_at, out_trade_no)'],
      // Migration 4: closed orders by payment deadline, for the purge; partial, so only closed rows are in it.
      ['scanauth_orders_closed_by_expiry', "(expires_at) WHERE (status = 'closed'::text)"],
      ['scanauth_orders_open', '(status, created_at, out_trade_no)'],
      ['scanauth_orders_pkey', '(out_trade_no)'],
    ])
  })

  it('writes one row per order, fen amounts up to 2^53 - 1 exact, and reads it back as numbers', async () => {
    const paid = order('SA00000000000000000000000001', {
      amountFen: Number.MAX_SAFE_INTEGER,
      grant: { type: 'points', points: 100 },
      sceneStr: null,
      channel: 'jsapi',
      status: 'refunded',
      paidAt: T0 + 1,
      transactionId: 'tx-1',
      authorizationId: 12,
      refundedFen: Number.MAX_SAFE_INTEGER - 1,
      refunds: [
        { outRefundNo: 'R1', refundId: 'rid-1', amountFen: Number.MAX_SAFE_INTEGER - 2, at: T0 + 2 },
        { outRefundNo: 'R2', refundId: 'rid-2', amountFen: 1, at: T0 + 3 },
      ],
      version: 3,
    })
    expect(await store.saveOrder({ op: 'insert', order: paid })).toBe(true)
    expect(await row(paid.outTradeNo)).toEqual({
      out_trade_no: paid.outTradeNo,
      user_id: '7',
      plan_id: 'month',
      description: '月卡',
      amount_fen: '9007199254740991',
      grant_type: 'points',
      grant_days: null,
      grant_points: '100',
      scene_str: null,
      status: 'refunded',
      created_at: T0,
      expires_at: T0 + 900_000,
      updated_at: T0,
      paid_at: T0 + 1,
      transaction_id: 'tx-1',
      authorization_id: '12',
      refunded_fen: '9007199254740990',
      refunds: paid.refunds,
      version: '3',
      channel: 'jsapi',
    })
    // Half a day of a time grant, and an empty refunds array (never NULL).
    const open = order('SA00000000000000000000000002', { grant: { type: 'time', days: 0.5 } })
    await store.saveOrder({ op: 'insert', order: open })
    expect(await row(open.outTradeNo)).toMatchObject({ grant_type: 'time', grant_days: 0.5, grant_points: null, refunds: [], channel: 'native' })
    expect(await store.loadOrder(paid.outTradeNo)).toStrictEqual(paid)
    expect(await store.loadOrder(open.outTradeNo)).toStrictEqual(open)
    // The table itself refuses a grant whose columns disagree with its type, and refunds that are not an array.
    await expect(query(`UPDATE "${schema}".scanauth_orders SET grant_points = 5 WHERE out_trade_no = $1`, [open.outTradeNo])).rejects.toMatchObject({ code: '23514' })
    await expect(query(`UPDATE "${schema}".scanauth_orders SET refunds = '{}' WHERE out_trade_no = $1`, [open.outTradeNo])).rejects.toMatchObject({ code: '23514' })
    await expect(query(`UPDATE "${schema}".scanauth_orders SET channel = 'h5' WHERE out_trade_no = $1`, [open.outTradeNo])).rejects.toMatchObject({ code: '23514' })
  })

  it('refuses an order whose channel it does not know before sending anything', async () => {
    const odd = order('SA00000000000000000000000001', { channel: 'h5' as unknown as OrderRecord['channel'] })
    sent = []
    await expect(store.saveOrder({ op: 'insert', order: odd })).rejects.toMatchObject({ code: 'invalid_change_set' })
    const good = order('SA00000000000000000000000002', { channel: 'jsapi' })
    await store.saveOrder({ op: 'insert', order: good })
    await expect(store.saveOrder({ op: 'update', order: { ...good, channel: odd.channel, version: 2 }, expectedVersion: 1 })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(sent.map((s) => s.text.split(' ')[0])).toEqual(['INSERT'])
    expect(await row(odd.outTradeNo)).toBeUndefined()
    expect(await store.loadOrder(good.outTradeNo)).toStrictEqual(good)
  })

  it('leaves the row untouched when an insert finds the key taken or an update a different version, in one statement each', async () => {
    const v1 = order('SA00000000000000000000000001')
    await store.saveOrder({ op: 'insert', order: v1 })
    const before = await row(v1.outTradeNo)
    sent = []
    expect(await store.saveOrder({ op: 'insert', order: { ...v1, userId: 8, status: 'paid' } })).toBe(false)
    expect(await store.saveOrder({ op: 'update', order: { ...v1, status: 'paid', version: 3 }, expectedVersion: 2 })).toBe(false)
    expect(sent.map((s) => s.text.split(' ')[0])).toEqual(['INSERT', 'UPDATE'])
    expect(await row(v1.outTradeNo)).toEqual(before)
    expect(await store.saveOrder({ op: 'update', order: { ...v1, status: 'closed', updatedAt: T0 + 5, version: 2 }, expectedVersion: 1 })).toBe(true)
    expect(await row(v1.outTradeNo)).toEqual({ ...before, status: 'closed', updated_at: T0 + 5, version: '2' })
    expect(await store.saveOrder({ op: 'update', order: order('SA00000000000000000000000009', { version: 2 }), expectedVersion: 1 })).toBe(false)
    expect((await query(`SELECT count(*)::integer AS n FROM "${schema}".scanauth_orders`)).rows).toEqual([{ n: 1 }])
  })

  it('lists from an index range in (created_at, out_trade_no) order: no sort, the cursor an index condition', async () => {
    for (let i = 0; i < 40; i++) {
      await store.saveOrder({ op: 'insert', order: order(`SA${String(i).padStart(26, '0')}`, { userId: i % 4, sceneStr: `scene-${i % 8}`, createdAt: T0 + (i % 5), status: i % 3 === 0 ? 'paid' : 'open' }) })
    }
    const after = { createdAt: T0 + 1, outTradeNo: 'SA00000000000000000000000010' }
    sent = []
    await store.listOpenOrders({ limit: 5, after })
    await store.listOpenOrders({ userId: 1, limit: 5, createdAtOrBefore: T0 + 3 })
    await store.listOpenOrders({ sceneStr: 'scene-3', limit: 5 })
    await store.listOpenOrders({ userId: 3, sceneStr: 'scene-3', limit: 5, after })
    expect(sent).toHaveLength(4)
    // User and scene: the scene's range, or (since migration 5, and with no statistics on so few
    // rows) the user's range of scanauth_orders_by_user_time; either is one range from the cursor, no sort.
    const expected = ['scanauth_orders_open', 'scanauth_orders_by_user', 'scanauth_orders_by_scene', /scanauth_orders_by_(scene|user_time)/]
    // Sequential scans off: with 40 rows the planner would rightly read the table; what matters is
    // that the statement can be answered from the index range, in order.
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await client.query('SET LOCAL enable_seqscan = off')
      for (const [i, { text, values }] of sent.entries()) {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n')
        const index = expected[i] as string | RegExp
        if (typeof index === 'string') expect(plan, plan).toContain(`Index Scan using ${index}`)
        else expect(plan, plan).toMatch(new RegExp(`Index Scan using ${index.source}`))
        expect(plan, plan).not.toMatch(/Sort/)
        expect(plan, plan).toMatch(/Index Cond: .*ROW\(created_at, out_trade_no\) >/)
      }
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  })

  it('upgrades a schema at version 1 to 2: the orders table added, everything else kept', async () => {
    // The schema as the release at version 1 left it (no orders table, nor any later step), with a user.
    await dropSchema(pool, schema)
    await writeSchemaUpTo(pool, schema, 1)
    await query(`INSERT INTO "${schema}".scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ('o-1', $1, $1, false, 1)`, [T0])
    const upgraded = new PostgresStore({ pool, schema })
    expect(await upgraded.migrate()).toEqual({ from: 1, to: SCHEMA_VERSION })
    expect((await upgraded.load({ openid: 'o-1' })).user?.user.openid).toBe('o-1')
    const o = order('SA00000000000000000000000001')
    expect(await upgraded.saveOrder({ op: 'insert', order: o })).toBe(true)
    expect(await upgraded.listOpenOrders({ limit: 10 })).toStrictEqual([o])
  })

  it('deletes the rows of closed orders past their deadline, in batches; open, paid, refunded and money-recording rows stay, years later', async () => {
    const kept = [
      order('SA0000000000000000000000000K', { status: 'open', expiresAt: T0 + 1 }),
      order('SA0000000000000000000000000L', { status: 'paid', paidAt: T0, expiresAt: T0 + 1 }),
      order('SA0000000000000000000000000M', { status: 'refunded', paidAt: T0, refundedFen: 1500, expiresAt: T0 + 1 }),
      order('SA0000000000000000000000000N', { status: 'closed', refundedFen: 1, expiresAt: T0 + 1 }),
      order('SA0000000000000000000000000O', { status: 'closed', paidAt: T0, expiresAt: T0 + 1 }),
      order('SA0000000000000000000000000P', { status: 'closed', expiresAt: T0 + 3650 * DAY + 1 }),
    ]
    const closed = [1, 2, 3, 4, 5].map((i) => order(`SA0000000000000000000000000${i}`, { status: 'closed', expiresAt: T0 + i }))
    for (const o of [...kept, ...closed]) expect(await store.saveOrder({ op: 'insert', order: o })).toBe(true)
    const all = `SELECT * FROM "${schema}".scanauth_orders ORDER BY out_trade_no`
    const keptRows = (await query(all)).rows.filter((r: { out_trade_no: string }) => kept.some((o) => o.outTradeNo === r.out_trade_no))

    // Oldest deadline first: two batches of two take the first four; the next call the last one.
    sent = []
    expect(await store.purgeExpired({ now: T0 + 3650 * DAY, batchSize: 2, maxBatches: 2 })).toMatchObject({ orders: 4, batches: 2, more: true })
    expect(await row(closed[3]?.outTradeNo as string)).toBeUndefined()
    expect(await row(closed[4]?.outTradeNo as string)).toMatchObject({ status: 'closed' })
    // Still two statements a batch: the orders go in the DELETE of every kind.
    // (The scene candidates' select only until the scene pass is done: there are no scenes.)
    expect(sent.map((s) => s.text.trimStart().split(/\s/)[0])).toEqual(['SELECT', 'WITH', 'WITH'])
    expect(await store.purgeExpired({ now: T0 + 3650 * DAY, batchSize: 2 })).toMatchObject({ orders: 1, more: false })
    expect((await query(all)).rows).toEqual(keptRows)
  })

  it('finds the closed orders of a purge through the partial index, oldest deadline first, without a sort', async () => {
    for (let i = 0; i < 40; i++) {
      const status = (['open', 'closed', 'paid', 'closed'] as const)[i % 4]
      await store.saveOrder({ op: 'insert', order: order(`SA${String(i).padStart(26, '0')}`, { status, expiresAt: T0 + i }) })
    }
    sent = []
    await store.purgeExpired({ now: T0 + 10, batchSize: 3, maxBatches: 1 })
    const del = sent.find((s) => s.text.includes('gone_orders'))
    expect(del).toBeDefined()
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await client.query('SET LOCAL enable_seqscan = off')
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${del?.text}`, del?.values)
      const lines = rows.map((r) => r['QUERY PLAN'])
      // The part of the plan under the orders' CTE, up to the next CTE (or the end).
      const start = lines.findIndex((l) => /CTE gone_orders/.test(l))
      const end = lines.findIndex((l, i) => i > start && /^\s*CTE /.test(l))
      const plan = lines.slice(start, end === -1 ? undefined : end).join('\n')
      expect(start, lines.join('\n')).toBeGreaterThan(-1)
      expect(plan, plan).toMatch(/Index (Only )?Scan using scanauth_orders_closed_by_expiry/)
      expect(plan, plan).not.toMatch(/Sort/)
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  })

  it('upgrades a schema at version 3 to 4: the partial index added over the orders already there, which the next purge then deletes', async () => {
    await dropSchema(pool, schema)
    await writeSchemaUpTo(pool, schema, 3)
    const insert = `INSERT INTO "${schema}".scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days,
      status, created_at, expires_at, updated_at, paid_at, refunded_fen, refunds, version)
      VALUES ($1, 7, 'month', 'm', 1500, 'time', 30, $2, $3, $4, $5, $6, 0, '[]', 2)`
    await query(insert, ['SA00000000000000000000000001', 'closed', T0, T0 + 1, T0 + 2, null])
    await query(insert, ['SA00000000000000000000000002', 'paid', T0, T0 + 1, T0 + 2, T0 + 1])
    const upgraded = new PostgresStore({ pool, schema })
    expect(await upgraded.migrate()).toEqual({ from: 3, to: SCHEMA_VERSION })
    const { rows: index } = await query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'scanauth_orders_closed_by_expiry'`, [schema])
    expect(index).toHaveLength(1)
    expect(await upgraded.purgeExpired({ now: T0 + DAY })).toMatchObject({ orders: 1 })
    expect((await query(`SELECT out_trade_no FROM "${schema}".scanauth_orders`)).rows).toEqual([{ out_trade_no: 'SA00000000000000000000000002' }])
    await upgraded.close()
  })

  it('upgrades a schema at version 5 to 6: the orders already there read as native, and keep it through an update', async () => {
    // The schema as the release at version 5 left it: an order row without a channel column.
    await dropSchema(pool, schema)
    await writeSchemaUpTo(pool, schema, 5)
    await query(
      `INSERT INTO "${schema}".scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days,
        scene_str, status, created_at, expires_at, updated_at, refunded_fen, refunds, version)
        VALUES ('SA00000000000000000000000001', 7, 'month', '月卡', 1500, 'time', 30, 'scene-1', 'open', $1, $2, $1, 0, '[]', 1)`,
      [T0, T0 + 900_000],
    )
    const upgraded = new PostgresStore({ pool, schema })
    expect(await upgraded.schemaState()).toMatchObject({ version: 5, pending: [{ version: 6, name: 'orders: payment channel' }, { version: 7, name: 'active authorizations by end and by points left, for reminders' }] })
    expect(await upgraded.migrate()).toEqual({ from: 5, to: SCHEMA_VERSION })
    const old = order('SA00000000000000000000000001')
    expect(await upgraded.loadOrder(old.outTradeNo)).toStrictEqual(old)
    expect(await upgraded.listOpenOrders({ limit: 10 })).toStrictEqual([old])
    expect(await upgraded.listOrders({ limit: 10 })).toStrictEqual([old])
    expect(await row(old.outTradeNo)).toMatchObject({ channel: 'native' })
    const paid = { ...old, status: 'paid' as const, paidAt: T0 + 1, version: 2 }
    expect(await upgraded.saveOrder({ op: 'update', order: paid, expectedVersion: 1 })).toBe(true)
    expect(await upgraded.loadOrder(old.outTradeNo)).toStrictEqual(paid)
    await upgraded.close()
  })
})
