/**
 * SqliteStore benchmark: each operation through `createScanAuth` on a SqliteStore, beside the raw
 * better-sqlite3 work it cannot do without, measured in the same run on the same file and
 * connection settings (WAL, synchronous FULL, busy_timeout, foreign_keys).
 *
 *   npx tsx --conditions=@scanauth/source bench/sqlite.ts
 *   BENCH_SQLITE_SYNCHRONOUS=normal npx tsx --conditions=@scanauth/source bench/sqlite.ts
 *
 * Baselines: a pending poll against one prepared point select by the unique key; an authorized
 * poll against the three raw selects it needs (scene, user with live authorizations, latest
 * session); a scan and a consume against one raw `BEGIN IMMEDIATE` read-and-update transaction;
 * the scan also against a raw transaction writing exactly the rows a scan must write (so the
 * store's own overhead shows apart from the work the schema demands); createScene against one
 * raw autocommit INSERT. Both sides run in the same sequential async loop
 * (one call in flight, every call awaited), so the loop's own cost is on both sides of the ratio.
 * Then the rows of `bench/queue-length.ts` on the same store: scan, authorized poll and consume for
 * a user with 10,000 queued authorizations against a user with one.
 *
 * Row "counter increment" (issue #12): `store.incrementCounter` (the rate limits' and the WeChat
 * replay records' primitive: one upsert that also restarts an expired counter) against the
 * simplest raw upsert that counts, on a table of its own with only a key and a count, over the same
 * 1,000 keys in turn. The service runs with its rate limits off, so the other rows measure what
 * they measured before (and a bench that creates thousands of scenes a second is not refused);
 * the counter row is their cost per limit.
 *
 * Rows "payment notification handled" (issue 18): `createWechatPayNotificationHandler` on this store
 * against a bare RSA-2048 verify + AES-256-GCM decrypt of the same bytes (`bench/payments.ts`), and
 * against the same cryptography plus one raw `BEGIN IMMEDIATE` transaction on the baselines'
 * connection writing what a granted payment must (`bench/payments-baselines.ts`).
 */
import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SqliteStore } from '@scanauth/sqlite'
import { markdownTable, measurePair, row, type BenchRow, type MeasureOptions } from './lib'
import { notificationRows } from './payments'
import { sqlitePaymentWrites } from './payments-baselines'
import { benchQueueLength } from './queue-length'
import { benchService, seedSteadyState } from './seed'

const DAY = 24 * 3600 * 1000
/** Users with an authorized scene, a session and a large points authorization. */
const USERS = 200
/** Pending scenes polled in turn. */
const PENDING = 1000
/** Counter keys incremented in turn. */
const COUNTER_KEYS = 1000

/** Options of {@link benchSqlite}. */
export interface BenchSqliteOptions extends MeasureOptions {
  /** `PRAGMA synchronous` for the store and the baselines alike. Default `'full'` (the store's default). */
  synchronous?: 'full' | 'normal'
}

/**
 * Runs the SqliteStore benchmark in a temporary folder (removed afterwards), about 30 s. Each
 * operation and its baseline are measured in alternating slices of the same run.
 */
