/**
 * Options of `new SqliteStore(...)`, parsed once with zod; defaults live
 * here and nowhere else.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import { z } from 'zod'
import { SqliteStoreError } from './errors'

/** A better-sqlite3 connection, recognised by the methods the store calls on it. */
function isDatabase(value: unknown): value is Database.Database {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return typeof v.prepare === 'function' && typeof v.transaction === 'function' && typeof v.pragma === 'function'
}

/** Options after parsing: every default filled in. */
export interface ResolvedStoreOptions {
  filename?: string | undefined
  database?: Database.Database | undefined
  busyTimeoutMs: number
  wal: boolean
  synchronous: 'full' | 'normal'
  changePollMs: number
  migrate: boolean
}

const storeOptionsSchema: z.ZodType<ResolvedStoreOptions> = z
  .object({
    filename: z.string().min(1).optional(),
    database: z.custom<Database.Database>(isDatabase, { error: 'database must be an open better-sqlite3 Database' }).optional(),
    busyTimeoutMs: z.number().int().min(0).max(2_147_483_647).default(5000),
    wal: z.boolean().default(true),
    synchronous: z.enum(['full', 'normal']).default('full'),
    changePollMs: z.number().int().min(1).max(60_000).default(25),
    migrate: z.boolean().default(true),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((value.filename === undefined) === (value.database === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of filename and database', path: [] })
      return
    }
    const db = value.database
    if (db !== undefined && !db.open) ctx.addIssue({ code: 'custom', message: 'the database is closed', path: ['database'] })
    if (db !== undefined && db.readonly) ctx.addIssue({ code: 'custom', message: 'the database is read-only', path: ['database'] })
  })

/**
 * Options of `new SqliteStore(...)`: give exactly one of `filename` and `database`.
 *
 * @example
 * ```ts
 * new SqliteStore({ filename: './data/scanauth.db' })          // the store opens and closes the file
 * new SqliteStore({ database: db, busyTimeoutMs: 10_000 })     // the application's own connection
 * ```
 */
export interface SqliteStoreOptions {
  /**
   * Path of the database file; created when missing. The store opens it and closes it in
   * `close()`. `':memory:'` works for demos, without WAL and without a second connection.
   */
  filename?: string
  /**
   * An open better-sqlite3 `Database` the application already owns (it may keep its own tables in
   * it; ours are all named `scanauth_*`). `close()` leaves it open. The store still sets the
   * pragmas below on this connection.
   */
  database?: Database.Database
  /**
   * How long a writer waits for another connection's write lock before failing with
   * `SQLITE_BUSY`, in milliseconds (`PRAGMA busy_timeout`). Default 5000. Commits hold the lock
   * for microseconds, so a wait this long means something else holds the file (a long backup
   * step, a manual session in the sqlite3 shell).
   */
  busyTimeoutMs?: number
  /**
   * Put the file in write-ahead-log mode (`PRAGMA journal_mode = WAL`), so readers never wait
   * for the writer and several processes can share the file. Default true. Set false only where
   * WAL cannot work (a network filesystem); the journal mode is then left as it is.
   */
  wal?: boolean
  /**
   * `PRAGMA synchronous`. `'full'` (default) makes every commit durable on power loss before it
   * returns. `'normal'` skips the sync of each commit in WAL mode: a crash of the process still
   * loses nothing and never corrupts the file, but a power cut may roll back the last commits.
   */
  synchronous?: 'full' | 'normal'
  /**
   * How often, in milliseconds, the store looks for scenes written by other connections (other
   * processes) while someone watches scenes (`watchScenes`, e.g. a `waitForStatus`). Default 25.
   * Each look is one `PRAGMA data_version` (no lock, microseconds); only when it changed does the
   * store read the new rows of the change log. A scan committed elsewhere therefore wakes a
   * waiter here within about this long; commits through this store wake it at once. With nobody
   * watching there is no timer at all. Measured cost and delay: `docs/sqlite.md`.
   */
  changePollMs?: number
  /**
   * Bring the file's schema up to date as the store opens (default true). With `false` the store
   * leaves the schema as it finds it (with `wal: false` too, it writes nothing at all as it opens):
   * `schemaState()` tells where the file stands, and until
   * `await store.migrate()` brings it up to date, every other method of a store on a file that is
   * not current throws `not_migrated`. For tools that must refuse a file of another version before
   * they write (the `scanauth` CLI); a file from a newer release is then not refused at once either.
   */
  migrate?: boolean
}

/** Parses and completes the store options, or throws a `SqliteStoreError` `invalid_options` naming the bad one. */
export function resolveStoreOptions(options: SqliteStoreOptions): ResolvedStoreOptions {
  return parse(storeOptionsSchema, options, 'new SqliteStore')
}

function parse<T extends z.ZodType>(schema: T, input: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(input ?? {})
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
  throw new SqliteStoreError('invalid_options', `${where}: ${issue ? `${path}${issue.message}` : 'invalid options'}`)
}
