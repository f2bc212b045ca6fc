/**
 * The SQLite store of the CLI: the file a server uses, opened as one more ordinary connection
 * (shared locks, never `locking_mode = EXCLUSIVE`), never created, never converted.
 *
 * - A missing file is refused: better-sqlite3 would create an empty database (`fileMustExist`).
 * - The journal mode is left as the server set it (`wal: false` tells `SqliteStore` not to switch
 *   it); the store's other pragmas (`busy_timeout`, `synchronous`, `foreign_keys`) only concern this
 *   connection.
 * - The schema version is read before the store is made: `SqliteStore` migrates when it opens a
 *   file that is not current, so a command other than `migrate` refuses such a file first.
 *
 * @module
 */
import { statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { SCHEMA_VERSION, SqliteStore, SqliteStoreError, VERSION_TABLE } from '@scanauth/sqlite'
import type { SessionRecord } from '@scanauth/core'
import { ScanAuthCliError, reasonOf } from './errors'
import { assertCurrent, type LiveSessions, type MigrationReport, type OpenedStore } from './opened-store'
import type { StoreConfig } from './store-config'

type SqliteConfig = Extract<StoreConfig, { kind: 'sqlite' }>

/** How long a statement waits for another connection's write lock (a server's commit) before failing: as the store's default. */
const BUSY_TIMEOUT_MS = 5_000

/** Opens the file of a server's store for a command; refuses a file that is missing, not a database or not current. */
export function openSqlite(config: SqliteConfig): OpenedStore {
  const db = openFile(config)
  try {
    assertCurrent(readVersion(db, config), SCHEMA_VERSION, `${config.filename} (${config.from})`)
    return opened(config, storeOn(db, config))
  } catch (error) {
    db.close()
    throw error
  }
}

/** Brings the file's schema up to date (the file must exist); says from which version to which. */
export async function migrateSqlite(config: SqliteConfig): Promise<MigrationReport> {
  const db = openFile(config)
  try {
    const from = readVersion(db, config)
    if (from > SCHEMA_VERSION) assertCurrent(from, SCHEMA_VERSION, `${config.filename} (${config.from})`)
    // The store migrates as it opens: in one BEGIN IMMEDIATE transaction, safe beside running servers.
    await storeOn(db, config).close()
    return { kind: 'sqlite', label: labelOf(config), from, to: SCHEMA_VERSION, migrated: from !== SCHEMA_VERSION }
  } finally {
    db.close()
  }
}

function labelOf(config: SqliteConfig): string {
  return `sqlite ${config.filename}`
}

/** Opens an existing database file read-write, or refuses with the reason. */
function openFile(config: SqliteConfig): Database.Database {
  const where = `${config.filename} (${config.from})`
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
  let db: Database.Database | undefined
  try {
    db = new Database(config.filename, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS })
    // A file that is not a database is noticed only by the first statement that reads it.
    db.pragma('schema_version')
    return db
  } catch (error) {
    db?.close()
    throw new ScanAuthCliError('store_unavailable', `cannot open ${where} as an SQLite database: ${reasonOf(error)}`, { cause: error })
  }
}

/** The file's schema version: the highest migration applied, 0 for a file without the scanauth tables. */
function readVersion(db: Database.Database, config: SqliteConfig): number {
  try {
    const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(VERSION_TABLE)
    if (table === undefined) return 0
    return (db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get() as number | null) ?? 0
  } catch (error) {
    throw new ScanAuthCliError('store_unavailable', `cannot read ${config.filename} (${config.from}): ${reasonOf(error)}`, { cause: error })
  }
}

/** The store on the CLI's connection, the journal mode left alone. */
function storeOn(db: Database.Database, config: SqliteConfig): SqliteStore {
  try {
    return new SqliteStore({ database: db, wal: false, busyTimeoutMs: BUSY_TIMEOUT_MS })
  } catch (error) {
    if (error instanceof SqliteStoreError && error.code === 'schema_too_new') {
      throw new ScanAuthCliError('schema_too_new', `${config.filename} (${config.from}): ${reasonOf(error)}`, { cause: error })
    }
    throw new ScanAuthCliError('store_unavailable', `cannot use ${config.filename} (${config.from}): ${reasonOf(error)}`, { cause: error })
  }
}

function opened(config: SqliteConfig, store: SqliteStore): OpenedStore {
  const db = store.database
  const count = db.prepare<[number, number], number>(`SELECT count(*) FROM scanauth_sessions WHERE user_id = ? AND expires_at > ?`).pluck()
  const latest = db.prepare<[number, number, number], SessionRecord>(
    `SELECT id, token, user_id AS userId, device_id AS deviceId, scene_id AS sceneId, created_at AS createdAt, expires_at AS expiresAt
     FROM scanauth_sessions WHERE user_id = ? AND expires_at > ? ORDER BY id DESC LIMIT ?`,
  )
  return {
    kind: 'sqlite',
    label: labelOf(config),
    store,
    async liveSessions(userId: number, now: number, limit: number): Promise<LiveSessions> {
      // One read transaction, so the count and the list agree.
      return db.transaction(() => ({ live: count.get(userId, now) ?? 0, latest: latest.all(userId, now, limit) }))()
    },
    async close() {
      await store.close()
      db.close()
    },
  }
}
