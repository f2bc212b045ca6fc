/**
 * The SQLite store of the CLI: the file a server uses, opened as one more ordinary connection
 * (shared locks, never `locking_mode = EXCLUSIVE`), never created, never converted.
 *
 * - A missing file is refused: better-sqlite3 would create an empty database (`fileMustExist`).
 * - The journal mode is left as the server set it (`wal: false` tells `SqliteStore` not to switch
 *   it); the store's other pragmas (`busy_timeout`, `synchronous`, `foreign_keys`) only concern this
 *   connection.
 * - The store is opened with `migrate: false` and asked for its `schemaState`, so a command other
 *   than `migrate` refuses a file that is not current before anything is written to it.
 *
 * @module
 */
import { statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { SqliteStore, SqliteStoreError } from '@scanauth/sqlite'
import type { SchemaState } from '@scanauth/core/store'
import { ScanAuthCliError, reasonOf } from './errors'
import { assertCurrent, storeMethod, type MigrationReport, type OpenedStore } from './opened-store'
import type { StoreConfig } from './store-config'

type SqliteConfig = Extract<StoreConfig, { kind: 'sqlite' }>

/** How long a statement waits for another connection's write lock (a server's commit) before failing: as the store's default. */
const BUSY_TIMEOUT_MS = 5_000

/** Opens the file of a server's store for a command; refuses a file that is missing, not a database or not current. */
export async function openSqlite(config: SqliteConfig): Promise<OpenedStore> {
  const db = openFile(config)
  try {
    const store = storeOn(db, config)
    const state = await schemaStateOf(store, config)
    assertCurrent(state.version, state.latest, whereOf(config))
    return opened(config, store, db)
  } catch (error) {
    db.close()
    throw error
  }
}

/** Brings the file's schema up to date (the file must exist); says from which version to which. */
export async function migrateSqlite(config: SqliteConfig): Promise<MigrationReport> {
  const db = openFile(config)
  try {
    const store = storeOn(db, config)
    const state = await schemaStateOf(store, config)
    if (state.version > state.latest) assertCurrent(state.version, state.latest, whereOf(config))
    // One BEGIN IMMEDIATE transaction, safe beside running servers.
    const outcome = await storeMethod(store, 'migrate', labelOf(config), 'migrate its schema')().catch((error: unknown) => {
      throw failure(error, config)
    })
    await store.close()
    return { kind: 'sqlite', label: labelOf(config), from: outcome.from, to: outcome.to, migrated: outcome.from !== outcome.to }
  } finally {
    db.close()
  }
}

function labelOf(config: SqliteConfig): string {
  return `sqlite ${config.filename}`
}

function whereOf(config: SqliteConfig): string {
  return `${config.filename} (${config.from})`
}

/** Opens an existing file read-write, or refuses with the reason; whether it is a database shows at the first read. */
function openFile(config: SqliteConfig): Database.Database {
  const where = whereOf(config)
  let isFolder: boolean
  try {
    isFolder = statSync(config.filename).isDirectory()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ScanAuthCliError('store_unavailable', `no SQLite file at ${where}; the CLI never creates one: give the file your servers use (--sqlite or SCANAUTH_SQLITE_FILE)`)
    }
    throw new ScanAuthCliError('store_unavailable', `cannot open ${where}: ${reasonOf(error)}`, { cause: error })
  }
  if (isFolder) throw new ScanAuthCliError('store_unavailable', `${where} is a folder, not an SQLite file`)
  try {
    return new Database(config.filename, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS })
  } catch (error) {
    throw new ScanAuthCliError('store_unavailable', `cannot open ${where} as an SQLite database: ${reasonOf(error)}`, { cause: error })
  }
}

/** The store on the CLI's connection, the journal mode and the schema left as they are. */
function storeOn(db: Database.Database, config: SqliteConfig): SqliteStore {
  try {
    return new SqliteStore({ database: db, wal: false, busyTimeoutMs: BUSY_TIMEOUT_MS, migrate: false })
  } catch (error) {
    // The store reads the file's schema version as it opens: a file that is not a database fails here.
    throw new ScanAuthCliError('store_unavailable', `cannot open ${whereOf(config)} as an SQLite database: ${reasonOf(error)}`, { cause: error })
  }
}

/** The file's schema state, or why it cannot be read. */
async function schemaStateOf(store: SqliteStore, config: SqliteConfig): Promise<SchemaState> {
  const read = storeMethod(store, 'schemaState', labelOf(config), 'read its schema version')
  try {
    return await read()
  } catch (error) {
    throw new ScanAuthCliError('store_unavailable', `cannot open ${whereOf(config)} as an SQLite database: ${reasonOf(error)}`, { cause: error })
  }
}

/** A failure of the migration, in the CLI's codes. */
function failure(error: unknown, config: SqliteConfig): ScanAuthCliError {
  if (error instanceof SqliteStoreError && error.code === 'schema_too_new') {
    return new ScanAuthCliError('schema_too_new', `${whereOf(config)}: ${reasonOf(error)}`, { cause: error })
  }
  return new ScanAuthCliError('store_unavailable', `cannot use ${whereOf(config)}: ${reasonOf(error)}`, { cause: error })
}

function opened(config: SqliteConfig, store: SqliteStore, db: Database.Database): OpenedStore {
  return {
    kind: 'sqlite',
    label: labelOf(config),
    store,
    async close() {
      await store.close()
      db.close()
    },
  }
}
