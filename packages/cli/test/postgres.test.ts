/**
 * The CLI on PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) in a schema of
 * this test's own, dropped afterwards, while a server in this process uses it: the whole scenario,
 * then what only a database can get wrong (unreachable, a wrong database, a missing or empty schema,
 * another schema version), each refusal checked against every table of the schema ordered by
 * primary key.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { PostgresStore, SCHEMA_VERSION } from '@scanauth/postgres'
import { closedPort } from '@scanauth/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectRefusal, json, scanauth, succeeds } from './support/cli'
import { describeRemindersScenario } from './support/reminders'
import { describeCliScenario, expectRefusedWithoutWrites, type Backend } from './support/scenario'
import { Device, keepWaiting, startServer, type LiveServer } from './support/server'
import { postgresSnapshot } from './support/snapshots'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A schema name of this test's own. */
function testSchema(): string {
  return `cli_test_${randomBytes(6).toString('hex')}`
}

async function schemaExists(pool: pg.Pool, schema: string): Promise<boolean> {
  return (await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1
}

async function postgresBackend(): Promise<Backend & { pool: pg.Pool; schema: string; dropLater(schema: string): void }> {
  const schema = testSchema()
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const store = new PostgresStore({ pool, schema })
  await store.migrate()
  const schemas = [schema]
  return {
    kind: 'postgres',
    pool,
    schema,
    dropLater: (other) => void schemas.push(other),
    storeArgs: ['--postgres', DATABASE_URL, '--pg-schema', schema],
    storeEnv: { SCANAUTH_STORE: 'postgres', DATABASE_URL, SCANAUTH_PG_SCHEMA: schema },
    serverStore: store,
    schemaVersion: SCHEMA_VERSION,
    snapshot: () => postgresSnapshot(pool, schema),
    close: async () => {
      await store.close()
      for (const s of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`)
      await pool.end()
    },
  }
}

describeCliScenario('PostgreSQL', postgresBackend)
describeRemindersScenario('PostgreSQL', postgresBackend)

describe('scanauth on PostgreSQL: databases and schemas it refuses', () => {
  let backend: Awaited<ReturnType<typeof postgresBackend>>
  let server: LiveServer
  let waiter: ReturnType<typeof keepWaiting>

  beforeAll(async () => {
    backend = await postgresBackend()
    server = await startServer(backend.serverStore)
    const kiosk = new Device(server.url, 'kiosk')
    await server.auth.handleScan({ sceneStr: await kiosk.createScene(), openid: 'o6_dave' })
    waiter = keepWaiting(kiosk, await kiosk.createScene())
  })

  afterAll(async () => {
    await waiter?.stop()
    await server?.close()
    await backend?.close()
  })

  it('refuses a database that does not answer or does not exist, never echoing the password, and writes nothing', async () => {
    const port = await closedPort()
    const wrongDatabase = new URL(DATABASE_URL)
    wrongDatabase.pathname = '/no_such_database_for_scanauth'
    await expectRefusedWithoutWrites(backend, [
      [['user', 'o6_dave', '--postgres', `postgres://postgres:hunter2@127.0.0.1:${port}/test`, '--pg-schema', backend.schema], 1, new RegExp(`^scanauth: cannot reach PostgreSQL at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/test \\(--postgres\\): .*ECONNREFUSED`)],
      [['grant', 'o6_dave', '--days', '3', '--postgres', wrongDatabase.toString(), '--pg-schema', backend.schema], 1, /PostgreSQL at \S+ \(--postgres\) refused the connection: database "no_such_database_for_scanauth" does not exist/],
      [['migrate', '--postgres', wrongDatabase.toString(), '--pg-schema', backend.schema], 1, /refused the connection/],
    ])
  })

  it('refuses a schema that does not exist without creating it', async () => {
    const missing = testSchema()
    backend.dropLater(missing)
    for (const argv of [['user', 'o6_dave'], ['grant', 'o6_dave', '--days', '1'], ['purge']]) {
      const line = expectRefusal(await scanauth(argv, { env: { SCANAUTH_STORE: 'postgres', DATABASE_URL, SCANAUTH_PG_SCHEMA: missing } }), 1)
      expect(line).toMatch(new RegExp(`^scanauth: there is no schema ${missing} in \\S+ \\(DATABASE_URL\\): is it the schema your servers use\\? \\(--pg-schema or SCANAUTH_PG_SCHEMA; \`scanauth migrate\` creates it\\)$`))
    }
    expect(await schemaExists(backend.pool, missing)).toBe(false)
  })

  it('refuses a schema without the scanauth tables, or of another version, and writes nothing', async () => {
    const empty = testSchema()
    const older = testSchema()
    const newer = testSchema()
    for (const s of [empty, older, newer]) backend.dropLater(s)
    await backend.pool.query(`CREATE SCHEMA "${empty}"`)
    await backend.pool.query(`CREATE TABLE "${empty}".invoices (id integer PRIMARY KEY, total integer); INSERT INTO "${empty}".invoices VALUES (1, 1990)`)
    for (const s of [older, newer]) await new PostgresStore({ pool: backend.pool, schema: s }).migrate()
    await backend.pool.query(`DELETE FROM "${older}".scanauth_schema_migrations WHERE version = ${SCHEMA_VERSION}`)
    await backend.pool.query(`INSERT INTO "${newer}".scanauth_schema_migrations (version, name) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`)
    const dump = async () => Promise.all([empty, older, newer].map((s) => postgresSnapshot(backend.pool, s)))
    const before = await dump()
    const at = (schema: string) => ['--postgres', DATABASE_URL, '--pg-schema', schema]
    expectRefusal(await scanauth(['user', 'o6_dave', ...at(empty)]), 1, new RegExp(`schema ${empty} in \\S+ \\(--postgres\\) holds no scanauth tables`))
    expectRefusal(await scanauth(['grant', 'o6_dave', '--days', '1', ...at(older)]), 1, new RegExp(`is at schema version ${SCHEMA_VERSION - 1} and this CLI needs version ${SCHEMA_VERSION}: run \`scanauth migrate\``))
    expectRefusal(await scanauth(['signout', 'o6_dave', ...at(newer)]), 1, /written by a newer release.*upgrade @scanauth\/cli/)
    expectRefusal(await scanauth(['migrate', ...at(newer)]), 1, /written by a newer release/)
    expect(await dump()).toEqual(before)
  })

  it('migrate: creates a new schema and its tables, and says so', async () => {
    const fresh = testSchema()
    backend.dropLater(fresh)
    expect(await json(['migrate', '--postgres', DATABASE_URL, '--pg-schema', fresh])).toEqual({ store: 'postgres', from: 0, to: SCHEMA_VERSION, migrated: true })
    expect((await succeeds(['migrate', '--postgres', DATABASE_URL, '--pg-schema', fresh])).stdout).toMatch(new RegExp(`^postgres \\S+ schema ${fresh}: at schema version ${SCHEMA_VERSION}, nothing to migrate\\n$`))
    expect((await json(['grant', 'o6_frank', '--points', '9', '--postgres', DATABASE_URL, '--pg-schema', fresh])).authorization).toMatchObject({ status: 'active', remainingPoints: 9 })
  })
})
