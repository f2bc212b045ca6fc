/**
 * PostgreSQL for the example suites: the test server (`DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test), a fresh schema per test dropped afterwards, and the
 * server's own view of who is connected (`pg_stat_activity`), read apart from the example's pool.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { DEFAULT_DATABASE_URL } from '../src/config'

/** The server the tests use. */
export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL

/** A name of our own for a schema, a role or an application: `prefix` and 12 random hex characters. */
export function freshName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`
}

/** `url` with `application_name` set, so the server can tell one example's connections from every other's. */
export function withApplicationName(url: string, name: string): string {
  const u = new URL(url)
  u.searchParams.set('application_name', name)
  return u.toString()
}

/** `url` as `user` with `password` (an empty password is left out). */
export function withCredentials(url: string, user: string, password = ''): string {
  const u = new URL(url)
  u.username = user
  u.password = password
  return u.toString()
}

/**
 * A pool of the tests' own on the test server, for setting up and checking behind the example's
 * back; `cleanup()` drops the schemas and roles handed out and ends the pool.
 */
export function testDatabase() {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 })
  const schemas: string[] = []
  const roles: string[] = []
  return {
    pool,
    /** A schema name nobody uses, dropped (with everything in it) by `cleanup()`. */
    schema(): string {
      const name = freshName('scanauth_example')
      schemas.push(name)
      return name
    },
    /** A role that may log in and nothing more (no CREATE anywhere), dropped by `cleanup()`. */
    async roleWithoutCreate(): Promise<string> {
      const name = freshName('scanauth_example_role')
      await pool.query(`CREATE ROLE ${name} LOGIN`)
      roles.push(name)
      return name
    },
    /** The server's sessions of `applicationName`, with the last statement each ran. */
    async connections(applicationName: string): Promise<Array<{ query: string }>> {
      const { rows } = await pool.query<{ query: string }>('SELECT query FROM pg_stat_activity WHERE application_name = $1', [applicationName])
      return rows
    },
    async cleanup(): Promise<void> {
      for (const schema of schemas.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      for (const role of roles.splice(0)) await pool.query(`DROP ROLE IF EXISTS ${role}`)
    },
    end: () => pool.end(),
  }
}
