/**
 * The one error class of `@scanauth/cli`, its codes and the exit status of each.
 *
 * @module
 */

/**
 * What went wrong, machine-readable. The exit status of each is in {@link EXIT_STATUS}: 2 for a
 * command line or a configuration that cannot work, 1 for everything else. Every code but
 * `store_failed` is raised before anything is written; a store that fails during a commit has
 * applied it whole or not at all (commits are atomic), as for a server.
 */
export type ScanAuthCliErrorCode =
  /**
   * The command line is wrong: no command or an unknown one, an unknown or repeated option, a
   * missing or extra argument, a value that is not what the option takes (`--days 1.5`, an openid
   * over 128 characters, an authorization id that is not a positive integer).
   */
  | 'usage'
  /**
   * The store to use is configured wrongly, by options or environment: two stores named,
   * `SCANAUTH_STORE=memory` (a memory store lives inside one server process) or an unknown kind,
   * `--redis-prefix` or `--pg-schema` without that store, a URL or schema name that cannot be one.
   */
  | 'invalid_config'
  /**
   * The store cannot be opened: the SQLite file does not exist (the CLI never creates one), is a
   * folder or not a database; Redis or PostgreSQL does not answer or refuses the connection.
   */
  | 'store_unavailable'
  /**
   * The store opens but holds no scanauth data: an SQLite file or a PostgreSQL schema without the
   * scanauth tables, a Redis prefix nothing was ever written under. Usually the wrong file, schema
   * or prefix; `scanauth migrate` creates the tables where that is what you want.
   */
  | 'store_not_initialized'
  /**
   * The store's schema is older than this CLI's store packages read (`scanauth migrate` brings an
   * SQLite file or a PostgreSQL schema up to date), or a Redis prefix holds data of an older key
   * layout, which cannot be migrated.
   */
  | 'schema_outdated'
  /** The store was written by a newer release than this CLI's store packages: upgrade `@scanauth/cli`. */
  | 'schema_too_new'
  /**
   * The store lacks an optional method of the Store contract that the command reads with (the
   * operator reads `listLiveSessions` and `schemaState`, the order methods, `purgeExpired`, the
   * reminders' `listActiveAuthorizations`): a store of your own that left it out. Every scanauth
   * store has them all. Nothing was written.
   */
  | 'unsupported'
  /** No user has this openid (`user`, `signout`, `ledger`, `orders`). */
  | 'user_not_found'
  /** No authorization has this id (`revoke`). */
  | 'authorization_not_found'
  /**
   * scanauth refused the operation and changed nothing: `grant` with source `free`, an idempotency
   * key already used with other parameters, revoking an expired or exhausted authorization. The
   * message carries core's code (`ScanAuthError`, the `cause`).
   */
  | 'refused'
  /** The store failed during the operation (a lost connection, a busy file); the driver's error is the `cause`. */
  | 'store_failed'

/** The exit status of each code: 2 for usage and configuration errors, 1 for the rest. Success is 0. */
export const EXIT_STATUS: Readonly<Record<ScanAuthCliErrorCode, 1 | 2>> = {
  usage: 2,
  invalid_config: 2,
  store_unavailable: 1,
  store_not_initialized: 1,
  schema_outdated: 1,
  schema_too_new: 1,
  unsupported: 1,
  user_not_found: 1,
  authorization_not_found: 1,
  refused: 1,
  store_failed: 1,
}

/**
 * An error of the command line: what it prints as its one line on standard error, with the code
 * that decides the exit status. The message is one line of text for people; the codes are stable.
 *
 * @example
 * ```ts
 * import { ScanAuthCliError } from '@scanauth/cli'
 *
 * declare const error: unknown
 * if (error instanceof ScanAuthCliError && error.code === 'user_not_found') console.log('no such user')
 * ```
 */
export class ScanAuthCliError extends Error {
  /** Machine-readable code. */
  readonly code: ScanAuthCliErrorCode
  /** The process exit status for this error (2 for usage and configuration errors, 1 otherwise). */
  readonly exitStatus: 1 | 2

  /**
   * @param code What went wrong.
   * @param message One line for people; line breaks are folded into spaces.
   * @param options `cause`: the error underneath (a driver's, core's), when there is one.
   */
  constructor(code: ScanAuthCliErrorCode, message: string, options?: { cause?: unknown }) {
    super(oneLine(message), options)
    this.name = 'ScanAuthCliError'
    this.code = code
    this.exitStatus = EXIT_STATUS[code]
  }
}

/** `text` on one line: every run of white space that holds a line break becomes one space. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim()
}

/** An error's own words (Node reports a refused connection to `localhost` as an AggregateError without a message). */
export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.message) return oneLine(error.message)
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(reasonOf).join('; ')
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : error.name
}
