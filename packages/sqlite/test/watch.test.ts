// Change notification on SQLite in one process (Store.watchScenes, docs/behaviour.md B-wait-4;
// docs/sqlite.md, "Waiting for a scan"): the change log the commits write, what a look at the file
// costs (the statements, read through better-sqlite3's `verbose` hook on the store's connection),
// the timer's lifetime, pruning. Other processes: watch-multiprocess.test.ts; the behaviour every
// store shares: testkit's contract suite (contract.test.ts).
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { SqliteStore } from '@scanauth/sqlite'
import { service, useTempFile } from './support/fixture'
import { eventually, told } from '@scanauth/testkit'

const fixture = useTempFile()

/** A store on the test's file over a connection of our own that records every statement it runs. */
function loggedStore(options: { changePollMs?: number } = {}): { store: SqliteStore; log: string[] } {
  const log: string[] = []
  const database = fixture.track(new Database(fixture.temp.filename, { verbose: (sql) => log.push(String(sql).replace(/\s+/g, ' ').trim()) }))
  const store = fixture.track(new SqliteStore({ database, ...options }))
  return { store, log }
}

const isLook = (sql: string) => sql === 'PRAGMA data_version'
const isLogRead = (sql: string) => sql.startsWith('SELECT id, scene_str FROM scanauth_scene_changes')
const isLogInsert = (sql: string) => sql.startsWith('INSERT INTO scanauth_scene_changes')

