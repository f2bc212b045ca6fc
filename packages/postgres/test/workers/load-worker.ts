/**
 * A worker process of the multi-process tests: its own `pg.Pool` (tagged with the test's
 * `application_name`), its own PostgresStore on the test's schema and its own `createScanAuth`,
 * driven by the parent over IPC (`protocol.ts`). Forked by `../support/fleet.ts` with
 * `node --import tsx --conditions=@scanauth/source load-worker.ts`, configured by its environment.
 *
 * An operation that throws is counted in the report and the worker goes on: when the crash test
 * terminates a backend under it, the worker must survive and keep working on fresh connections.
 */
import pg from 'pg'
import { createScanAuth, ScanAuthError } from '@scanauth/core'
import { type ChangeSet, type CommitResult } from '@scanauth/core/store'
import { PostgresStore } from '@scanauth/postgres'
import { emptyReport, SERVICE_SETTINGS, type Command, type KeyedGrant, type Reply, type Report, type WorkerEnvironment } from './protocol'

/** A PostgresStore that counts its commits and their conflicts on the way through. */
class CountingStore extends PostgresStore {
  override async commit(changes: ChangeSet): Promise<CommitResult> {
    const result = await super.commit(changes)
    report.commits++
    if (!result.ok) report.conflicts++
    return result
  }
}

const env = process.env as Partial<WorkerEnvironment>
const { SCANAUTH_DATABASE_URL: url, SCANAUTH_SCHEMA: schema, SCANAUTH_APPLICATION_NAME: applicationName } = env
if (url === undefined || schema === undefined || applicationName === undefined) throw new Error('load-worker: environment incomplete')

let report: Report = emptyReport()
let now = 0
let stopRequested = false
/** The loop's operations that returned, and every how many of them the parent hears of it. */
let succeeded = 0
let progressEvery = 1
const workerIndex = Number(env.SCANAUTH_WORKER_INDEX ?? 0)
const random = xorshift32(0x9e3779b9 + workerIndex)
let scenesCreated = 0

const pool = new pg.Pool({ connectionString: url, max: 4, application_name: applicationName })
// A backend terminated while its client sat idle in the pool surfaces here; without a listener the
// pool's 'error' event would end the process.
pool.on('error', () => report.idleClientErrors++)
const store = new CountingStore({ pool, schema })
const auth = createScanAuth({ store, qr: { createQr: async () => ({ url: 'https://qr.example.test/x' }) }, now: () => now, ...SERVICE_SETTINGS })

const send = (reply: Reply) => process.send?.(reply)

process.on('message', (command: Command) => {
  handle(command).catch((error: unknown) => send({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }))
})
// Every worker of a fleet migrates the new schema at the same moment: the advisory lock lets one do it.
await store.migrate()
send({ kind: 'ready' })

async function handle(command: Command): Promise<void> {
  if ('now' in command) now = command.now
  switch (command.kind) {
    case 'scan':
      return phase(command.lanes, command.tasks, scan)
    case 'grant':
      return phase(command.lanes, command.tasks, ({ openid, points, key }) => (key === undefined ? grantUnkeyed(openid, points) : grantKeyed({ key, openid, points })))
    case 'consume':
      return phase(command.lanes, command.tasks, ({ token, key }) => consume(token, command.points, key))
    case 'consume-revoke': {
      // The revocation takes its place in the list: the lane that reaches it revokes while the
      // other lanes go on consuming.
      const items: Array<string | null> = [...command.tokens]
      items.splice(command.revokeAfter, 0, null)
      return phase(command.lanes, items, (token) => (token === null ? revoke(command.authorizationId, command.reason) : consume(token, 1)))
    }
    case 'loop':
      progressEvery = command.progressEvery
      return phase(command.lanes, null, () => loopOnce(command))
    case 'stop':
      stopRequested = true
      return
    case 'exit':
      await store.close()
      await pool.end()
      process.disconnect()
      return
  }
}

/**
 * Runs `work` over `items` in order with `lanes` in flight, or (items `null`) again and again until
 * `stop`; then reports. Each item is one operation: what it throws is counted, never fatal.
 */
