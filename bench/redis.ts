/**
 * RedisStore benchmark: each operation through `createScanAuth` on a RedisStore, beside raw
 * ioredis commands on the same client, at the same concurrency (32 calls in flight), in the same
 * run, against `REDIS_URL` (default redis://127.0.0.1:6379), under a key prefix of its own that is
 * deleted afterwards (SCAN + DEL).
 *
 *   npx tsx --conditions=@scanauth/source bench/redis.ts
 *
 * Baselines: a pending poll against a raw GET of the same scene key; the operations that run
 * scripts against the same round trips done raw, in sequence: a raw EVALSHA of a one-line script
 * (`return redis.call('GET', KEYS[1])`) for each script call, a raw GET for each GET. Round trips per operation come from a
 * command counter on the client (its `sendCommand`), memory per pending scene from `MEMORY USAGE`
 * and from the server's `used_memory` growth (which also counts the expiry entry and the
 * short-lived commit receipt).
 *
 * Rows "queue of 10,000 vs 1" (issue #11): scan, authorized poll and consume for a user with
 * 10,000 queued authorizations against the same for a user with one, one call in flight, in
 * alternating slices; target: at most 1.5× the cost (a throughput ratio of at least 0.67). The
 * 10,000 are seeded by store commits of 1,000 each (with their ledger grant entries). Labels as
 * in `bench/queue-length.ts`, which measures the same on the other stores.
 *
 * Row "counter increment" (issue #12): `store.incrementCounter` (one EVALSHA of the counter script:
 * count, compare the stored expiry with `now`, restart or KEEPTTL) against a raw INCR, over the same
 * 1,000 keys in turn, one round trip each. The service runs with its rate limits off, so the other
 * rows measure what they measured before; the counter row is their cost per limit.
 *
 * Rows "payment notification handled" (issue 18): `createWechatPayNotificationHandler` on this store
 * against a bare RSA-2048 verify + AES-256-GCM decrypt of the same bytes (`bench/payments.ts`), and
 * against the same cryptography plus the raw writes of a granted payment on the same client (`HGETALL`
 * of the order, one `EVALSHA` writing authorization, ledger entry, idempotency key and order:
 * `bench/payments-baselines.ts`), 32 in flight; rounds of 100 ms, so that the orders seeded
 * beforehand (one per notification) last them.
 */
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { type ScanAuth, type Store } from '@scanauth/core'
import { type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'
import { RedisStore } from '@scanauth/redis'
import { measureConcurrentPair, roundTripTable, type ConcurrentWork, type RoundTripRow } from './concurrent'
import { markdownTable, measurePair as measureAlternating, row } from './lib'
import { concurrentNotificationRows } from './payments'
import { redisPaymentWrites } from './payments-baselines'
import { benchService, seedSteadyState } from './seed'

/** Users with an authorized scene, a session and a large points authorization. */
const USERS = 200
/** Pending scenes polled in turn. */
const PENDING = 1000
/** Counter keys incremented in turn. */
const COUNTER_KEYS = 1000
/** Calls in flight at once, for operations and baselines alike. */
const CONCURRENCY = 32
/** The long queue of the "queue of 10,000 vs 1" rows. */
const LONG_QUEUE = 10_000
/**
 * Throughput of the long-queue user against the short-queue one: at least 0.67, i.e. at most 1.5×
 * the cost (issue #11).
 */
const QUEUE_RATIO_TARGET = 0.67

/** A row of this benchmark: the common row plus the commands one call sent (a command is one round trip here). */
export type RedisBenchRow = RoundTripRow

/** Memory one pending scene costs. */
export interface PendingSceneMemory {
  /** `MEMORY USAGE` of a pending scene key (key, value, overhead), mean over a sample. */
  memoryUsageBytes: number
  /** `MEMORY USAGE` of a commit receipt (kept 120 s by default; one per createScene), mean over a sample. */
  receiptMemoryUsageBytes: number
  /** Growth of `used_memory` per scene created, expiry entry, receipt and hash-table growth included. */
  usedMemoryBytes: number
}

/** Measures a pair with {@link CONCURRENCY} calls in flight; round trips are the commands counted on the client. */
const measurePair = (work: ConcurrentWork, baseline: ConcurrentWork, commands: () => number) =>
  measureConcurrentPair(work, baseline, { concurrency: CONCURRENCY, roundTrips: commands })

/** Counts the commands `client` sends. */
function commandCounter(client: Redis): () => number {
  let sent = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++
    return send(...args)
  }) as Redis['sendCommand']
  return () => sent
}

/** Deletes every key under `prefix` (SCAN + DEL; the prefix has no glob characters). */
async function deletePrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await client.del(...keys)
    cursor = next
  } while (cursor !== '0')
}

const usedMemory = async (client: Redis) => Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1])

