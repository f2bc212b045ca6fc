/**
 * A worker process of the multi-process tests: one `createScanAuth` over its own SqliteStore on
 * the shared file, driven by the parent through IPC (see `protocol.ts`). Started with
 * `node --import tsx --conditions=@scanauth/source load-worker.ts <filename> <index>`.
 */
import { createScanAuth, type Store } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { emptyReport, openOrder, SERVICE_SETTINGS, type Command, type Reply } from './protocol'

/** Operations each worker keeps in flight at once, so its own calls interleave too. */
const LANES = 4

const [filename, indexText] = process.argv.slice(2)
if (filename === undefined || indexText === undefined) throw new Error('usage: load-worker.ts <filename> <index>')
const index = Number(indexText)

const sqlite = new SqliteStore({ filename })
let report = emptyReport()
/** Counts commits and conflicts on the way through; everything else goes straight to SqliteStore. */
const store: Store = {
  load: (query) => sqlite.load(query),
  listLedger: (query) => sqlite.listLedger(query),
  endSessions: (selector, at) => sqlite.endSessions(selector, at),
  watchScenes: (listener) => sqlite.watchScenes(listener),
  incrementCounter: (key, expiresAt, at) => sqlite.incrementCounter(key, expiresAt, at),
  deleteCounter: (key) => sqlite.deleteCounter(key),
  async commit(changes) {
    const result = await sqlite.commit(changes)
    report.commits++
    if (!result.ok) report.conflicts++
    return result
  },
}
let now = 0
const auth = createScanAuth({ store, qr: { createQr: async () => ({ url: 'https://qr.example.test/x' }) }, now: () => now, ...SERVICE_SETTINGS })
const random = mulberry32(0x5ca9 + index)
let stopRequested = false

const send = (reply: Reply) => process.send?.(reply)

process.on('message', (command: Command) => {
  handle(command).catch((error: unknown) => send({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }))
})
send({ kind: 'ready' })

async function handle(command: Command): Promise<void> {
  if ('now' in command) now = command.now
  switch (command.kind) {
    case 'scan':
      return phase(command.tasks, scanAndPoll)
    case 'grant':
      return phase(command.tasks, grantPoints)
    case 'consume':
      return phase(command.tokens, consumeOne)
    case 'grant-keyed':
      return phase(Array.from({ length: command.count }, () => command), grantKeyed)
    case 'consume-revoke': {
      // The revocation goes in at its place in this worker's shuffled list, so LANES - 1 consumes are in flight around it.
      const tokens: Array<string | null> = shuffle(command.tokens)
      tokens.splice(command.revokeAfter, 0, null)
      return phase(tokens, (token) => (token === null ? revokeOne(command) : consumeOne(token)), { shuffle: false })
    }
    case 'count':
      report = emptyReport()
      for (let i = 0; i < command.count; i++) await countOnce(command)
      send({ kind: 'done', report })
      return
    case 'orders':
      report = emptyReport()
      await orders(command)
      send({ kind: 'done', report })
      return
    case 'loop':
      report = emptyReport()
      await loop(command)
      send({ kind: 'done', report })
      return
    case 'stop':
      stopRequested = true
      return
    case 'exit':
      await sqlite.close()
      process.disconnect()
      return
  }
}

/** Runs `work` over every item, in this worker's own shuffled order (unless told not to), with LANES in flight; then reports. */
async function phase<T>(tasks: T[], work: (item: T) => Promise<void>, options = { shuffle: true }): Promise<void> {
  const items = options.shuffle ? shuffle(tasks) : tasks
  report = emptyReport()
  let next = 0
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next < items.length) await work(items[next++] as T)
    }),
  )
  send({ kind: 'done', report })
}

