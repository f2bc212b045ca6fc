/**
 * The PostgreSQL store of the CLI: a small pool of its own that gives up after a few seconds when
 * the database does not answer, and a schema that must already hold the scanauth tables at the
 * version this release reads (the store's `schemaState`, read before `PostgresStore.migrate()` is
 * called, which on a current schema changes nothing and lets the store's methods run).
 *
 * @module
 */
import pg from 'pg'
import { PostgresStore, PostgresStoreError } from '@scanauth/postgres'
import type { SchemaState } from '@scanauth/core/store'
import { ScanAuthCliError, reasonOf } from './errors'
import { assertCurrent, storeMethod, type MigrationReport, type OpenedStore } from './opened-store'
import { redactUrl, type StoreConfig } from './store-config'

type PostgresConfig = Extract<StoreConfig, { kind: 'postgres' }>

/** How long a statement waits for a connection before the database counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000

/** SQLSTATEs of a server that answered but refused us: no such database, role or password. */
const REFUSED = new Set(['3D000', '28000', '28P01'])

/** Opens a pool, checks the schema's version and returns the store on it. */
export async function openPostgres(config: PostgresConfig): Promise<OpenedStore> {
  const { pool, where } = poolFor(config)
  try {
    const store = new PostgresStore({ pool, schema: config.schema })
    const state = await schemaStateOf(store, config, where)
    if (!state.exists) {
      throw new ScanAuthCliError(
        'store_not_initialized',
        `there is no schema ${config.schema} in ${where}: is it the schema your servers use? (--pg-schema or SCANAUTH_PG_SCHEMA; \`scanauth migrate\` creates it)`,
      )
    }
    assertCurrent(state.version, state.latest, `schema ${config.schema} in ${where}`)
    // The schema is current: this takes the migration lock for a moment and writes nothing.
    await migrateWith(store, config, where)
    return opened(config, pool, store)
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw error
  }
}

/** Creates the schema and its tables or brings them up to date; says from which version to which. */
export async function migratePostgres(config: PostgresConfig): Promise<MigrationReport> {
  const { pool, where } = poolFor(config)
  try {
    const store = new PostgresStore({ pool, schema: config.schema })
    const state = await schemaStateOf(store, config, where)
    if (state.version > state.latest) assertCurrent(state.version, state.latest, `schema ${config.schema} in ${where}`)
    // One transaction under an advisory lock: safe beside servers that migrate as they start.
    const outcome = await migrateWith(store, config, where)
    await store.close()
    return { kind: 'postgres', label: labelOf(config), from: outcome.from, to: outcome.to, migrated: outcome.from !== outcome.to }
  } finally {
    await pool.end().catch(() => undefined)
  }
}

function labelOf(config: PostgresConfig): string {
  return `postgres ${redactUrl(config.url, 'the database URL given')} schema ${config.schema}`
}

function poolFor(config: PostgresConfig): { pool: pg.Pool; where: string } {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Names the CLI's connections in pg_stat_activity; an application_name in the URL wins.
    application_name: 'scanauth-cli',
  })
  // An idle connection that breaks is reported on the pool; unheard, that event would end the process.
  pool.on('error', () => undefined)
  return { pool, where: `${redactUrl(config.url, 'the database URL given')} (${config.from})` }
}

/** Whether the schema exists, and its version (0 when it holds no scanauth tables), from the store's `schemaState`. */
async function schemaStateOf(store: PostgresStore, config: PostgresConfig, where: string): Promise<SchemaState> {
  const read = storeMethod(store, 'schemaState', labelOf(config), 'read its schema version')
  try {
    return await read()
  } catch (error) {
    throw failure(error, config, where)
  }
}

/** The store's `migrate`, its failures in the CLI's codes. */
async function migrateWith(store: PostgresStore, config: PostgresConfig, where: string): Promise<{ from: number; to: number }> {
  const migrate = storeMethod(store, 'migrate', labelOf(config), 'migrate its schema')
  try {
    return await migrate()
  } catch (error) {
    throw failure(error, config, where)
  }
}

/** A failure to reach or use the database, in words a person can act on, with the password left out. */
function failure(error: unknown, config: PostgresConfig, where: string): ScanAuthCliError {
  const reason = reasonOf(error)
  const options = { cause: error }
  if (error instanceof PostgresStoreError) {
    const code = error.code === 'schema_too_new' ? 'schema_too_new' : 'store_failed'
    return new ScanAuthCliError(code, `schema ${config.schema} in ${where}: ${reason}`, options)
  }
  const sqlState = (error as { code?: unknown } | null)?.code
  if (typeof sqlState === 'string' && REFUSED.has(sqlState)) {
    return new ScanAuthCliError('store_unavailable', `PostgreSQL at ${where} refused the connection: ${reason}; check the user, password and database name`, options)
  }
  if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
    return new ScanAuthCliError('store_failed', `PostgreSQL at ${where}, schema ${config.schema}: ${reason}`, options)
  }
  return new ScanAuthCliError('store_unavailable', `cannot reach PostgreSQL at ${where}: ${reason}`, options)
}

function opened(config: PostgresConfig, pool: pg.Pool, store: PostgresStore): OpenedStore {
  return {
    kind: 'postgres',
    label: labelOf(config),
    store,
    async close() {
      await store.close()
      await pool.end()
    },
  }
}
