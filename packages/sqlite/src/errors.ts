/**
 * The errors `@scanauth/sqlite` throws itself (SQLite's own errors, such as `SQLITE_BUSY`, pass
 * through unchanged as better-sqlite3 `SqliteError`s).
 *
 * @module
 */

/** What went wrong, machine-readable. */
export type SqliteStoreErrorCode =
  /** The options of `new SqliteStore` or of `purgeExpired` are invalid; the message names the option. */
  | 'invalid_options'
  /**
   * The file given as `filename` cannot be opened as a database: its folder does not exist, the
   * path is a folder, it is not an SQLite file, or SQLite refused it. The message names the path
   * and the reason; `cause` is the error better-sqlite3 raised.
   */
  | 'open_failed'
  /** The file was written by a newer `@scanauth/sqlite` (its schema version is above ours). */
  | 'schema_too_new'
  /**
   * The store was opened with `migrate: false` on a file that is not at this release's schema
   * version, and `migrate()` has not been called: only `schemaState`, `migrate` and `close` work.
   */
  | 'not_migrated'
  /** A migration step failed; the file is left at the version before that step. */
  | 'migration_failed'
  /** A change set broke the Store contract (a bug in the caller, never a race); nothing was applied. */
  | 'invalid_change_set'
  /** The store was closed. */
  | 'closed'

/**
 * An error of the SQLite store. Messages start with `[@scanauth/sqlite]` so they are easy to
 * place in a log.
 */
export class SqliteStoreError extends Error {
  /** Machine-readable code. */
  readonly code: SqliteStoreErrorCode

  constructor(code: SqliteStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[@scanauth/sqlite] ${message}`, options)
    this.name = 'SqliteStoreError'
    this.code = code
  }
}
