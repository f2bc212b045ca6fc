/**
 * PostgresStore benchmark: each operation through `createScanAuth` on a PostgresStore, beside raw
 * node-postgres statements on the same pool, at the same concurrency (32 calls in flight), in the
 * same run, against `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test), in a schema of
 * its own (made fresh, `store.migrate()`, dropped afterwards).
 *
 *   npx tsx --conditions=@scanauth/source bench/postgres.ts
 *   BENCH_PG_POOL=32 npx tsx --conditions=@scanauth/source bench/postgres.ts   # another pool size
 *
 * Baselines are the least work the operation needs on this schema, as named prepared statements
 * returning rows as arrays (the cheapest way node-postgres reads a row): a pending poll against one
 * point select of the scene by its unique key (`scene_str`, the index the poll uses); an authorized
 * poll against the same two round trips done raw (the scene, then the user with its live
 * authorizations and the scene's latest session in one select); a scan and a consume against a raw
 * read-and-update transaction on a checked-out client (`BEGIN`; `SELECT … FOR UPDATE` of one row by
 * primary key; `UPDATE` of it; `COMMIT`): four round trips and one commit; createScene against one
 * raw autocommit `INSERT` (the store's notification of a scene write, a statement of its own after
 * the commit, is counted in its statements: see `bench/results/postgres.md` for why it is not
 * inside the commit); the counter against the simplest upsert that counts, on a table
 * of its own (`bench/postgres-baselines.ts` has them all). Both sides share the pool (its size in
 * `POOL_SIZE`), so queueing for a connection is the same on both; 10 rounds of 250 ms per side.
 * Round trips per call come from a statement counter on the pool's client class
 * (`bench/postgres-pool.ts`). Then the rows of `bench/queue-length.ts` on the same store (one call
 * in flight): scan, authorized poll and consume for a user with 10,000 queued authorizations
 * against a user with one.
 *
 * Targets (issue #14): pending poll ≥ 0.8 of the raw point select; scan ≥ 0.5 of the raw
 * read-and-update transaction (the scan of a known user, as in the SQLite and Redis sections).
 * Issue 18: a payment notification handled (`bench/payments.ts`) ≥ 0.5 of a bare RSA-2048 verify +
 * AES-256-GCM decrypt of the same bytes, and ≥ 0.5 of the same cryptography plus one raw write
 * transaction of a granted payment on the same pool (`BEGIN`; `SELECT` of the order `FOR UPDATE`;
 * `INSERT` ×3; `UPDATE` of the order; `COMMIT`: `bench/payments-baselines.ts`); rounds of 150 ms,
 * so that the orders seeded last them.
 *
 * @module
 */
import { pathToFileURL } from 'node:url'
import type { ScanAuth } from '@scanauth/core'
import { PostgresStore } from '@scanauth/postgres'
import { measureConcurrentPair, roundTripTable, type ConcurrentWork, type RoundTripRow } from './concurrent'
import { markdownTable, row, type BenchRow } from './lib'
import { concurrentNotificationRows } from './payments'
import { postgresPaymentWrites } from './payments-baselines'
import { rawBaselines } from './postgres-baselines'
import { countingPool, DEFAULT_POOL_SIZE, dropSchema, freshBenchSchema, describeServer } from './postgres-pool'
import { benchQueueLength } from './queue-length'
import { benchService, seedSteadyState } from './seed'

/** Users with an authorized scene, a session and a large points authorization. */
const USERS = 200
/** Pending scenes polled in turn. */
const PENDING = 1000
/** Counter keys incremented in turn. */
const COUNTER_KEYS = 1000
/** Calls in flight at once, for operations and baselines alike (as in the Redis section). */
export const CONCURRENCY = 32
/**
 * Longer than the Redis section's 8 × 180 ms: a commit here waits for a WAL flush on a disk the
 * shared machine's other work also uses, so single rounds vary more.
 */
const ROUNDS = { rounds: 10, roundMs: 250 }
/** Connections in the pool: `BENCH_PG_POOL`, default 10 (the size docs/postgres.md suggests). */
export const POOL_SIZE = Number(process.env.BENCH_PG_POOL ?? DEFAULT_POOL_SIZE)

/** A row of this benchmark: round trips are statements sent (absent on the queue-length rows, one call in flight). */
export type PostgresBenchRow = BenchRow & Partial<Pick<RoundTripRow, 'roundTripsPerOp' | 'baselineRoundTripsPerOp'>>

