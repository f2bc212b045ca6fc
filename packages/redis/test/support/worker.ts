/**
 * One process of the multi-process test: its own ioredis client, its own RedisStore and its own
 * `createScanAuth`, driven phase by phase by the parent over IPC. It answers each phase with what
 * its operations returned and how many loads, commits and commit conflicts its store saw.
 *
 * Started through `worker-process.ts` (testkit's `forkWorker`, whose protocol it speaks) by
 * `multiprocess.test.ts` and the change-notification tests.
 */
import { Cluster, Redis } from 'ioredis'
import { createScanAuth, type LedgerEntryRecord, type Store } from '@scanauth/core'
import { type ChangeSet, type CommitResult, type LedgerQuery, type LoadQuery, type LoadResult, type SceneChangeListener, type SessionSelector } from '@scanauth/core/store'
import type { WorkerReply } from '@scanauth/testkit'
import { RedisStore } from '../../src/index'

/** A phase the parent asks for. */
export type Job =
  | { phase: 'scan'; scenes: string[]; openidFor: string[] }
  | { phase: 'grant'; openids: string[]; grantsEach: number; points: number }
  | { phase: 'consume'; tokens: string[]; consumesEach: number; lanesEach: number }
  /** `count` concurrent grants of the same key; outcomes `id <authorization id>`. */
  | { phase: 'grantKey'; openid: string; key: string; count: number; days: number }
  /**
   * `consumes` consumptions of `points` each in two lanes, and (when `revokeAfter` is set) a
   * revocation of `authorizationId` once that many consumptions have been made; outcomes
   * `<type> <authorization id>` for a consumption that spent, `revoked` for the revocation.
   */
  | { phase: 'revokeRace'; token: string; consumes: number; points: number; authorizationId: number; revokeAfter: number | null }
  /**
   * `count` increments of the counter `key` straight on the store, `lanes` in flight at once;
   * outcomes `<value>` (one per value answered).
   */
  | { phase: 'count'; key: string; expiresAt: number; now: number; count: number; lanes: number }
  | { phase: 'exit' }

/** Outcomes of one phase in this process, by kind (e.g. `authorized`, `invalid`, `points`, `error`). */
export interface PhaseReport {
  outcomes: Record<string, number>
  /** Outcomes per key (scene_str, openid or token), where the parent checks them one by one. */
  byKey: Record<string, Record<string, number>>
  counts: { operations: number; loads: number; commits: number; conflicts: number }
}

/** Counts what the service asks of the store (a pass-through, not a stand-in). */
class CountingStore implements Store {
  loads = 0
  commits = 0
  conflicts = 0
  constructor(private readonly inner: Store) {}
  load(query: LoadQuery): Promise<LoadResult> {
    this.loads++
    return this.inner.load(query)
  }
  async commit(changes: ChangeSet): Promise<CommitResult> {
    this.commits++
    const result = await this.inner.commit(changes)
    if (!result.ok) this.conflicts++
    return result
  }
  listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]> {
    return this.inner.listLedger(query)
  }
  endSessions(selector: SessionSelector, at: number): Promise<number> {
    return this.inner.endSessions(selector, at)
  }
  watchScenes(listener: SceneChangeListener): () => void {
    return this.inner.watchScenes(listener)
  }
  incrementCounter(key: string, expiresAt: number, now: number): Promise<number> {
    return this.inner.incrementCounter(key, expiresAt, now)
  }
  deleteCounter(key: string): Promise<void> {
    return this.inner.deleteCounter(key)
  }
}

// A Cluster client when the parent names the masters' ports (cluster tests), else the one server.
const clusterPorts = process.env.SCANAUTH_CLUSTER_PORTS?.split(',').map(Number)
const client = clusterPorts
  ? new Cluster(clusterPorts.map((port) => ({ host: '127.0.0.1', port })))
  : new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const store = new CountingStore(new RedisStore({ client, keyPrefix: process.env.SCANAUTH_PREFIX as string }))
