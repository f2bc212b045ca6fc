// migrate(): a fresh schema, a second run that changes nothing, four pools migrating one schema at
// once (the advisory lock lets exactly one apply each step), a schema from a newer release, and
// every operation refused before migrate(). Checked by reading the catalog and the version table.
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { PostgresStore, PostgresStoreError, SCHEMA_VERSION } from '@scanauth/postgres'
import { dropSchema, freshSchemaName, openPool } from './support/database'

const admin = openPool(4)
const schemas: string[] = []
const extraPools: ReturnType<typeof openPool>[] = []

afterEach(async () => {
  for (const pool of extraPools.splice(0)) await pool.end()
  for (const schema of schemas.splice(0)) await dropSchema(admin, schema)
})
afterAll(() => admin.end())

function newSchema(): string {
  const schema = freshSchemaName()
  schemas.push(schema)
  return schema
}

async function tablesOf(schema: string): Promise<string[]> {
  const { rows } = await admin.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 ORDER BY 1`, [schema])
  return rows.map((r) => r.t)
}

async function versionRows(schema: string): Promise<number[]> {
  const { rows } = await admin.query<{ v: number }>(`SELECT version AS v FROM "${schema}".scanauth_schema_migrations ORDER BY version`)
  return rows.map((r) => r.v)
}

describe('PostgresStore.migrate', () => {
  it('creates the schema, every table and the version rows on a fresh database', async () => {
    const schema = newSchema()
    const store = new PostgresStore({ pool: admin, schema })
    expect(await store.migrate()).toEqual({ from: 0, to: SCHEMA_VERSION })
    expect(await tablesOf(schema)).toEqual([
      'scanauth_authorizations',
      'scanauth_counters',
      'scanauth_idempotency',
      'scanauth_ledger',
      'scanauth_orders',
      'scanauth_scenes',
      'scanauth_schema_migrations',
      'scanauth_sessions',
      'scanauth_users',
    ])
    expect(await versionRows(schema)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1))
    const { rows } = await admin.query(`SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'scanauth_commit'`, [schema])
    expect(rows).toHaveLength(1)
  })

  it('is idempotent: a second run, from this store or another, changes nothing', async () => {
    const schema = newSchema()
    await new PostgresStore({ pool: admin, schema }).migrate()
    await admin.query(`INSERT INTO "${schema}".scanauth_counters (key, count, expires_at) VALUES ('kept', 7, 1)`)
    expect(await new PostgresStore({ pool: admin, schema }).migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION })
    expect(await versionRows(schema)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1))
    expect((await admin.query(`SELECT count FROM "${schema}".scanauth_counters WHERE key = 'kept'`)).rows).toEqual([{ count: '7' }])
  })

  it('lets four pools migrate one fresh schema at once: one applies the steps, the others find it current', async () => {
    const schema = newSchema()
    const pools = Array.from({ length: 4 }, () => openPool(2))
    extraPools.push(...pools)
    const outcomes = await Promise.all(pools.map((pool) => new PostgresStore({ pool, schema }).migrate()))
    expect(outcomes.filter((o) => o.from === 0)).toHaveLength(1)
    expect(outcomes.filter((o) => o.from === SCHEMA_VERSION)).toHaveLength(3)
    expect(await versionRows(schema)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1))
    // Every store works afterwards.
    const stores = pools.map((pool) => new PostgresStore({ pool, schema }))
    for (const store of stores) await store.migrate()
    const counts = await Promise.all(stores.map((store) => store.incrementCounter('k', 2e12, 1)))
    expect(counts.sort()).toEqual([1, 2, 3, 4])
  })

  it('refuses a schema written by a newer release, and changes nothing', async () => {
    const schema = newSchema()
    await new PostgresStore({ pool: admin, schema }).migrate()
    await admin.query(`INSERT INTO "${schema}".scanauth_schema_migrations (version, name) VALUES ($1, 'from the future')`, [SCHEMA_VERSION + 1])
    const error = await new PostgresStore({ pool: admin, schema }).migrate().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PostgresStoreError)
    expect(error).toMatchObject({ code: 'schema_too_new' })
    expect(await versionRows(schema)).toEqual([...Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1), SCHEMA_VERSION + 1])
  })

  it('refuses every operation before migrate() with not_migrated, saying what to call', async () => {
    const schema = newSchema()
    const store = new PostgresStore({ pool: admin, schema })
    const calls: Array<() => unknown> = [
      () => store.load({ sceneStr: 'pc_x' }),
      () => store.commit({}),
      () => store.listLedger({ userId: 1, afterId: 0, limit: 10 }),
      () => store.endSessions({ userId: 1 }, 0),
      () => store.incrementCounter('k', 2, 1),
      () => store.deleteCounter('k'),
      () => store.watchScenes(() => undefined),
      () => store.loadOrder('SA1'),
      () => store.listOpenOrders({ limit: 1 }),
    ]
    for (const call of calls) {
      let error: unknown
      try {
        await call()
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(PostgresStoreError)
      expect(error).toMatchObject({ code: 'not_migrated', message: expect.stringContaining('await store.migrate()') })
    }
    // Nothing was created.
    expect((await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).rows).toHaveLength(0)
  })

  it('refuses invalid options with invalid_options', () => {
    for (const options of [{}, { pool: {} }, { pool: admin, schema: 'Public' }, { pool: admin, schema: 'a;drop' }, { pool: admin, extra: 1 }]) {
      expect(() => new PostgresStore(options as never), JSON.stringify(Object.keys(options))).toThrow(
        expect.objectContaining({ code: 'invalid_options' }),
      )
    }
  })
})