/** Runs the RedisStore benchmark (~20 s) and returns its rows; `memory` receives the per-scene memory. */
export async function benchRedis(options: { memory?: (m: PendingSceneMemory) => void } = {}): Promise<RedisBenchRow[]> {
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const prefix = `scanauth:bench:${randomBytes(4).toString('hex')}:{b}:`
  const commands = commandCounter(client)
  try {
    const store = new RedisStore({ client, keyPrefix: prefix })
    const { auth, clock } = benchService(store)

    const { openids, authorizedScenes, tokens } = await seedSteadyState(auth, USERS, clock.advance)

    // Memory: a batch of pending scenes, measured two ways.
    const memoryBefore = await usedMemory(client)
    const pending = await Promise.all(Array.from({ length: PENDING }, async (_, i) => (await auth.createScene({ deviceId: `pending-${i}` })).sceneStr))
    const memoryAfter = await usedMemory(client)
    const sample = await Promise.all(pending.slice(0, 100).map((s) => client.memory('USAGE', store.keys.scene(s)) as Promise<number>))
    const receipts: string[] = []
    for (let cursor = '0'; receipts.length < 100; ) {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}r:*`, 'COUNT', 1000)
      receipts.push(...keys)
      if ((cursor = next) === '0') break
    }
    const receiptBytes = await Promise.all(receipts.slice(0, 100).map((k) => client.memory('USAGE', k) as Promise<number>))
    const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length))
    options.memory?.({
      memoryUsageBytes: mean(sample),
      receiptMemoryUsageBytes: mean(receiptBytes),
      usedMemoryBytes: Math.round((memoryAfter - memoryBefore) / PENDING),
    })

    const pendingKeys = pending.map((s) => store.keys.scene(s))
    const rawSha = (await client.script('LOAD', "return redis.call('GET', KEYS[1])")) as string
    const rawGet: ConcurrentWork = { run: (i) => client.get(pendingKeys[i % PENDING] as string) }
    const evalsha = (i: number) => client.evalsha(rawSha, 1, pendingKeys[i % PENDING] as string)
    const rawEvalsha: ConcurrentWork = { run: evalsha }
    // The same round trips as an operation, each a raw command with a trivial payload, in sequence.
    const rawSequence = (...steps: Array<(i: number) => Promise<unknown>>): ConcurrentWork => ({
      run: async (i) => {
        for (const step of steps) await step(i)
      },
    })
    const get = (i: number) => client.get(pendingKeys[i % PENDING] as string)

    const rows: RedisBenchRow[] = []
    const pair = async (operation: string, work: ConcurrentWork, baselineName: string, baseline: ConcurrentWork, target?: number) => {
      const [measured, base] = await measurePair(work, baseline, commands)
      const { roundTripsPerOp, ...figures } = measured
      const { roundTripsPerOp: baselineRoundTripsPerOp, ...baseFigures } = base
      rows.push({ ...row('redis', operation, figures, { name: baselineName, ...baseFigures }, target), roundTripsPerOp, baselineRoundTripsPerOp })
    }

    await pair('pending poll', { run: (i) => auth.getStatus(pending[i % PENDING] as string) }, 'raw GET', rawGet, 0.8)
    // The store's own share of a pending poll (the rest is createScanAuth's per-call work).
    await pair('store.load({ sceneStr }) alone', { run: (i) => store.load({ sceneStr: pending[i % PENDING] as string }) }, 'raw GET', rawGet)
    await pair(
      'authorized poll',
      { run: (i) => auth.getStatus(authorizedScenes[i % USERS] as string) },
      'raw GET, then raw EVALSHA',
      rawSequence(get, evalsha),
    )
    // createScene fills the pool of fresh scenes that the scans then use, one scan per scene.
    const fresh: string[] = []
    await pair(
      'createScene (constant-url QR provider)',
      { run: async () => fresh.push((await auth.createScene({ deviceId: 'bench' })).sceneStr) },
      'raw EVALSHA',
      rawEvalsha,
    )
    await pair(
      'scan',
      { run: (i) => auth.handleScan({ sceneStr: fresh[i] as string, openid: openids[i % USERS] as string }), available: (i) => i < fresh.length },
      'raw EVALSHA, twice in sequence',
      rawSequence(evalsha, evalsha),
    )
    await pair(
      'consume',
      { run: (i) => auth.consume({ sessionToken: tokens[i % USERS] as string }) },
      'raw GET, then EVALSHA twice',
      rawSequence(get, evalsha, evalsha),
    )
    await pair(
      'counter increment (store.incrementCounter)',
      { run: (i) => store.incrementCounter(`rl:bench:${i % COUNTER_KEYS}`, clock.now() + 60_000, clock.now()) },
      'raw INCR',
      { run: (i) => client.incr(`${prefix}raw-counter:${i % COUNTER_KEYS}`) },
    )
    rows.push(
      ...(await concurrentNotificationRows('redis', store, (count) => redisPaymentWrites(client, prefix, count, clock.now()), {
        concurrency: CONCURRENCY,
        roundTrips: commands,
        orders: 3000,
        rawOrders: 20_000,
        rounds: 8,
        roundMs: 100,
      })),
    )
    rows.push(...(await queueRows(auth, store, commands, clock.now)))
    return rows
  } finally {
    await deletePrefix(client, prefix)
    await client.quit()
  }
}

/** What a queue-length row drives for one user: its openid, an authorized scene, a session token. */
interface QueueUser {
  openid: string
  sceneStr: string
  token: string
}

/**
 * A user whose points are active and whose queue holds `queued` pending authorizations: the free
 * trial of its first scan, then `queued − 1` point grants committed 1,000 at a time.
 */
async function userWithQueue(auth: ScanAuth, store: Store, openid: string, queued: number, now: () => number): Promise<QueueUser> {
  await auth.grant({ openid, type: 'points', points: 1_000_000_000, source: 'bench' })
  const { sceneStr } = await auth.createScene({ deviceId: openid })
  await auth.handleScan({ sceneStr, openid }) // the trial queues behind the active points
  for (let left = queued - 1; left > 0; left -= 1000) {
    const { user } = await store.load({ openid })
    if (user === null) throw new Error(`bench setup: no user ${openid}`)
    const at = now()
    const pending: NewAuthorization = { type: 'points', status: 'pending', startAt: at, endAt: null, remainingPoints: 1, totalPoints: 1, source: 'bench', createdAt: at, updatedAt: at }
    const count = Math.min(1000, left)
    const ledger: NewLedgerEntry[] = Array.from({ length: count }, (_, i) => ({
      userId: user.user.id,
      authorizationId: { inserted: i },
      kind: 'grant',
      points: 1,
      remainingPoints: 1,
      at,
      source: 'bench',
      idempotencyKey: null,
      reason: null,
    }))
    const result = await store.commit({
      user: { op: 'update', user: { ...user.user, version: user.user.version + 1 }, expectedVersion: user.user.version, insertAuthorizations: Array(count).fill(pending), updateAuthorizations: [] },
      ledger,
    })
    if (!result.ok) throw new Error(`bench setup: seeding ${openid} conflicted`)
  }
  const status = await auth.getStatus(sceneStr)
  if (status.status !== 'authorized') throw new Error(`bench setup: ${openid} is ${status.status}`)
  const queue = (await auth.getUser({ openid }))?.queue.length
  if (queue !== queued) throw new Error(`bench setup: ${openid} has ${queue} queued, not ${queued}`)
  return { openid, sceneStr, token: status.sessionToken }
}

/**
 * The "queue of 10,000 vs 1" rows: scan, authorized poll and consume of a user with
 * {@link LONG_QUEUE} queued authorizations, against the same for a user with one.
 */
async function queueRows(auth: ScanAuth, store: Store, commands: () => number, now: () => number): Promise<RedisBenchRow[]> {
  const tag = randomBytes(3).toString('hex')
  const short = await userWithQueue(auth, store, `queue-1-${tag}`, 1, now)
  const long = await userWithQueue(auth, store, `queue-${LONG_QUEUE}-${tag}`, LONG_QUEUE, now)
  type Op = { name: string; run: (user: QueueUser, scene: string) => Promise<unknown>; freshScene?: true }
  const ops: Op[] = [
    { name: 'scan', run: (user, scene) => auth.handleScan({ sceneStr: scene, openid: user.openid }), freshScene: true },
    { name: 'authorized poll', run: (user) => auth.getStatus(user.sceneStr) },
    { name: 'consume', run: (user) => auth.consume({ sessionToken: user.token }) },
  ]
  const rows: RedisBenchRow[] = []
  for (const op of ops) {
    // A scan needs a scene nobody scanned: made in the untimed setup of each call.
    const side = (user: QueueUser) => ({
      setup: async () => (op.freshScene ? (await auth.createScene({ deviceId: 'bench' })).sceneStr : user.sceneStr),
      run: (scene: string) => op.run(user, scene),
    })
    const [measured, base] = await measureAlternating(side(long), side(short), { warmupOps: 100, durationMs: 2000 })
    const trips = async (user: QueueUser) => {
      const scene = await side(user).setup()
      const before = commands()
      await op.run(user, scene)
      return commands() - before
    }
    rows.push({
      ...row('redis', `queue of ${LONG_QUEUE.toLocaleString('en-US')} vs 1: ${op.name}`, measured, { name: `${op.name}, queue of 1`, ...base }, QUEUE_RATIO_TARGET),
      roundTripsPerOp: await trips(long),
      baselineRoundTripsPerOp: await trips(short),
    })
  }
  return rows
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  let memory: PendingSceneMemory | undefined
  const rows = await benchRedis({ memory: (m) => (memory = m) })
  const info = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const version = /redis_version:(\S+)/.exec(await info.info('server'))?.[1]
  await info.quit()
  console.log(markdownTable(rows))
  console.log(`\n${roundTripTable(rows)}`)
  if (memory) {
    console.log(
      `\nMemory per pending scene: ${memory.memoryUsageBytes} bytes (MEMORY USAGE of the scene key, mean of 100); ` +
        `its commit receipt ${memory.receiptMemoryUsageBytes} bytes for 120 s; ` +
        `${memory.usedMemoryBytes} bytes of used_memory growth per scene created (expiry entries, receipt, hash-table growth included)`,
    )
  }
  console.log(`\n(${CONCURRENCY} calls in flight; ${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}, Redis ${version})`)
}
