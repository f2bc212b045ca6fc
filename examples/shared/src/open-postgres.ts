/**
 * The PostgreSQL store of the examples (`SCANAUTH_STORE=postgres`): a `pg.Pool` the example owns, a
 * `PostgresStore` on it, its schema migrated at start, and start-up failures said in words a person
 * can act on (which variable, what to do), with the URL's password left out.
 *
 * @module
 */
import pg from 'pg'
import { PostgresStore, PostgresStoreError } from '@scanauth/postgres'
import { ConfigError, type StoreConfig } from './config'
import { redactUrl } from './redact-url'
import type { OpenedStore } from './opened-store'

type PostgresConfig = Extract<StoreConfig, { kind: 'postgres' }>

/**
 * How long a statement waits for a connection (a new one, or a free one of a busy pool) before it
 * fails. node-postgres waits for ever by default: a database that does not answer would hang the
 * start, and later every request, instead of failing with a reason.
 */
const CONNECT_TIMEOUT_MS = 5_000

/**
 * Opens the pool, migrates the schema (creating it when missing) and returns the store. `close`
 * closes the store first (it gives back the client it holds for `LISTEN` while devices wait), then
 * ends the pool, which is ours: `PostgresStore` never ends a pool.
 */
export async function openPostgres(config: PostgresConfig, log: (line: string) => void): Promise<OpenedStore> {
  const where = redactUrl(config.url, 'the DATABASE_URL given')
  const pool = new pg.Pool({
    connectionString: config.url,
    // Ten connections (node-postgres's default), one of them held for LISTEN while anyone waits
    // for a scan (docs/postgres.md, "Connection pool"); statements are short, so ten go far.
    max: 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Names our connections in pg_stat_activity; an `application_name` in DATABASE_URL wins.
    application_name: 'scanauth-example',
  })
  // An idle connection that breaks (a database restart) is reported on the pool: without a
  // listener that event would end the process. The pool opens a new connection when next needed.
  pool.on('error', (error: Error) => log(`postgres: ${error.message}`))
  const store = new PostgresStore({ pool, schema: config.schema })
  try {
    await store.migrate() // fail at start, with the reason, rather than on the first request
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw startError(error, where, config.schema)
  }
  return {
    store,
    close: async () => {
      await store.close()
      await pool.end()
    },
    label: `postgres ${where} (schema ${config.schema})`,
  }
}

/** SQLSTATEs of a server that answered but refused us: no such database, role or password. */
const REFUSED = new Set(['3D000', '28000', '28P01'])

/** SQLSTATE of a missing privilege (CREATE on the database or the schema, during the migration). */
const INSUFFICIENT_PRIVILEGE = '42501'

/** A failure to open the store as a {@link ConfigError} that names the variable to change and what to do. */
function startError(error: unknown, where: string, schema: string): ConfigError {
  const reason = reasonOf(error)
  const options = { cause: error }
  if (error instanceof PostgresStoreError) {
    // schema_too_new, migration_failed: the message says which version and which step.
    return new ConfigError(`PostgreSQL at ${where} (DATABASE_URL), schema ${schema} (SCANAUTH_PG_SCHEMA): ${reason}`, options)
  }
  const code = (error as { code?: unknown } | null)?.code
  if (code === INSUFFICIENT_PRIVILEGE) {
    return new ConfigError(
      `PostgreSQL at ${where} (DATABASE_URL) refused to create the scanauth tables in schema ${schema} (SCANAUTH_PG_SCHEMA): ${reason}; ` +
        'grant the role CREATE on that schema (or on the database, for a new schema), or set SCANAUTH_PG_SCHEMA to a schema it may create tables in',
      options,
    )
  }
  if (typeof code === 'string' && REFUSED.has(code)) {
    return new ConfigError(`PostgreSQL at ${where} (DATABASE_URL) refused the connection: ${reason}; check the user, password and database name in DATABASE_URL`, options)
  }
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    // Any other error the server reported: it was reachable, so say what it said.
    return new ConfigError(`PostgreSQL at ${where} (DATABASE_URL), schema ${schema} (SCANAUTH_PG_SCHEMA): ${reason}`, options)
  }
  return new ConfigError(`cannot reach PostgreSQL at ${where} (DATABASE_URL): ${reason}; start PostgreSQL there, or set DATABASE_URL to a server that answers`, options)
}

/**
 * An error's own words. Node reports a refused connection to a name with several addresses
 * (`localhost`: ::1 and 127.0.0.1) as an AggregateError with an empty message; its parts say it.
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.message) return error.message
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(reasonOf).join('; ')
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : error.name
}
