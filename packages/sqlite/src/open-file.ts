/**
 * Opening the file named by `filename`, with a `SqliteStoreError` `open_failed` that names the path
 * and the reason when that cannot be done, and the settings of the store's connection.
 *
 * @module
 */
import { statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { SqliteStoreError } from './errors'
import type { ResolvedStoreOptions } from './options'

/**
 * Opens `filename` and reads its header, so that every way the file can be unusable shows up here,
 * as one error: better-sqlite3 refuses a missing folder itself, SQLite refuses a folder when it
 * opens it, but a file that is not a database is noticed only at the first statement that reads it.
 */
export function openDatabaseFile(filename: string, busyTimeoutMs: number): Database.Database {
  let db: Database.Database | undefined
  try {
    db = new Database(filename, { timeout: busyTimeoutMs })
    db.pragma('schema_version')
    return db
  } catch (error) {
    db?.close()
    throw new SqliteStoreError('open_failed', `cannot open ${JSON.stringify(filename)}: ${reasonOf(error, filename)}`, { cause: error })
  }
}

/** better-sqlite3's message, with what SQLite leaves unsaid ("unable to open database file") spelled out. */
function reasonOf(error: unknown, filename: string): string {
  const message = error instanceof Error ? error.message : String(error)
  return isFolder(filename) ? `${message} (the path is a folder)` : message
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Connection settings, set before any transaction: busy timeout first (switching to WAL needs a
 * lock another process may hold for a moment), then journal mode, synchronous, foreign keys.
 */
export function configure(db: Database.Database, config: ResolvedStoreOptions): void {
  db.pragma(`busy_timeout = ${config.busyTimeoutMs}`)
  // An in-memory database has no WAL; it keeps its 'memory' journal.
  if (config.wal && !db.memory) db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${config.synchronous.toUpperCase()}`)
  db.pragma('foreign_keys = ON')
}