export async function benchSqlite(options: BenchSqliteOptions = {}): Promise<BenchRow[]> {
  const { synchronous = 'full', ...rest } = options
  const measureOptions: MeasureOptions = { durationMs: 1500, warmupOps: 200, ...rest }
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-bench-sqlite-'))
  const filename = join(dir, 'bench.db')
  const store = new SqliteStore({ filename, synchronous })
  // The baselines' own connection, set up as the store sets up its own.
  const raw = new Database(filename)
  raw.pragma('busy_timeout = 5000')
  raw.pragma(`synchronous = ${synchronous.toUpperCase()}`)
  raw.pragma('foreign_keys = ON')
  try {
    const start = Date.parse('2026-01-01T00:00:00Z')
    const { auth, clock } = benchService(store, start)

    const { openids, authorizedScenes, tokens } = await seedSteadyState(auth, USERS, clock.advance)
    // The clock stands still from here on: the raw baselines write the same time as the service.
    const now = clock.now()
    const pending: string[] = []
    for (let i = 0; i < PENDING; i++) pending.push((await auth.createScene({ deviceId: `pending-${i}` })).sceneStr)

    // Baseline reads use raw mode (rows as arrays), the cheapest way better-sqlite3 returns a row.
    const rawSceneByStr = raw.prepare('SELECT * FROM scanauth_scenes WHERE scene_str = ?').raw()
    const rawUserWithLive = raw
      .prepare(`SELECT * FROM scanauth_users u LEFT JOIN scanauth_authorizations a
        ON a.user_id = u.id AND a.status IN ('pending', 'active') WHERE u.id = ? ORDER BY a.created_at, a.id`)
      .raw()
    const rawLatestSession = raw.prepare('SELECT * FROM scanauth_sessions WHERE scene_id = ? ORDER BY id DESC LIMIT 1').raw()
    const rawInsertScene = raw.prepare(`INSERT INTO scanauth_scenes (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version)
      VALUES (?, 'raw', 'pending', NULL, ?, ?, NULL, 1)`)
    const rawUpdateScene = raw.prepare(`UPDATE scanauth_scenes SET status = 'authorized', authorized_at = ?, version = version + 1 WHERE id = ?`)
    const rawAuthorization = raw.prepare('SELECT * FROM scanauth_authorizations WHERE id = ?').raw()
    const rawSpend = raw.prepare('UPDATE scanauth_authorizations SET remaining_points = remaining_points - 1, updated_at = ? WHERE id = ?')
    const rawTouchUser = raw.prepare('UPDATE scanauth_users SET last_seen_at = ?, version = version + 1 WHERE id = ?')
    const rawAuthorizeScene = raw.prepare(`UPDATE scanauth_scenes SET status = 'authorized', user_id = ?, authorized_at = ?, version = version + 1 WHERE id = ?`)
    const rawInsertSession = raw.prepare(`INSERT INTO scanauth_sessions (token, user_id, device_id, scene_id, created_at, expires_at) VALUES (?, ?, 'raw', ?, ?, ?)`)
    // The rows a scan of a known user must write, and nothing else: the scan's floor on this schema.
    const rawScanWritesTx = raw
      .transaction((sceneStr: string, userId: number) => {
        const sceneId = (rawSceneByStr.get(sceneStr) as [number])[0]
        rawTouchUser.run(now, userId)
        rawAuthorizeScene.run(userId, now, sceneId)
        rawInsertSession.run(randomBytes(32).toString('base64url'), userId, sceneId, now, now + DAY)
      })
      .immediate
    const rawScanTx = raw
      .transaction((sceneStr: string) => {
        const sceneId = (rawSceneByStr.get(sceneStr) as [number])[0]
        rawUpdateScene.run(now, sceneId)
      })
      .immediate
    const rawConsumeTx = raw
      .transaction((authorizationId: number) => {
        rawAuthorization.get(authorizationId)
        rawSpend.run(now, authorizationId)
      })
      .immediate
    const pointsAuthorizationIds = raw.prepare(`SELECT id FROM scanauth_authorizations WHERE type = 'points' ORDER BY id`).pluck().all() as number[]
    const sceneIds = raw.prepare('SELECT id FROM scanauth_scenes WHERE scene_str = ?').pluck()
    const authorizedSceneIds = authorizedScenes.map((s) => sceneIds.get(s) as number)
    const userIds = raw.prepare('SELECT user_id FROM scanauth_scenes WHERE scene_str = ?').pluck()
    const authorizedUserIds = authorizedScenes.map((s) => userIds.get(s) as number)
    const newSceneStr = () => `pc_${randomBytes(16).toString('hex')}`

    const rows: BenchRow[] = []
    type Work = Parameters<typeof measurePair<unknown, unknown>>[0]
    const pair = async (operation: string, work: Work, baselineName: string, baseline: Work, target?: number) => {
      const [measured, base] = await measurePair(work, baseline, measureOptions)
      rows.push(row('sqlite', operation, measured, { name: baselineName, ...base }, target))
    }

    await pair(
      'pending poll',
      { run: (_, i) => auth.getStatus(pending[i % PENDING] as string) },
      'raw point select (unique key)',
      { run: (_, i) => rawSceneByStr.get(pending[i % PENDING] as string) },
      0.5,
    )
    await pair(
      'authorized poll',
      { run: (_, i) => auth.getStatus(authorizedScenes[i % USERS] as string) },
      'raw 3 selects (scene, user+live, latest session)',
      {
        run: (_, i) => {
          const k = i % USERS
          rawSceneByStr.get(authorizedScenes[k] as string)
          rawUserWithLive.all(authorizedUserIds[k])
          rawLatestSession.get(authorizedSceneIds[k])
        },
      },
    )
    await pair(
      'scan',
      {
        setup: async () => (await auth.createScene({ deviceId: 'scan' })).sceneStr,
        run: (sceneStr, i) => auth.handleScan({ sceneStr: sceneStr as string, openid: openids[i % USERS] as string }),
      },
      'raw BEGIN IMMEDIATE read+update tx',
      {
        setup: () => {
          const sceneStr = newSceneStr()
          rawInsertScene.run(sceneStr, now, now + 300_000)
          return sceneStr
        },
        run: (sceneStr) => rawScanTx(sceneStr as string),
      },
      0.3,
    )
    await pair(
      'scan',
      {
        setup: async () => (await auth.createScene({ deviceId: 'scan' })).sceneStr,
        run: (sceneStr, i) => auth.handleScan({ sceneStr: sceneStr as string, openid: openids[i % USERS] as string }),
      },
      "raw tx with the scan's writes (user, scene, session)",
      {
        setup: () => {
          const sceneStr = newSceneStr()
          rawInsertScene.run(sceneStr, now, now + 300_000)
          return sceneStr
        },
        run: (sceneStr, i) => rawScanWritesTx(sceneStr as string, authorizedUserIds[i % USERS] as number),
      },
    )
    await pair(
      'createScene',
      { run: () => auth.createScene({ deviceId: 'bench' }) },
      'raw autocommit INSERT',
      { setup: newSceneStr, run: (sceneStr) => rawInsertScene.run(sceneStr as string, now, now + 300_000) },
    )
    await pair(
      'consume',
      { run: (_, i) => auth.consume({ sessionToken: tokens[i % USERS] as string }) },
      'raw BEGIN IMMEDIATE read+update tx',
      { run: (_, i) => rawConsumeTx(pointsAuthorizationIds[i % pointsAuthorizationIds.length] as number) },
    )
    raw.exec('CREATE TABLE bench_raw_counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID')
    const rawUpsert = raw
      .prepare<[string], number>('INSERT INTO bench_raw_counters (key, count) VALUES (?, 1) ON CONFLICT (key) DO UPDATE SET count = count + 1 RETURNING count')
      .pluck()
    await pair(
      'counter increment (store.incrementCounter)',
      { run: (_, i) => store.incrementCounter(`rl:bench:${i % COUNTER_KEYS}`, now + 60_000, now) },
      'raw upsert (INSERT … ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count)',
      { run: (_, i) => rawUpsert.get(`rl:bench:${i % COUNTER_KEYS}`) },
    )
    rows.push(...(await notificationRows('sqlite', store, (count) => sqlitePaymentWrites(raw, count, now, randomBytes(3).toString('hex')))))
    rows.push(...(await benchQueueLength('sqlite', store, measureOptions)))
    return rows
  } finally {
    raw.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  // BENCH_SQLITE_SYNCHRONOUS=normal measures both sides without a sync per commit.
  const rows = await benchSqlite({ synchronous: process.env.BENCH_SQLITE_SYNCHRONOUS === 'normal' ? 'normal' : 'full' })
  console.log(markdownTable(rows))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}, better-sqlite3 SQLite ${new Database(':memory:').prepare('SELECT sqlite_version()').pluck().get()})`)
}