describe('the change log', () => {
  it('gets one row per scene write, in the commit: creation, scan, expiry; none for a poll or a grant', async () => {
    const store = fixture.openStore()
    const { auth, clock } = service(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.getStatus(sceneStr)
    await auth.handleScan({ sceneStr, openid: 'alice' })
    await auth.grant({ openid: 'alice', type: 'points', points: 3, source: 'purchase' })
    const late = await auth.createScene({ deviceId: 'tv' })
    clock.advance(3_600_000)
    expect(await auth.getStatus(late.sceneStr)).toEqual({ status: 'expired' })
    const rows = fixture.rawDb().prepare('SELECT id, scene_str AS sceneStr FROM scanauth_scene_changes ORDER BY id').all()
    expect(rows).toEqual([
      { id: 1, sceneStr },
      { id: 2, sceneStr },
      { id: 3, sceneStr: late.sceneStr },
      { id: 4, sceneStr: late.sceneStr },
    ])
  })

  it('adds one INSERT to each commit that writes a scene and nothing else; a pending poll stays one SELECT', async () => {
    const { store, log } = loggedStore()
    const { auth, clock } = service(store)
    const warm = await auth.createScene({ deviceId: 'warm-up' })
    await auth.handleScan({ sceneStr: warm.sceneStr, openid: 'warm' })
    const statements = async (run: () => Promise<unknown>) => {
      log.length = 0
      await run()
      return { all: log.length, logInserts: log.filter(isLogInsert).length }
    }
    // The counts before the change log (the previous release), plus one INSERT where a scene is written.
    // createScene also counts the device and the daily QR budget first: two counter upserts (B-rate-1).
    let sceneStr = ''
    expect(await statements(async () => ({ sceneStr } = await auth.createScene({ deviceId: 'tv' })))).toEqual({ all: 4 + 2 + 1, logInserts: 1 })
    expect(await statements(() => auth.getStatus(sceneStr))).toEqual({ all: 1, logInserts: 0 })
    expect(await statements(() => auth.handleScan({ sceneStr, openid: 'alice' }))).toEqual({ all: 12 + 1, logInserts: 1 })
    expect(await statements(() => auth.getStatus(sceneStr))).toEqual({ all: 3, logInserts: 0 })
    const second = await auth.createScene({ deviceId: 'tv' })
    expect(await statements(() => auth.handleScan({ sceneStr: second.sceneStr, openid: 'alice' }))).toEqual({ all: 9 + 1, logInserts: 1 })
    expect(await statements(() => auth.grant({ openid: 'alice', type: 'points', points: 3, source: 'purchase' }))).toEqual({ all: 7, logInserts: 0 })
    const third = await auth.createScene({ deviceId: 'tv' })
    clock.advance(3_600_000)
    expect(await statements(() => auth.getStatus(third.sceneStr))).toEqual({ all: 5 + 1, logInserts: 1 })
    // And with someone watching, a pending poll is still that one SELECT (the timer's looks are
    // its own statements, not the poll's).
    const stop = store.watchScenes(() => undefined)
    try {
      const pending = await auth.createScene({ deviceId: 'tv' })
      log.length = 0
      await auth.getStatus(pending.sceneStr)
      expect(log.filter((sql) => !isLook(sql))).toEqual([expect.stringMatching(/^SELECT .* FROM scanauth_scenes WHERE scene_str = /)])
    } finally {
      stop()
    }
  })

  it('keeps the newest 10,000 rows: every 1,000th row deletes those 10,000 behind it', async () => {
    const store = fixture.openStore()
    const { auth } = service(store)
    const raw = fixture.rawDb()
    // 10,998 rows written straight to the table, so that the store's next two commits are rows 10,999 and 11,000.
    raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10998)
      INSERT INTO scanauth_scene_changes (id, scene_str) SELECT i, 'old' FROM n`)
    const span = () => raw.prepare('SELECT MIN(id) AS first, MAX(id) AS last, COUNT(*) AS rows FROM scanauth_scene_changes').get()
    await auth.createScene({ deviceId: 'tv' }) // row 10,999: no pruning
    expect(span()).toEqual({ first: 1, last: 10_999, rows: 10_999 })
    await auth.createScene({ deviceId: 'tv' }) // row 11,000: rows 1 to 1,000 go
    expect(span()).toEqual({ first: 1_001, last: 11_000, rows: 10_000 })
  })
})

describe('watchScenes', () => {
  it('tells of this store’s commits at once and of another connection’s at its next look', async () => {
    const store = fixture.openStore()
    const other = fixture.openStore()
    const { auth } = service(store)
    const { auth: otherAuth } = service(other)
    const heard: string[] = []
    const stop = store.watchScenes((sceneStr) => heard.push(sceneStr))
    try {
      const own = await auth.createScene({ deviceId: 'tv' })
      await auth.handleScan({ sceneStr: own.sceneStr, openid: 'alice' })
      // Told in a microtask after the commit returned: no timer involved.
      await Promise.resolve()
      expect(heard).toEqual([own.sceneStr, own.sceneStr])

      const theirs = await otherAuth.createScene({ deviceId: 'tv' })
      heard.length = 0
      await otherAuth.handleScan({ sceneStr: theirs.sceneStr, openid: 'bob' })
      await told(heard, theirs.sceneStr)
    } finally {
      stop()
    }
  })

  it('looks at the file with PRAGMA data_version alone while nothing changes, and reads the log once something did', async () => {
    const { store, log } = loggedStore({ changePollMs: 5 })
    const other = fixture.openStore()
    const { auth: otherAuth } = service(other)
    const { sceneStr } = await otherAuth.createScene({ deviceId: 'tv' })
    const heard: string[] = []
    log.length = 0
    const stop = store.watchScenes((s) => heard.push(s))
    try {
      // Starting: where the log ends, and the file's data_version.
      expect(log).toEqual(['PRAGMA data_version', 'SELECT COALESCE(MAX(id), 0) FROM scanauth_scene_changes'])
      log.length = 0
      await eventually('five looks', () => log.length >= 5)
      expect(log.filter((sql) => !isLook(sql))).toEqual([])

      await otherAuth.handleScan({ sceneStr, openid: 'alice' })
      await told(heard, sceneStr)
      expect(log.filter(isLogRead)).toHaveLength(1)
      expect(heard).toEqual([sceneStr])
    } finally {
      stop()
    }
  })

  it('runs its timer only while someone listens: the last listener leaving, or close(), stops it', async () => {
    const { store, log } = loggedStore({ changePollMs: 5 })
    const { store: witness, log: witnessLog } = loggedStore({ changePollMs: 5 })
    expect(store.watching).toBe(false)
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = timers()
    const stopFirst = store.watchScenes(() => undefined)
    const stopSecond = store.watchScenes(() => undefined)
    // Unref'd: the timer never keeps the process alive on its own.
    expect(timers()).toBe(before)
    expect(store.watching).toBe(true)
    stopFirst()
    stopFirst() // a second call changes nothing
    expect(store.watching).toBe(true)
    stopSecond()
    expect(store.watching).toBe(false)

    // No look happens any more: while another store makes five, this one makes none.
    log.length = 0
    const stopWitness = witness.watchScenes(() => undefined)
    await eventually('five looks by another store', () => witnessLog.filter(isLook).length >= 5)
    stopWitness()
    expect(log).toEqual([])

    store.watchScenes(() => undefined)
    expect(store.watching).toBe(true)
    await store.close()
    expect(store.watching).toBe(false)
    expect(() => store.watchScenes(() => undefined)).toThrow(expect.objectContaining({ code: 'closed' }))
  })

  it('stops looking when the application closes its own database under the store', async () => {
    const { store } = loggedStore({ changePollMs: 5 })
    store.watchScenes(() => undefined)
    store.database.close()
    await eventually('the timer to stop', () => !store.watching)
  })

  it('tells of its own commits on an in-memory database, without a timer (no other connection can write it)', async () => {
    const store = fixture.track(new SqliteStore({ filename: ':memory:' }))
    const { auth } = service(store)
    const heard: string[] = []
    const stop = store.watchScenes((s) => heard.push(s))
    expect(store.watching).toBe(false)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 10_000 })
    await auth.handleScan({ sceneStr, openid: 'alice' })
    expect(await waiting).toMatchObject({ status: 'authorized' })
    expect(heard).toContain(sceneStr)
    stop()
  })
})
