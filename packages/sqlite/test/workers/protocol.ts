/**
 * Messages between the multi-process tests and their worker processes (`load-worker.ts`), and the
 * parent side: forking a worker (testkit's `forkWorker`).
 */
import { fileURLToPath } from 'node:url'
import type { OrderRecord } from '@scanauth/core'
import { forkWorker, type WorkerHandle as GenericWorkerHandle, type WorkerReply } from '@scanauth/testkit'

/** Settings every worker's `createScanAuth` uses. */
export const SERVICE_SETTINGS = { sceneTtlSeconds: 600, sessionTtlHours: 720, freeTrialDays: 0.5 } as const

/** Parent → worker. Every phase runs at the fixed time `now` (the workers' clocks agree). */
export type Command =
  /** Scan each scene with its openid (the list is shuffled per worker), polling the scene after. */
  | { kind: 'scan'; now: number; tasks: Array<{ sceneStr: string; openid: string }> }
  /** Grant `points` to each openid (found or created). */
  | { kind: 'grant'; now: number; tasks: Array<{ openid: string; points: number }> }
  /** Consume one point with each token, in order. */
  | { kind: 'consume'; now: number; tokens: string[] }
  /** Grant `points` to `openid` `count` times, every time with the same idempotency key. */
  | { kind: 'grant-keyed'; now: number; openid: string; points: number; key: string; count: number }
  /**
   * Consume one point with each token (shuffled), and revoke `authorizationId` once `revokeAfter`
   * of those consumptions have been started, while the rest are still in flight.
   */
  | { kind: 'consume-revoke'; now: number; tokens: string[]; revokeAfter: number; authorizationId: number; reason: string }
  /** `Store.incrementCounter(key, expiresAt, now)` `count` times (one at a time, a pause of 0–2 ms after each), straight on the worker's store. */
  | { kind: 'count'; now: number; key: string; expiresAt: number; count: number }
  /**
   * Orders straight on the worker's store: insert an open order under each of `insert` (every
   * worker gets the same list, so each key is raced), then `bumps` times read `outTradeNo` and
   * update it at the version read (a pause of 0–2 ms after each write).
   */
  | { kind: 'orders'; now: number; insert: string[]; outTradeNo: string; bumps: number }
  /**
   * Until `stop`: scan shared scenes with shared openids, grant points to shared and own openids,
   * consume with own tokens, poll. Reports progress every `progressEvery` operations.
   */
  | { kind: 'loop'; now: number; sharedScenes: string[]; sharedOpenids: string[]; ownOpenids: string[]; ownTokens: string[]; progressEvery: number }
  | { kind: 'stop' }
  | { kind: 'exit' }

/** What a worker did in one phase. */
export interface Report {
  /** Scans sent and their results. */
  scans: number
  invalid: number
  /** Scans that were processed (result authorized or need_purchase), with the user they bound. */
  processed: Array<{ sceneStr: string; openid: string; userId: number }>
  polls: number
  grants: number
  pointsGranted: number
  /** Points granted to the worker's own openids (the crash test). */
  ownPointsGranted: number
  consumes: { ok: number; need_purchase: number; insufficient_points: number }
  /** The id of the authorization each keyed grant returned, in the order they returned. */
  authorizationIds: number[]
  /** Revocations made (each answered with status `revoked`). */
  revokes: number
  /** What each counter increment answered, in the order they returned. */
  counterValues: number[]
  /** The `outTradeNo`s whose insert answered true here. */
  ordersInserted: string[]
  /** The versions this worker's order updates wrote (each answered true). */
  orderVersionsWon: number[]
  /** Commits through the worker's store, and how many of them reported a conflict (then retried). */
  commits: number
  conflicts: number
}

/** Worker → parent, in testkit's worker protocol (a `progress` count is the loop's operations so far). */
export type Reply = WorkerReply<Report>

/** An empty report. */
export function emptyReport(): Report {
  return { scans: 0, invalid: 0, processed: [], polls: 0, grants: 0, pointsGranted: 0, ownPointsGranted: 0, consumes: { ok: 0, need_purchase: 0, insufficient_points: 0 }, authorizationIds: [], revokes: 0, counterValues: [], ordersInserted: [], orderVersionsWon: [], commits: 0, conflicts: 0 }
}

/** A fresh open order as core opens one, bought by user `userId` (the `orders` phase and its test). */
export function openOrder(outTradeNo: string, at: number, userId: number): OrderRecord {
  return {
    outTradeNo,
    userId,
    planId: 'month',
    description: '月卡',
    amountFen: 1500,
    grant: { type: 'time', days: 30 },
    sceneStr: null,
    channel: 'native',
    status: 'open',
    createdAt: at,
    expiresAt: at + 900_000,
    updatedAt: at,
    paidAt: null,
    transactionId: null,
    authorizationId: null,
    refundedFen: 0,
    refunds: [],
    version: 1,
  }
}

/** A forked worker seen from the parent (testkit's harness, with this package's commands and reports). */
export type WorkerHandle = GenericWorkerHandle<Command, Report>

const workerPath = fileURLToPath(new URL('./load-worker.ts', import.meta.url))
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url))

/** Forks a worker on `filename` and waits until its store is open. */
export async function startWorker(filename: string, index: number): Promise<WorkerHandle> {
  const { handle, ready } = forkWorker<Command, Report>({
    path: workerPath,
    cwd: repoRoot,
    args: [filename, String(index)],
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    name: `worker ${index}`,
  })
  await ready
  return handle
}
