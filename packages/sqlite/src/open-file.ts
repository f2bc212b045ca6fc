/**
 * Opening the file named by `filename`, with a `SqliteStoreError` `open_failed` that names the path
 * and the reason when that cannot be done.
 *
 * @module
 */
import { statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { SqliteStoreError } from './errors'

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