/** Runs the PostgresStore benchmark (about a minute) in a schema of its own, dropped afterwards, and returns its rows. */
export async function benchPostgres(): Promise<PostgresBenchRow[]> {
  const { pool, statements } = countingPool(POOL_SIZE)
  const schema = freshBenchSchema()
  const s = `"${schema}"`
  const store = new PostgresStore({ pool, schema })
  try {
    await store.migrate()
    const { auth, clock } = benchService(store)
    const { openids, authorizedScenes, tokens } = await seedSteadyState(auth, USERS, clock.advance)
    const pending = await Promise.all(Array.from({ length: PENDING }, async (_, i) => (await auth.createScene({ deviceId: `pending-${i}` })).sceneStr))

    // What the baselines read and lock, looked up once.
    const ids = async (sql: string, values: unknown[] = []) => (await pool.query<[string]>({ text: sql, values, rowMode: 'array' })).rows.map((r) => r[0])
    const byScene = (column: string) => ids(`SELECT ${column} FROM ${s}.scanauth_scenes WHERE scene_str = ANY($1) ORDER BY array_position($1, scene_str)`, [authorizedScenes])
    const authorizedSceneIds = await byScene('id')
    const authorizedUserIds = await byScene('user_id')
    const raw = await rawBaselines(pool, schema, clock.now)

    const rows: PostgresBenchRow[] = []
    const pair = async (operation: string, work: ConcurrentWork, baselineName: string, baseline: ConcurrentWork, target?: number) => {
      const [measured, base] = await measureConcurrentPair(work, baseline, { concurrency: CONCURRENCY, roundTrips: statements, ...ROUNDS })
      const { roundTripsPerOp, ...figures } = measured
      const { roundTripsPerOp: baselineRoundTripsPerOp, ...baseFigures } = base
      rows.push({ ...row('postgres', operation, figures, { name: baselineName, ...baseFigures }, target), roundTripsPerOp, baselineRoundTripsPerOp })
    }
    const rawPointSelect: ConcurrentWork = { run: (i) => raw.sceneByStr(pending[i % PENDING] as string) }
    const rawSceneTx: ConcurrentWork = { run: raw.sceneTx }
    const rawTxName = 'raw read-and-update tx (BEGIN, SELECT … FOR UPDATE, UPDATE, COMMIT)'

    await pair('pending poll', { run: (i) => auth.getStatus(pending[i % PENDING] as string) }, 'raw point select (unique key)', rawPointSelect, 0.8)
    // The store's own share of a pending poll (the rest is getStatus in core).
    await pair('store.load({ sceneStr }) alone', { run: (i) => store.load({ sceneStr: pending[i % PENDING] as string }) }, 'raw point select (unique key)', rawPointSelect)
    await pair(
      'authorized poll',
      { run: (i) => auth.getStatus(authorizedScenes[i % USERS] as string) },
      'raw point select, then raw select of user + live authorizations + latest session',
      {
        run: async (i) => {
          await raw.sceneByStr(authorizedScenes[i % USERS] as string)
          await raw.userLiveAndLatestSession(authorizedUserIds[i % USERS] as string, authorizedSceneIds[i % USERS] as string)
        },
      },
    )
    // createScene fills the pool of fresh scenes that the scans then use, one scan per scene.
    const fresh: string[] = []
    const createScene = { run: async () => fresh.push((await auth.createScene({ deviceId: 'bench' })).sceneStr) }
    await pair('createScene', createScene, 'raw autocommit INSERT', { run: raw.insertScene })
    let scanned = 0
    await pair(
      'scan (known user)',
      {
        run: (i) => {
          scanned++
          return auth.handleScan({ sceneStr: fresh[i] as string, openid: openids[i % USERS] as string })
        },
        available: (i) => i < fresh.length,
      },
      rawTxName,
      rawSceneTx,
      0.5,
    )
    // Fresh scenes for the first scans of new users, made outside the measurement: as many as the
    // known users' scans took and a margin (a first scan writes more, so it is not faster).
    const unscanned = await makeScenes(auth, Math.ceil(scanned * 1.25))
    const tag = Date.now().toString(36)
    await pair(
      'scan (new user: first scan, free trial)',
      { run: (i) => auth.handleScan({ sceneStr: unscanned[i] as string, openid: `new-${tag}-${i}` }), available: (i) => i < unscanned.length },
      rawTxName,
      rawSceneTx,
    )
    await pair(
      'consume',
      { run: (i) => auth.consume({ sessionToken: tokens[i % USERS] as string }) },
      rawTxName,
      { run: raw.authorizationTx },
    )
    await pair(
      'counter increment (store.incrementCounter)',
      { run: (i) => store.incrementCounter(`rl:bench:${i % COUNTER_KEYS}`, clock.now() + 60_000, clock.now()) },
      'raw upsert (INSERT … ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count)',
      { run: (i) => raw.upsertCounter(`rl:bench:${i % COUNTER_KEYS}`) },
    )
    rows.push(
      ...(await concurrentNotificationRows('postgres', store, (count) => postgresPaymentWrites(pool, schema, count, clock.now()), {
        concurrency: CONCURRENCY,
        roundTrips: statements,
        orders: 1700,
        rawOrders: 8000,
        rounds: 10,
        roundMs: 150,
      })),
    )
    rows.push(...(await benchQueueLength('postgres', store)))
    return rows
  } finally {
    await store.close()
    await dropSchema(pool, schema)
    await pool.end()
  }
}

/** `count` pending scenes made through the service, {@link CONCURRENCY} at a time (not measured). */
async function makeScenes(auth: ScanAuth, count: number): Promise<string[]> {
  const made: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) made.push((await auth.createScene({ deviceId: 'bench' })).sceneStr)
    }),
  )
  return made
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const rows = await benchPostgres()
  console.log(markdownTable(rows))
  console.log(`\n${roundTripTable(rows.filter((r): r is RoundTripRow => r.roundTripsPerOp !== undefined))}`)
  console.log(
    `\n(${CONCURRENCY} calls in flight, a pool of ${POOL_SIZE}; ${((performance.now() - began) / 1000).toFixed(1)} s, ` +
      `Node ${process.version}, PostgreSQL ${await describeServer()})`,
  )
}
