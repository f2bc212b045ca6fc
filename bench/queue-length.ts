/**
 * Cost against queue length (issue #11, docs/behaviour.md "Activation": the rules only ever need a
 * user's active authorizations and the head of its queue): scan, authorized poll and consume for a
 * user whose queue holds 10,000 pending authorizations, each beside the same operation for a user
 * whose queue holds one, measured in alternating slices of the same run on the same store. Works on
 * any Store: the queues are seeded through `store.commit` (one commit, ledger entries included).
 *
 *   npx tsx --conditions=@scanauth/source bench/queue-length.ts      # SQLite (a temp file) and memory
 *
 * `bench/sqlite.ts` appends these rows to its own. ratio = ops/s with 10,000 ÷ ops/s with 1; the
 * target "within 1.5× the time of a queue of 1" is a ratio ≥ 1 / 1.5 ≈ 0.67.
 *
 * @module
 */
import Database from 'better-sqlite3'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { MemoryStore, type ScanAuth, type Store } from '@scanauth/core'
import { type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'
import { SqliteStore } from '@scanauth/sqlite'
import { markdownTable, measurePair, row, type BenchRow, type MeasureOptions } from './lib'
import { benchService } from './seed'

const DAY = 24 * 3600 * 1000
/** The long queue. */
export const LONG_QUEUE = 10_000
/** "Within 1.5× the time" as a ratio of ops/s. */
const TARGET = Math.round((1 / 1.5) * 100) / 100

/** A user of the bench: its openid, an authorized scene of it, that scene's session token. */
interface BenchUser {
  openid: string
  sceneStr: string
  token: string
}

/**
 * Runs the three pairs on `store` (which may already hold other data: the bench's users, scenes
 * and openids are its own) and returns one row each, labelled with `storeName`.
 */
export async function benchQueueLength(storeName: string, store: Store, options: MeasureOptions = {}): Promise<BenchRow[]> {
  const measureOptions: MeasureOptions = { durationMs: 1500, warmupOps: 200, ...options }
  const { auth, clock } = benchService(store, Date.parse('2026-03-01T00:00:00Z'))
  const run = `${Date.now().toString(36)}`
  const users: BenchUser[] = []
  for (const queue of [1, LONG_QUEUE]) {
    const openid = `queue-${queue}-${run}`
    const { sceneStr } = await auth.createScene({ deviceId: `queue-${queue}` })
    await auth.handleScan({ sceneStr, openid })
    await auth.grant({ openid, type: 'points', points: 1_000_000_000, source: 'bench' })
    await seedQueue(store, openid, queue, clock.now())
    users.push({ openid, sceneStr, token: '' })
  }
  // The free trials end; the first poll activates the large points authorization (the head of the
  // queue stays pending behind it), and gives the session token.
  clock.advance(8 * DAY)
  for (const user of users) {
    const status = await auth.getStatus(user.sceneStr)
    if (status.status !== 'authorized') throw new Error(`bench setup: ${user.openid} is ${status.status}`)
    user.token = status.sessionToken
  }
  const [short, long] = users as [BenchUser, BenchUser]
  await expectQueue(auth, long.openid, LONG_QUEUE)
  await expectQueue(auth, short.openid, 1)

  const rows: BenchRow[] = []
  type Work = Parameters<typeof measurePair<unknown, unknown>>[0]
  const pair = async (operation: string, work: (user: BenchUser) => Work) => {
    const [measured, base] = await measurePair(work(long), work(short), measureOptions)
    rows.push(row(storeName, `queue of 10,000 vs 1: ${operation}`, measured, { name: `${operation}, queue of 1`, ...base }, TARGET))
  }
  await pair('scan', (user) => ({
    setup: async () => (await auth.createScene({ deviceId: 'queue-scan' })).sceneStr,
    run: (sceneStr) => auth.handleScan({ sceneStr: sceneStr as string, openid: user.openid }),
  }))
  await pair('authorized poll', (user) => ({ run: () => auth.getStatus(user.sceneStr) }))
  await pair('consume', (user) => ({ run: () => auth.consume({ sessionToken: user.token }) }))
  await expectQueue(auth, long.openid, LONG_QUEUE)
  return rows
}

/** Puts `length` pending one-point authorizations in `openid`'s queue in one commit, each with its grant entry. */
async function seedQueue(store: Store, openid: string, length: number, at: number): Promise<void> {
  const { user } = await store.load({ openid })
  if (user === null) throw new Error(`bench setup: no user ${openid}`)
  const pending: NewAuthorization = {
    type: 'points', status: 'pending', startAt: at, endAt: null, remainingPoints: 1, totalPoints: 1, source: 'bench', createdAt: at, updatedAt: at,
  }
  const grant = (i: number): NewLedgerEntry => ({
    userId: user.user.id, authorizationId: { inserted: i }, kind: 'grant', points: 1, remainingPoints: 1, at, source: 'bench', idempotencyKey: null, reason: null,
  })
  const result = await store.commit({
    user: {
      op: 'update',
      user: { ...user.user, version: user.user.version + 1 },
      expectedVersion: user.user.version,
      insertAuthorizations: Array.from({ length }, () => ({ ...pending })),
      updateAuthorizations: [],
    },
    ledger: Array.from({ length }, (_, i) => grant(i)),
  })
  if (!result.ok) throw new Error(`bench setup: seeding the queue of ${openid} conflicted (${result.conflict})`)
}

async function expectQueue(auth: ScanAuth, openid: string, length: number): Promise<void> {
  const info = await auth.getUser({ openid })
  if (info?.queue.length !== length || info.current === null) {
    throw new Error(`bench setup: ${openid} has a queue of ${info?.queue.length}, current ${info?.current?.type ?? 'none'}`)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-bench-queue-'))
  const sqlite = new SqliteStore({ filename: join(dir, 'bench.db') })
  try {
    const rows = [...(await benchQueueLength('sqlite', sqlite)), ...(await benchQueueLength('memory', new MemoryStore()))]
    console.log(markdownTable(rows))
  } finally {
    await sqlite.close()
    await rm(dir, { recursive: true, force: true })
  }
  const sqliteVersion = new Database(':memory:').prepare('SELECT sqlite_version()').pluck().get() as string
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}, SQLite ${sqliteVersion})`)
}
