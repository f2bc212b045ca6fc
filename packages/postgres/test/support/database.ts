/**
 * Test plumbing: pools on the test server (`DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test), a fresh schema per harness, dropped afterwards, and
 * every table read with raw SQL, never through PostgresStore (its own mapping must not check itself):
 * `dumpSchema`, which is `readTables` of `tables.ts`.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The server the tests use. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A new pool on the test server. */
export function openPool(max = 10): pg.Pool {
  return new pg.Pool({ connectionString: DATABASE_URL, max })
}

/** A schema name of our own: `scanauth_test_` and 12 random hex characters. */
export function freshSchemaName(): string {
  return `scanauth_test_${randomBytes(6).toString('hex')}`
}

/** Drops a schema and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/** Every record in the schema, read with plain SELECTs in one transaction (see `tables.ts`). */
export { readTables as dumpSchema } from './tables'
