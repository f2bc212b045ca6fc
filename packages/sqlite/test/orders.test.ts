// SqliteStore's orders (Store.loadOrder / saveOrder / listOpenOrders) seen in the file itself,
// through a raw connection of the test's own: the table and indexes of migration 6, the row each
// write leaves (column types, the grant's two columns, the refunds' JSON), a refused write leaving
// the row untouched, two connections racing one version, a version 5 file upgraded with its data,
// and purgeExpired deleting the rows of closed orders past their payment deadline through the
// partial index of migration 8 (docs/behaviour.md, B-order-purge) while every other row stays, and
// the channel column of migration 10 (a version 9 file's orders read as native). The statements' plans: query-plans.test.ts; the Store contract's order cases: testkit.
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE } from '@scanauth/sqlite'
import type { StoreSnapshot } from '@scanauth/testkit'
import { DAY, useTempFile } from './support/fixture'
import { writeSchemaUpTo } from './support/old-schema'

type OrderRecord = NonNullable<StoreSnapshot['orders']>[number]

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

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

/** The stored row of `outTradeNo` with every column, read straight from the file. */
function row(outTradeNo: string): Record<string, unknown> | undefined {
  return fixture.rawDb({ readonly: true }).prepare('SELECT * FROM scanauth_orders WHERE out_trade_no = ?').get(outTradeNo) as
    | Record<string, unknown>
    | undefined
}