async function phase<T>(lanes: number, items: T[] | null, work: (item: T) => Promise<void>): Promise<void> {
  report = emptyReport()
  stopRequested = false
  let next = 0
  const more = () => (items === null ? !stopRequested : next < items.length)
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (more()) {
        const item = (items === null ? null : items[next++]) as T
        try {
          await work(item)
          if (items === null && ++succeeded % progressEvery === 0) send({ kind: 'progress', count: succeeded })
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error)
          report.errors[message] = (report.errors[message] ?? 0) + 1
        }
        report.operations++
      }
    }),
  )
  send({ kind: 'done', report })
}

async function scan({ sceneStr, openid }: { sceneStr: string; openid: string }): Promise<void> {
  const answer = await auth.handleScan({ sceneStr, openid })
  // The workers' service runs without `confirm: 'link'`, so a scan never stops at `scanned`.
  if (answer.result === 'scanned') throw new Error(`scan of ${sceneStr} stopped at scanned without confirm: 'link'`)
  if (answer.result === 'invalid') report.invalid++
  else report.processed.push({ sceneStr, openid, userId: answer.userId, result: answer.result })
}

async function grantUnkeyed(openid: string, points: number): Promise<void> {
  await auth.grant({ openid, type: 'points', points, source: 'purchase' })
}

async function grantKeyed({ key, openid, points }: KeyedGrant): Promise<void> {
  const granted = await auth.grant({ openid, type: 'points', points, source: 'purchase', idempotencyKey: key })
  ;(report.grantedByKey[key] ??= []).push(granted.id)
}

async function consume(token: string, points: number, key?: string): Promise<void> {
  const answer = await auth.consume({ sessionToken: token, points, ...(key === undefined ? {} : { idempotencyKey: key }) })
  report.consumes[answer.status]++
  if (answer.status === 'ok') report.consumedFrom[answer.authorization.id] = (report.consumedFrom[answer.authorization.id] ?? 0) + 1
  if (key !== undefined) {
    const json = JSON.stringify(answer)
    report.consumeAnswers[json] = (report.consumeAnswers[json] ?? 0) + 1
  }
}

async function revoke(authorizationId: number, reason: string): Promise<void> {
  try {
    const answer = await auth.revokeAuthorization({ authorizationId, reason })
    if (answer.status !== 'revoked') throw new Error(`revokeAuthorization answered status ${answer.status}`)
    report.revokes++
  } catch (error) {
    // An authorization that has already ended (exhausted, expired) cannot be revoked (B-revoke-2).
    if (!(error instanceof ScanAuthError && error.code === 'invalid_request')) throw error
    report.revokesRefused++
  }
}

/** The worker's own grants that returned, for the loop's revocations. */
const ownGranted: number[] = []

/** One operation of the crash test's mix. */
async function loopOnce(command: Extract<Command, { kind: 'loop' }>): Promise<void> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T
  const roll = random()
  if (roll < 0.15) {
    // A scene every worker may be scanning at the same moment.
    const sceneStr = pick(command.sharedScenes)
    await scan({ sceneStr, openid: pick(command.sharedOpenids) })
    await auth.getStatus(sceneStr)
  } else if (roll < 0.3) {
    // A scene of its own, so that processed scans (scene, user, trial, session and ledger in one
    // commit) go on for the whole load, after the shared scenes have all been taken.
    const { sceneStr } = await auth.createScene({ deviceId: `fresh-w${workerIndex}-${++scenesCreated}` })
    await scan({ sceneStr, openid: pick(command.sharedOpenids) })
  } else if (roll < 0.4) await grantKeyed(pick(command.keyedGrants))
  else if (roll < 0.55) {
    const points = 3
    try {
      const granted = await auth.grant({ openid: pick(command.ownOpenids), type: 'points', points, source: 'purchase' })
      ownGranted.push(granted.id)
      report.ownPointsGranted += points
    } catch (error) {
      report.ownPointsInDoubt += points
      throw error
    }
  } else if (roll < 0.6) {
    if (ownGranted.length > 0) await revoke(pick(ownGranted), 'crash-test refund')
  } else {
    try {
      await consume(pick(command.ownTokens), 1)
    } catch (error) {
      report.consumes.inDoubt++
      throw error
    }
  }
}

/** A small seeded generator, so that each worker makes its own choices. */
function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 4294967296
  }
}
