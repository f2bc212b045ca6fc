/**
 * The CLI on an SQLite file that a server in this process uses at the same time: the whole
 * scenario, then what only a file can get wrong (missing, a folder, not a database, empty, another
 * schema version), each refusal checked against the file's bytes and a dump of every table.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SCHEMA_VERSION, SqliteStore } from '@scanauth/sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectRefusal, json, scanauth, succeeds } from './support/cli'
import { describeRemindersScenario } from './support/reminders'
import { describeCliScenario, expectRefusedWithoutWrites, type Backend } from './support/scenario'
import { Device, keepWaiting, startServer, type LiveServer } from './support/server'
import { sqliteSnapshot } from './support/snapshots'

/** A temporary folder with `data/scanauth.sqlite` (the examples' default path) served by a store. */
function sqliteBackend(): Backend & { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'scanauth-cli-'))
  mkdirSync(join(dir, 'data'))
  const file = join(dir, 'data', 'scanauth.sqlite')
  const store = new SqliteStore({ filename: file })
  return {
    kind: 'sqlite',
    dir,
    file,
    storeArgs: ['--sqlite', file],
    storeEnv: { SCANAUTH_STORE: 'sqlite', SCANAUTH_SQLITE_FILE: file },
    serverStore: store,
    schemaVersion: SCHEMA_VERSION,
    snapshot: async () => sqliteSnapshot(file),
    close: async () => {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

describeCliScenario('SQLite', async () => sqliteBackend())
describeRemindersScenario('SQLite', async () => sqliteBackend())

describe('scanauth on SQLite: files it refuses, and the default path', () => {
  let backend: ReturnType<typeof sqliteBackend>
  let server: LiveServer
  let waiter: ReturnType<typeof keepWaiting>
  const on = (...argv: string[]) => [...argv, ...backend.storeArgs]

  beforeAll(async () => {
    backend = sqliteBackend()
    server = await startServer(backend.serverStore)
    const kiosk = new Device(server.url, 'kiosk')
    const scene = await kiosk.createScene()
    await server.auth.handleScan({ sceneStr: scene, openid: 'o6_dave' })
    // A device waits on a fresh code the whole time: the server holds the file open and watches it.
    waiter = keepWaiting(kiosk, await kiosk.createScene())
  })

  afterAll(async () => {
    await waiter?.stop()
    await server?.close()
    await backend?.close()
  })

  it('refuses malformed command lines before opening anything, and the file stays byte for byte the same', async () => {
    // One of each kind as a process (the whole list runs in process in run-cli.test.ts).
    await expectRefusedWithoutWrites(backend, [
      [on('frobnicate'), 2, /^scanauth: unknown command "frobnicate"; the commands are user, grant, revoke, signout, ledger, orders, purge, reminders, migrate \(see scanauth --help\)$/],
      [on('user'), 2, /^scanauth: user needs <openid> \(see scanauth user --help\)$/],
      [on('user', 'o6_dave', '--frob'), 2, /^scanauth: unknown option --frob \(see scanauth user --help\)$/],
      [on('grant', 'o6_dave', '--days', '3', '--points', '5'), 2, /grant needs exactly one of --days N and --points N/],
      [on('grant', 'o6_dave', '--points', '10', '--source', 'free'), 2, /--source free is reserved for the free trial/],
      [on('ledger', 'o6_dave', '--limit', '1001'), 2, /--limit must be a whole number from 1 to 1000/],
      [on('user', 'o6_dave', '--redis', 'redis://127.0.0.1:6379'), 2, /give one store, not --sqlite and --redis/],
    ])
  })

  it('refuses a missing file and never creates it, nor its folder', async () => {
    const missing = join(backend.dir, 'elsewhere', 'scanauth.sqlite')
    const line = expectRefusal(await scanauth(['user', 'o6_dave', '--sqlite', missing]), 1)
    expect(line).toBe(`scanauth: no SQLite file at ${missing} (--sqlite); the CLI never creates one: give the file your servers use (--sqlite or SCANAUTH_SQLITE_FILE)`)
    for (const argv of [['grant', 'o6_dave', '--days', '3'], ['migrate'], ['purge']]) expectRefusal(await scanauth([...argv, '--sqlite', missing]), 1, /no SQLite file at/)
    expect(existsSync(join(backend.dir, 'elsewhere'))).toBe(false)

    // The examples' default path, relative to the working folder: absent here.
    const empty = mkdtempSync(join(tmpdir(), 'scanauth-cli-empty-'))
    try {
      const run = await scanauth(['user', 'o6_dave'], { cwd: empty })
      expect(expectRefusal(run, 1)).toContain(`no SQLite file at ${join(empty, 'data', 'scanauth.sqlite')} (default, SCANAUTH_SQLITE_FILE unset)`)
      expectRefusal(await scanauth(['user', 'o6_dave'], { cwd: empty, env: { SCANAUTH_SQLITE_FILE: 'x.sqlite' } }), 1, /no SQLite file at \S+x\.sqlite \(SCANAUTH_SQLITE_FILE\)/)
      expect(readdirSync(empty)).toEqual([])
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })

  it('uses ./data/scanauth.sqlite of the working folder by default, as the examples do', async () => {
    const out = await json(['user', 'o6_dave'], { cwd: backend.dir })
    expect(out.user.openid).toBe('o6_dave')
  })

  it('refuses a folder, a file that is not a database, an empty file and a database without the scanauth tables, and leaves each as it was', async () => {
    const other = join(backend.dir, 'other')
    mkdirSync(other)
    const text = join(other, 'notes.sqlite')
    writeFileSync(text, 'these are not the pages of a database\n'.repeat(200))
    const empty = join(other, 'empty.sqlite')
    writeFileSync(empty, '')
    const foreign = join(other, 'foreign.sqlite')
    const db = new Database(foreign)
    db.exec(`CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO invoices (total) VALUES (1990)`)
    db.close()
    const bytes = (path: string) => readFileSync(path).toString('hex')
    const before = { text: bytes(text), empty: bytes(empty), foreign: bytes(foreign), dump: sqliteSnapshot(foreign) }

    expectRefusal(await scanauth(['user', 'o6_dave', '--sqlite', other]), 1, new RegExp(`${other} \\(--sqlite\\) is a folder, not an SQLite file`))
    expectRefusal(await scanauth(['grant', 'o6_dave', '--days', '1', '--sqlite', text]), 1, /cannot open \S+notes\.sqlite \(--sqlite\) as an SQLite database: file is not a database/)
    expectRefusal(await scanauth(['migrate', '--sqlite', text]), 1, /file is not a database/)
    expectRefusal(await scanauth(['grant', 'o6_dave', '--days', '1', '--sqlite', empty]), 1, /empty\.sqlite \(--sqlite\) holds no scanauth tables: is it the store your servers use\? \(`scanauth migrate` creates the tables\)/)
    expectRefusal(await scanauth(['purge', '--sqlite', foreign]), 1, /foreign\.sqlite \(--sqlite\) holds no scanauth tables/)
    expect({ text: bytes(text), empty: bytes(empty), foreign: bytes(foreign), dump: sqliteSnapshot(foreign) }).toEqual(before)
    expect(readdirSync(other).sort()).toEqual(['empty.sqlite', 'foreign.sqlite', 'notes.sqlite'])
  })

  it('refuses a file of another schema version, naming what to do, and writes nothing', async () => {
    const copies = join(backend.dir, 'copies')
    mkdirSync(copies)
    // A consistent copy of the live file (the server keeps writing to its WAL).
    const older = join(copies, 'older.sqlite')
    const newer = join(copies, 'newer.sqlite')
    await (backend.serverStore as SqliteStore).database.backup(older)
    copyFileSync(older, newer)
    const edit = (file: string, sql: string) => {
      const db = new Database(file)
      db.exec(sql)
      db.close()
    }
    edit(older, `DELETE FROM scanauth_schema_migrations WHERE version = ${SCHEMA_VERSION}`)
    edit(newer, `INSERT INTO scanauth_schema_migrations (version, name, applied_at) VALUES (${SCHEMA_VERSION + 1}, 'from the future', 0)`)
    const before = { older: sqliteSnapshot(older), newer: sqliteSnapshot(newer) }
    expectRefusal(
      await scanauth(['user', 'o6_dave', '--sqlite', older]),
      1,
      new RegExp(`older\\.sqlite \\(--sqlite\\) is at schema version ${SCHEMA_VERSION - 1} and this CLI needs version ${SCHEMA_VERSION}: run \`scanauth migrate\``),
    )
    expectRefusal(await scanauth(['grant', 'o6_dave', '--days', '1', '--sqlite', newer]), 1, new RegExp(`is at schema version ${SCHEMA_VERSION + 1}, written by a newer release.*upgrade @scanauth/cli`))
    expectRefusal(await scanauth(['migrate', '--sqlite', newer]), 1, /written by a newer release/)
    expect({ older: sqliteSnapshot(older), newer: sqliteSnapshot(newer) }).toEqual(before)
  })

  it('migrate: creates the tables in an existing empty file, and says so; the commands then work on it', async () => {
    const file = join(backend.dir, 'fresh.sqlite')
    writeFileSync(file, '')
    expect(await json(['migrate', '--sqlite', file])).toEqual({ store: 'sqlite', from: 0, to: SCHEMA_VERSION, migrated: true })
    expect((await succeeds(['migrate', '--sqlite', file])).stdout).toBe(`sqlite ${file}: at schema version ${SCHEMA_VERSION}, nothing to migrate\n`)
    expectRefusal(await scanauth(['user', 'o6_dave', '--sqlite', file]), 1, /no user has the openid "o6_dave"/)
    expect((await json(['grant', 'o6_dave', '--days', '2', '--sqlite', file])).authorization).toMatchObject({ type: 'time', status: 'active' })
  })
})