describe('orders', () => {
  it('creates the table WITHOUT ROWID with its three listing indexes (migration 6)', () => {
    fixture.openStore()
    const db = fixture.rawDb({ readonly: true })
    expect(MIGRATIONS.find((m) => m.version === 6)?.name).toBe('orders')
    const table = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'scanauth_orders'`).pluck().get() as string
    expect(table).toMatch(/WITHOUT ROWID/)
    const indexes = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'scanauth_orders' AND sql IS NOT NULL ORDER BY name`).pluck().all()
    expect(indexes).toEqual([
      'scanauth_orders_by_scene',
      'scanauth_orders_by_time',
      'scanauth_orders_by_user',
      'scanauth_orders_by_user_time',
      'scanauth_orders_closed_by_expiry',
      'scanauth_orders_open',
    ])
    const columns = (name: string) => (db.prepare(`PRAGMA index_info(${name})`).all() as Array<{ name: string }>).map((c) => c.name)
    expect(columns('scanauth_orders_open')).toEqual(['status', 'created_at', 'out_trade_no'])
    expect(columns('scanauth_orders_by_user')).toEqual(['user_id', 'status', 'created_at', 'out_trade_no'])
    expect(columns('scanauth_orders_by_scene')).toEqual(['scene_str', 'status', 'created_at', 'out_trade_no'])
    // Migration 8: closed orders by payment deadline, for the purge; partial, so only closed rows are in it.
    expect(columns('scanauth_orders_closed_by_expiry')).toEqual(['expires_at'])
    expect(db.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'scanauth_orders_closed_by_expiry'`).pluck().get()).toMatch(/WHERE status = 'closed'$/)
    // Migration 9: every order by time, and a user's whatever their status, for listOrders.
    expect(columns('scanauth_orders_by_time')).toEqual(['created_at', 'out_trade_no'])
    expect(columns('scanauth_orders_by_user_time')).toEqual(['user_id', 'created_at', 'out_trade_no'])
  })

  it('writes one row per order: integers as integers, the grant as type and amount, the refunds as a JSON array', async () => {
    const store = fixture.openStore()
    const paid = order('SA00000000000000000000000001', {
      amountFen: Number.MAX_SAFE_INTEGER,
      grant: { type: 'points', points: 100 },
      sceneStr: null,
      channel: 'jsapi',
      status: 'refunded',
      paidAt: T0 + 1,
      transactionId: 'tx-1',
      authorizationId: 12,
      refundedFen: 600,
      refunds: [
        { outRefundNo: 'R1', refundId: 'rid-1', amountFen: 100, at: T0 + 2 },
        { outRefundNo: 'R2', refundId: 'rid-2', amountFen: 500, at: T0 + 3 },
      ],
      version: 3,
    })
    expect(await store.saveOrder({ op: 'insert', order: paid })).toBe(true)
    expect(row(paid.outTradeNo)).toEqual({
      out_trade_no: paid.outTradeNo,
      user_id: 7,
      plan_id: 'month',
      description: '月卡',
      amount_fen: Number.MAX_SAFE_INTEGER,
      grant_type: 'points',
      grant_days: null,
      grant_points: 100,
      scene_str: null,
      status: 'refunded',
      created_at: T0,
      expires_at: T0 + 900_000,
      updated_at: T0,
      paid_at: T0 + 1,
      transaction_id: 'tx-1',
      authorization_id: 12,
      refunded_fen: 600,
      refunds: '[{"outRefundNo":"R1","refundId":"rid-1","amountFen":100,"at":1767225600002},{"outRefundNo":"R2","refundId":"rid-2","amountFen":500,"at":1767225600003}]',
      version: 3,
      channel: 'jsapi',
    })
    const types = fixture
      .rawDb({ readonly: true })
      .prepare('SELECT typeof(amount_fen), typeof(grant_points), typeof(created_at), typeof(refunded_fen), typeof(version), json_valid(refunds) FROM scanauth_orders')
      .raw()
      .get()
    expect(types).toEqual(['integer', 'integer', 'integer', 'integer', 'integer', 1])

    // A time grant of half a day and an open order without refunds: '[]', never NULL.
    const open = order('SA00000000000000000000000002', { grant: { type: 'time', days: 0.5 } })
    await store.saveOrder({ op: 'insert', order: open })
    expect(row(open.outTradeNo)).toMatchObject({ grant_type: 'time', grant_days: 0.5, grant_points: null, refunds: '[]', scene_str: 'scene-1', paid_at: null, channel: 'native' })
    // Read back through the store exactly as given.
    expect(await store.loadOrder(paid.outTradeNo)).toStrictEqual(paid)
    expect(await store.loadOrder(open.outTradeNo)).toStrictEqual(open)
  })

  it('leaves the row untouched when an insert finds the key taken or an update a different version', async () => {
    const store = fixture.openStore()
    const v1 = order('SA00000000000000000000000001')
    await store.saveOrder({ op: 'insert', order: v1 })
    const before = row(v1.outTradeNo)
    expect(await store.saveOrder({ op: 'insert', order: { ...v1, userId: 8, status: 'paid' } })).toBe(false)
    expect(await store.saveOrder({ op: 'update', order: { ...v1, status: 'paid', version: 3 }, expectedVersion: 2 })).toBe(false)
    expect(row(v1.outTradeNo)).toEqual(before)
    expect(await store.saveOrder({ op: 'update', order: { ...v1, status: 'closed', updatedAt: T0 + 5, version: 2 }, expectedVersion: 1 })).toBe(true)
    expect(row(v1.outTradeNo)).toEqual({ ...before, status: 'closed', updated_at: T0 + 5, version: 2 })
    // An update of a key with no row inserts nothing.
    expect(await store.saveOrder({ op: 'update', order: order('SA00000000000000000000000009', { version: 2 }), expectedVersion: 1 })).toBe(false)
    expect(fixture.rawDb({ readonly: true }).prepare('SELECT COUNT(*) FROM scanauth_orders').pluck().get()).toBe(1)
  })

  it('lets one of two connections win each version when both update one order in turn', async () => {
    const a = fixture.openStore()
    const b = fixture.openStore()
    let current = order('SA00000000000000000000000001')
    await a.saveOrder({ op: 'insert', order: current })
    for (let round = 0; round < 20; round++) {
      const next = { ...current, updatedAt: T0 + round, version: current.version + 1 }
      const answers = await Promise.all([a, b, a, b].map((s, i) => s.saveOrder({ op: 'update', order: { ...next, transactionId: `tx-${round}-${i}` }, expectedVersion: current.version })))
      expect(answers.filter(Boolean), `round ${round}`).toHaveLength(1)
      current = { ...next, transactionId: `tx-${round}-${answers.indexOf(true)}` }
      expect(row(current.outTradeNo)).toMatchObject({ version: current.version, transaction_id: current.transactionId })
    }
    expect(current.version).toBe(21)
  })

  it('upgrades a version 5 file to 6: the orders table added, everything else kept', async () => {
    // What 0.x with schema 5 wrote: no orders table, no version 6 row (nor any later one).
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 5)
    db.prepare(`INSERT INTO scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ('o-5', ?, ?, 0, 1)`).run(T0, T0)
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(5)
    expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name = 'scanauth_orders'`).get()).toBeUndefined()

    const upgraded = fixture.openStore()
    expect(db.prepare(`SELECT version FROM ${VERSION_TABLE} ORDER BY version`).pluck().all()).toEqual(MIGRATIONS.map((m) => m.version))
    expect((await upgraded.load({ openid: 'o-5' })).user?.user).toMatchObject({ id: 1, openid: 'o-5', createdAt: T0 })
    const o = order('SA00000000000000000000000001')
    expect(await upgraded.saveOrder({ op: 'insert', order: o })).toBe(true)
    expect(await upgraded.listOpenOrders({ limit: 10 })).toStrictEqual([o])
  })

  it('deletes the rows of closed orders past their deadline, in batches; open, paid, refunded and money-recording rows stay, years later', async () => {
    const store = fixture.openStore()
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
    const all = () => fixture.rawDb({ readonly: true }).prepare('SELECT * FROM scanauth_orders ORDER BY out_trade_no').all() as Array<Record<string, unknown>>
    const keptRows = all().filter((r) => kept.some((o) => o.outTradeNo === r.out_trade_no))

    // Oldest deadline first: two batches of two take the first four; the next call the last one.
    expect(await store.purgeExpired({ now: T0 + 3650 * DAY, batchSize: 2, maxBatches: 2 })).toMatchObject({ orders: 4, batches: 2, more: true })
    expect(row(closed[3]?.outTradeNo as string)).toBeUndefined()
    expect(row(closed[4]?.outTradeNo as string)).toMatchObject({ status: 'closed' })
    expect(await store.purgeExpired({ now: T0 + 3650 * DAY, batchSize: 2 })).toMatchObject({ orders: 1, more: false })
    expect(all()).toEqual(keptRows)
    // Nothing closed is left in the partial index but the row still before its deadline and the two that record money.
    const indexed = fixture.rawDb({ readonly: true }).prepare(`SELECT out_trade_no FROM scanauth_orders INDEXED BY scanauth_orders_closed_by_expiry WHERE status = 'closed' ORDER BY expires_at, out_trade_no`).pluck().all()
    expect(indexed).toEqual(['SA0000000000000000000000000N', 'SA0000000000000000000000000O', 'SA0000000000000000000000000P'])
  })

  it('upgrades a version 7 file to 8: the partial index added over the orders already there, which the next purge then deletes', async () => {
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 7)
    const insert = db.prepare(`INSERT INTO scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points,
      scene_str, status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version)
      VALUES (?, 7, 'month', 'm', 1500, 'time', 30, NULL, NULL, ?, ?, ?, ?, ?, NULL, NULL, 0, '[]', 2)`)
    insert.run('SA00000000000000000000000001', 'closed', T0, T0 + 1, T0 + 2, null)
    insert.run('SA00000000000000000000000002', 'paid', T0, T0 + 1, T0 + 2, T0 + 1)
    expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name = 'scanauth_orders_closed_by_expiry'`).get()).toBeUndefined()

    const upgraded = fixture.openStore()
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(SCHEMA_VERSION)
    expect(MIGRATIONS.find((m) => m.version === 8)?.name).toBe('closed orders by payment deadline for purgeExpired')
    expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name = 'scanauth_orders_closed_by_expiry'`).pluck().get()).toBe('scanauth_orders_closed_by_expiry')
    expect(await upgraded.purgeExpired({ now: T0 + DAY })).toMatchObject({ orders: 1 })
    expect(db.prepare('SELECT out_trade_no FROM scanauth_orders').pluck().all()).toEqual(['SA00000000000000000000000002'])
  })

  it('upgrades a version 9 file to 10: the orders already there read as native, and keep it through an update', async () => {
    // What the release with schema 9 wrote: an order row without a channel column.
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 9)
    db.prepare(`INSERT INTO scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points,
      scene_str, status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version)
      VALUES ('SA00000000000000000000000001', 7, 'month', '月卡', 1500, 'time', 30, NULL, 'scene-1', 'open', ?, ?, ?, NULL, NULL, NULL, 0, '[]', 1)`)
      .run(T0, T0 + 900_000, T0)
    const columns = () => (db.prepare(`PRAGMA table_info(scanauth_orders)`).all() as Array<{ name: string }>).map((c) => c.name)
    expect(columns()).not.toContain('channel')

    const upgraded = fixture.openStore()
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(SCHEMA_VERSION)
    expect(MIGRATIONS.find((m) => m.version === 10)?.name).toBe('orders: payment channel')
    expect(columns()).toContain('channel')
    const old = order('SA00000000000000000000000001')
    expect(await upgraded.loadOrder(old.outTradeNo)).toStrictEqual(old)
    expect(await upgraded.listOpenOrders({ limit: 10 })).toStrictEqual([old])
    expect(await upgraded.listOrders({ limit: 10 })).toStrictEqual([old])
    expect(row(old.outTradeNo)).toMatchObject({ channel: 'native' })
    const paid = { ...old, status: 'paid' as const, paidAt: T0 + 1, version: 2 }
    expect(await upgraded.saveOrder({ op: 'update', order: paid, expectedVersion: 1 })).toBe(true)
    expect(await upgraded.loadOrder(old.outTradeNo)).toStrictEqual(paid)
  })

  it('refuses an order whose channel it does not know, writing nothing; the table refuses one too', async () => {
    const store = fixture.openStore()
    const odd = order('SA00000000000000000000000001', { channel: 'h5' as unknown as OrderRecord['channel'] })
    await expect(store.saveOrder({ op: 'insert', order: odd })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(row(odd.outTradeNo)).toBeUndefined()
    const good = order('SA00000000000000000000000002', { channel: 'jsapi' })
    await store.saveOrder({ op: 'insert', order: good })
    await expect(store.saveOrder({ op: 'update', order: { ...good, channel: 'h5' as unknown as OrderRecord['channel'], version: 2 }, expectedVersion: 1 })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(await store.loadOrder(good.outTradeNo)).toStrictEqual(good)
    expect(() => fixture.rawDb().exec(`UPDATE scanauth_orders SET channel = 'h5'`)).toThrow(/CHECK constraint failed/)
  })

  it('refuses an order whose grant is of a type it does not know, writing nothing; the table refuses a grant of mixed columns', async () => {
    const store = fixture.openStore()
    const odd = order('SA00000000000000000000000001', { grant: { type: 'minutes', minutes: 5 } as unknown as OrderRecord['grant'] })
    await expect(store.saveOrder({ op: 'insert', order: odd })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(row(odd.outTradeNo)).toBeUndefined()
    await store.saveOrder({ op: 'insert', order: order('SA00000000000000000000000002') })
    const db = fixture.rawDb()
    expect(() => db.exec(`UPDATE scanauth_orders SET grant_points = 5`)).toThrow(/CHECK constraint failed/)
    expect(() => db.exec(`UPDATE scanauth_orders SET grant_type = 'points'`)).toThrow(/CHECK constraint failed/)
  })
})
