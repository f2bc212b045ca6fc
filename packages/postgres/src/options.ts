/**
 * Options of `new PostgresStore(...)`, parsed once with zod; defaults live here and nowhere else.
 *
 * @module
 */
import type { Pool } from 'pg'
import { z } from 'zod'
import { PostgresStoreError } from './errors'

/** A node-postgres `Pool`, recognised by the methods the store calls on it. */
function isPool(value: unknown): value is Pool {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return typeof v.query === 'function' && typeof v.connect === 'function' && typeof v.end === 'function'
}

/**
 * A schema name the store can put in SQL without quoting surprises: lowercase letters, digits and
 * underscores, starting with a letter or underscore, at most 40 characters (so that the channel
 * name `<schema>_scanauth_scenes` stays within PostgreSQL's 63-byte identifier limit).
 */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/

/** Options after parsing: every default filled in. */
export interface ResolvedStoreOptions {
  pool: Pool
  schema: string
}

const storeOptionsSchema: z.ZodType<ResolvedStoreOptions> = z
  .object({
    pool: z.custom<Pool>(isPool, { error: 'pool must be a node-postgres Pool (new pg.Pool(...))' }),
    schema: z.string().regex(SCHEMA_NAME, { error: 'schema must be 1-40 characters of a-z, 0-9 and _, not starting with a digit' }).default('public'),
  })
  .strict()

/**
 * Options of `new PostgresStore(...)`.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { PostgresStore } from '@scanauth/postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const store = new PostgresStore({ pool, schema: 'auth' })
 * await store.migrate()
 * ```
 */
export interface PostgresStoreOptions {
  /**
   * The application's node-postgres `Pool`. The store runs every statement through it and, while
   * someone watches scenes, keeps one of its clients checked out for `LISTEN`. `close()` gives that
   * client back and never ends the pool.
   */
  pool: Pool
  /**
   * The PostgreSQL schema that holds the store's tables (all named `scanauth_*`); created by
   * `migrate()` when missing. Default `public`. Lowercase letters, digits and `_`, at most 40.
   */
  schema?: string
}

/** Parses and completes the store options, or throws a `PostgresStoreError` `invalid_options` naming the bad one. */
export function resolveStoreOptions(options: PostgresStoreOptions): ResolvedStoreOptions {
  const result = storeOptionsSchema.safeParse(options ?? {})
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
  throw new PostgresStoreError('invalid_options', `new PostgresStore: ${issue ? `${path}${issue.message}` : 'invalid options'}`)
}
