/**
 * The errors `@scanauth/postgres` throws itself. PostgreSQL's own errors (a lost connection, a
 * full disk, a pool timeout) pass through unchanged as node-postgres errors.
 *
 * @module
 */

/** What went wrong, machine-readable. */
export type PostgresStoreErrorCode =
  /** The options of `new PostgresStore` or of `purgeExpired` are invalid; the message names the option. */
  | 'invalid_options'
  /** An operation ran before `await store.migrate()` on this store. */
  | 'not_migrated'
  /** The schema was written by a newer `@scanauth/postgres` (its version is above ours). */
  | 'schema_too_new'
  /** A migration step failed; everything `migrate()` did was rolled back. */
  | 'migration_failed'
  /** A change set broke the Store contract (a bug in the caller, never a race); nothing was applied. */
  | 'invalid_change_set'

/**
 * An error of the PostgreSQL store. Messages start with `[@scanauth/postgres]` so they are easy
 * to place in a log.
 */
export class PostgresStoreError extends Error {
  /** Machine-readable code. */
  readonly code: PostgresStoreErrorCode

  /** Builds the error; `cause` keeps the underlying node-postgres error when there is one. */
  constructor(code: PostgresStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[@scanauth/postgres] ${message}`, options)
    this.name = 'PostgresStoreError'
    this.code = code
  }
}