async function scanAndPoll({ sceneStr, openid }: { sceneStr: string; openid: string }): Promise<void> {
  const result = await auth.handleScan({ sceneStr, openid })
  report.scans++
  // The workers' service runs without `confirm: 'link'`, so a scan never stops at `scanned`.
  if (result.result === 'scanned') throw new Error(`scan of ${sceneStr} stopped at scanned without confirm: 'link'`)
  if (result.result === 'invalid') report.invalid++
  else report.processed.push({ sceneStr, openid, userId: result.userId })
  await poll(sceneStr)
}

async function poll(sceneStr: string): Promise<void> {
  await auth.getStatus(sceneStr)
  report.polls++
}

async function grantPoints({ openid, points }: { openid: string; points: number }): Promise<void> {
  await auth.grant({ openid, type: 'points', points, source: 'purchase' })
  report.grants++
  report.pointsGranted += points
}

async function grantKeyed({ openid, points, key }: Extract<Command, { kind: 'grant-keyed' }>): Promise<void> {
  const authorization = await auth.grant({ openid, type: 'points', points, source: 'purchase', idempotencyKey: key })
  report.grants++
  report.authorizationIds.push(authorization.id)
}

async function revokeOne({ authorizationId, reason }: Extract<Command, { kind: 'consume-revoke' }>): Promise<void> {
  const authorization = await auth.revokeAuthorization({ authorizationId, reason })
  if (authorization.status !== 'revoked') throw new Error(`revokeAuthorization answered status ${authorization.status}`)
  report.revokes++
}

async function countOnce({ key, expiresAt, now: at }: Extract<Command, { kind: 'count' }>): Promise<void> {
  report.counterValues.push(await store.incrementCounter(key, expiresAt, at))
  // An increment holds the write lock only for its own statement, but a process that found it
  // taken sleeps in SQLite's busy handler while this one takes it again at once: a short random
  // pause between increments (one at a time, no lanes) lets the processes take turns.
  await new Promise<void>((resolve) => setTimeout(resolve, random() * 2))
}

/** The `orders` phase: the raced inserts, then the read-and-update loop on one order. */
async function orders({ insert, outTradeNo, bumps, now: at }: Extract<Command, { kind: 'orders' }>): Promise<void> {
  const pause = () => new Promise<void>((resolve) => setTimeout(resolve, random() * 2))
  for (const no of insert) {
    if (await sqlite.saveOrder({ op: 'insert', order: openOrder(no, at, index) })) report.ordersInserted.push(no)
    await pause()
  }
  for (let i = 0; i < bumps; i++) {
    const stored = await sqlite.loadOrder(outTradeNo)
    if (stored === null) throw new Error(`order ${outTradeNo} is missing`)
    const version = stored.version + 1
    const next = { ...stored, transactionId: `w${index}-v${version}`, updatedAt: at, version }
    if (await sqlite.saveOrder({ op: 'update', order: next, expectedVersion: stored.version })) report.orderVersionsWon.push(version)
    await pause()
  }
}

async function consumeOne(sessionToken: string): Promise<void> {
  const result = await auth.consume({ sessionToken })
  report.consumes[result.status]++
}

/** The crash test's endless mix of every operation, until `stop`. */
async function loop(command: Extract<Command, { kind: 'loop' }>): Promise<void> {
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T
  let ops = 0
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (!stopRequested) {
        const roll = random()
        if (roll < 0.3) await scanAndPoll({ sceneStr: pick(command.sharedScenes), openid: pick(command.sharedOpenids) })
        else if (roll < 0.4) await poll(pick(command.sharedScenes))
        else if (roll < 0.55) {
          await grantPoints({ openid: pick(command.ownOpenids), points: 3 })
          report.ownPointsGranted += 3
        } else if (roll < 0.6) await grantPoints({ openid: pick(command.sharedOpenids), points: 2 })
        else await consumeOne(pick(command.ownTokens))
        if (++ops % command.progressEvery === 0) send({ kind: 'progress', count: ops })
        // The store answers synchronously, so without this the lanes would chain microtasks forever
        // and never let the event loop read the parent's `stop`.
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
    }),
  )
}

function shuffle<T>(items: T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

/** A small seeded generator, so each worker's order differs but a run can be repeated. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
