/**
 * The PostgreSQL pieces the benchmarks share: a `pg.Pool` on `DATABASE_URL` whose clients count the
 * statements they send, and schemas of the benchmark's own, made fresh and dropped afterwards.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The server the benchmarks use. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Connections per pool unless told otherwise: the size docs/postgres.md suggests (`max: 10`). */
export const DEFAULT_POOL_SIZE = 10

/** A pool and the number of statements its clients have sent so far. */
export interface CountingPool {
  pool: pg.Pool
  /** Statements sent on any of the pool's clients since it was made: `pool.query` and checked-out clients alike. */
  statements: () => number
}

/**
 * A pool of `max` connections whose clients count every `query` call. node-postgres sends one
 * statement per `query` (a named prepared statement is parsed once per connection, then bound and
 * executed in the same round trip), so the count is the round trips. Counted on the client class
 * rather than on `pool.query`, so that the baselines' `BEGIN … COMMIT` on a checked-out client count
 * too.
 */
export function countingPool(max: number): CountingPool {
  let sent = 0
  class CountingClient extends pg.Client {}
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
  CountingClient.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    sent++
    return query.apply(this, args)
  } as typeof query as pg.Client['query']
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max, Client: CountingClient })
  return { pool, statements: () => sent }
}

/** A pool on the benchmarks' server. */
export function openPool(max: number): pg.Pool {
  return new pg.Pool({ connectionString: DATABASE_URL, max })
}

/** A schema name of the benchmark's own: `scanauth_bench_` and 12 random hex characters. */
export function freshBenchSchema(): string {
  return `scanauth_bench_${randomBytes(6).toString('hex')}`
}

/** Drops a schema the benchmark made, and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/**
 * The server in a few words: its version and the settings that decide what a commit waits for,
 * e.g. `15.20 (fsync on, synchronous_commit on)`; or why it could not be read.
 */
export async function describeServer(): Promise<string> {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  try {
    await client.connect()
    const show = async (setting: string) => ((await client.query<Record<string, string>>(`SHOW ${setting}`)).rows[0]?.[setting] ?? 'unknown')
    const version = (await show('server_version')).split(' ')[0]
    return `${version} (fsync ${await show('fsync')}, synchronous_commit ${await show('synchronous_commit')})`
  } catch (error) {
    return `not reachable (${error instanceof Error ? error.message : String(error)})`
  } finally {
    await client.end().catch(() => {})
  }
}
