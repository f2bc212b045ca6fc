// SqliteStore's schemaState and `migrate: false`, on files read with raw SQL: a store opened that way
// (and `wal: false`) changes nothing as it opens, says where the file stands (empty, older with what migrate() would
// apply, current, newer), refuses every other method with `not_migrated` until migrate() brings the
// file up, and then works; migration 9 adds the two order indexes of listOrders over the orders
// already there. The plans of the operator reads: query-plans.test.ts; the contract's cases: testkit.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, SCHEMA_VERSION, SqliteStore, VERSION_TABLE } from '@scanauth/sqlite'
import { useTempFile } from './support/fixture'
import { writeSchemaUpTo } from './support/old-schema'

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

/** A store opened with `migrate: false` on the test's file (through a connection of its own), its journal mode left alone. */
function unmigrated(): SqliteStore {
  return fixture.track(new SqliteStore({ database: fixture.rawDb(), migrate: false, wal: false }))
}

const steps = (from: number) => MIGRATIONS.filter((m) => m.version > from).map((m) => ({ version: m.version, name: m.name }))

describe('SqliteStore with migrate: false', () => {
  it('changes nothing as it opens an empty file, says so, refuses the other methods until migrate(), then works', async () => {
    fixture.rawDb().close() // creates the empty file
    const bytes = readFileSync(fixture.temp.filename)
    const store = unmigrated()
    expect(await store.schemaState()).toEqual({ version: 0, latest: SCHEMA_VERSION, pending: steps(0), exists: true })
    await expect(store.listUsers({ limit: 1 })).rejects.toMatchObject({ name: 'SqliteStoreError', code: 'not_migrated' })
    await expect(store.load({ openid: 'o-1' })).rejects.toMatchObject({ code: 'not_migrated' })
    expect(() => store.watchScenes(() => undefined)).toThrow(/migrate: false/)
    expect(store.watching).toBe(false)
    expect(readFileSync(fixture.temp.filename)).toEqual(bytes)

    expect(await store.migrate()).toEqual({ from: 0, to: SCHEMA_VERSION })
    expect(await store.schemaState()).toEqual({ version: SCHEMA_VERSION, latest: SCHEMA_VERSION, pending: [], exists: true })
    expect(await store.listUsers({ limit: 1 })).toEqual([])
    expect(await store.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  })

  it('works at once on a current file, and migrate() changes nothing there', async () => {
    fixture.openStore()
    const store = unmigrated()
    expect(await store.schemaState()).toEqual({ version: SCHEMA_VERSION, latest: SCHEMA_VERSION, pending: [], exists: true })
    expect(await store.listOrders({ limit: 1 })).toEqual([])
  })

  it('lists what migrate() would apply to an older file, and migration 9 adds the order indexes over its orders', async () => {
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 8)
    db.prepare(`INSERT INTO scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points,
      scene_str, status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version)
      VALUES ('SA00000000000000000000000001', 7, 'month', 'm', 1500, 'time', 30, NULL, NULL, 'paid', ?, ?, ?, ?, NULL, NULL, 0, '[]', 2)`).run(T0, T0, T0, T0)
    const store = unmigrated()
    expect(await store.schemaState()).toEqual({ version: 8, latest: SCHEMA_VERSION, pending: steps(8), exists: true })
    expect(steps(8)).toContainEqual({ version: 9, name: 'orders by time and by user for listOrders' })
    await expect(store.listOrders({ limit: 1 })).rejects.toMatchObject({ code: 'not_migrated' })
    expect(await store.migrate()).toEqual({ from: 8, to: SCHEMA_VERSION })
    const indexes = db.prepare(`SELECT name FROM sqlite_schema WHERE name IN ('scanauth_orders_by_time', 'scanauth_orders_by_user_time') ORDER BY name`).pluck().all()
    expect(indexes).toEqual(['scanauth_orders_by_time', 'scanauth_orders_by_user_time'])
    expect((await store.listOrders({ userId: 7, limit: 10 })).map((o) => o.outTradeNo)).toEqual(['SA00000000000000000000000001'])
  })

  it('opens a file of a newer release without refusing it, says its version, and migrate() refuses it', async () => {
    fixture.openStore()
    const db = fixture.rawDb()
    db.prepare(`INSERT INTO ${VERSION_TABLE} (version, name, applied_at) VALUES (?, 'from the future', 0)`).run(SCHEMA_VERSION + 1)
    const store = unmigrated()
    expect(await store.schemaState()).toEqual({ version: SCHEMA_VERSION + 1, latest: SCHEMA_VERSION, pending: [], exists: true })
    await expect(store.migrate()).rejects.toMatchObject({ code: 'schema_too_new' })
    await expect(store.listUsers({ limit: 1 })).rejects.toMatchObject({ code: 'not_migrated' })
    // Without the option, as before: refused as it opens.
    expect(() => new SqliteStore({ filename: fixture.temp.filename })).toThrow(/newer release/)
  })
})
