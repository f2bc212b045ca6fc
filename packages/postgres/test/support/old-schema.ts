/**
 * A schema at an older version, for the upgrade tests: the released steps up to `version` applied
 * in one transaction and recorded in the version table, as migrate() of the release that stopped
 * there left it. Released steps are never edited (src/schema.ts), so `MIGRATIONS` holds them exactly.
 */
import type pg from 'pg'
import { MIGRATIONS } from '@scanauth/postgres'

/** Creates `schema` (which must not exist) at schema version `version` exactly, and no further. */
export async function writeSchemaUpTo(pool: pg.Pool, schema: string, version: number): Promise<void> {
  const s = `"${schema}"`
  const client = await pool.connect()
  let failed = false
  try {
    await client.query('BEGIN')
    await client.query(`CREATE SCHEMA ${s}`)
    await client.query(`CREATE TABLE ${s}.scanauth_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    for (const step of MIGRATIONS.filter((m) => m.version <= version)) {
      await client.query(step.sql(s))
      await client.query(`INSERT INTO ${s}.scanauth_schema_migrations (version, name) VALUES ($1, $2)`, [step.version, step.name])
    }
    await client.query('COMMIT')
  } catch (error) {
    failed = true
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    // A client whose rollback may not have run is not handed back for reuse.
    client.release(failed)
  }
}