const auth = createScanAuth({ store, qr: { createQr: async () => ({ url: 'https://qr.example.test/x' }) } })

async function run(job: Exclude<Job, { phase: 'exit' }>): Promise<PhaseReport> {
  const before = { loads: store.loads, commits: store.commits, conflicts: store.conflicts }
  const outcomes: Record<string, number> = {}
  const byKey: Record<string, Record<string, number>> = {}
  let operations = 0
  const note = (key: string, outcome: string) => {
    operations++
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
    const forKey = (byKey[key] ??= {})
    forKey[outcome] = (forKey[outcome] ?? 0) + 1
  }
  const attempt = async (key: string, op: () => Promise<string>) => {
    try {
      note(key, await op())
    } catch (error) {
      note(key, `error: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (job.phase === 'scan') {
    // Every scene at once: the other processes scan the same scenes at the same time.
    await Promise.all(
      job.scenes.map((sceneStr, i) =>
        attempt(sceneStr, async () => (await auth.handleScan({ sceneStr, openid: job.openidFor[i] as string })).result),
      ),
    )
  } else if (job.phase === 'grant') {
    await Promise.all(
      job.openids.flatMap((openid) =>
        Array.from({ length: job.grantsEach }, () =>
          attempt(openid, async () => (await auth.grant({ openid, type: 'points', points: job.points })).status),
        ),
      ),
    )
  } else if (job.phase === 'grantKey') {
    await Promise.all(
      Array.from({ length: job.count }, () =>
        attempt(job.key, async () => {
          const granted = await auth.grant({ openid: job.openid, type: 'time', durationSeconds: job.days * 86400, source: 'purchase', idempotencyKey: job.key })
          return `id ${granted.id}`
        }),
      ),
    )
  } else if (job.phase === 'count') {
    let started = 0
    await Promise.all(
      Array.from({ length: job.lanes }, async () => {
        while (started < job.count) {
          started++
          await attempt(job.key, async () => String(await store.incrementCounter(job.key, job.expiresAt, job.now)))
        }
      }),
    )
  } else if (job.phase === 'revokeRace') {
    let made = 0
    let revoking: Promise<void> | null = null
    const lane = async () => {
      while (made < job.consumes) {
        made++
        // Started beside the consumptions, not between them: the two race.
        if (made === job.revokeAfter) {
          revoking = attempt('revoke', async () => (await auth.revokeAuthorization({ authorizationId: job.authorizationId })).status)
        }
        await attempt(job.token, async () => {
          const used = await auth.consume({ sessionToken: job.token, points: job.points })
          return used.status === 'ok' ? `${used.authorization.type} ${used.authorization.id}` : used.status
        })
      }
    }
    await Promise.all([lane(), lane()])
    await revoking
  } else {
    // A few lanes per token, each consuming one point at a time.
    await Promise.all(
      job.tokens.flatMap((sessionToken) =>
        Array.from({ length: job.lanesEach }, async () => {
          for (let i = 0; i < job.consumesEach / job.lanesEach; i++) {
            await attempt(sessionToken, async () => {
              const used = await auth.consume({ sessionToken })
              return used.status === 'ok' ? used.authorization.type : used.status
            })
          }
        }),
      ),
    )
  }
  return {
    outcomes,
    byKey,
    counts: {
      operations,
      loads: store.loads - before.loads,
      commits: store.commits - before.commits,
      conflicts: store.conflicts - before.conflicts,
    },
  }
}

const send = (reply: WorkerReply<PhaseReport>) => process.send?.(reply)

process.on('message', (job: Job) => {
  if (job.phase === 'exit') {
    // The process opened this client, so it closes it.
    void client.quit().finally(() => process.exit(0))
    return
  }
  run(job).then(
    (report) => send({ kind: 'done', report }),
    (error: unknown) => send({ kind: 'failed', error: String(error) }),
  )
})
send({ kind: 'ready' })
