/**
 * What the multi-process tests (multiprocess.test.ts, crash-safety.test.ts) and their worker
 * processes (`load-worker.ts`) say to each other over IPC. The parent side (forking, sending,
 * waiting) is `../support/fleet.ts`, on testkit's `forkWorker`.
 */
import type { WorkerReply } from '@scanauth/testkit'

/** Settings of every `createScanAuth` in these tests, the workers' and the parent's alike. */
export const SERVICE_SETTINGS = { sceneTtlSeconds: 600, sessionTtlHours: 720, freeTrialDays: 0.5 } as const

/** How a worker reaches its database: passed in its environment when it is forked. */
export interface WorkerEnvironment {
  SCANAUTH_DATABASE_URL: string
  SCANAUTH_SCHEMA: string
  /** The `application_name` of the worker's pool, so the crash test terminates only our backends. */
  SCANAUTH_APPLICATION_NAME: string
  /** The worker's index in its fleet: it seeds the worker's random choices. */
  SCANAUTH_WORKER_INDEX: string
}

/** A grant with an idempotency key: every process that uses `key` sends the same parameters. */
export interface KeyedGrant {
  key: string
  openid: string
  points: number
}

/**
 * Parent → worker. A phase runs its items in the order given, `lanes` of them in flight at once, at
 * the fixed time `now` (the workers' clocks agree), and answers with a {@link Report}.
 */
export type Command =
  /** Scan each scene with its openid. */
  | { kind: 'scan'; now: number; lanes: number; tasks: Array<{ sceneStr: string; openid: string }> }
  /** Grant each task's points to its openid (found or created), with its idempotency key when it has one. */
  | { kind: 'grant'; now: number; lanes: number; tasks: Array<{ openid: string; points: number; key?: string }> }
  /** Consume `points` with each task's token, with its idempotency key when it has one. */
  | { kind: 'consume'; now: number; lanes: number; points: number; tasks: Array<{ token: string; key?: string }> }
  /**
   * Consume one point with each token, and revoke `authorizationId` as soon as `revokeAfter` of
   * those consumptions have started: the revocation races the consumptions still in flight.
   */
  | { kind: 'consume-revoke'; now: number; lanes: number; tokens: string[]; revokeAfter: number; authorizationId: number; reason: string }
  /**
   * The crash test's load, until `stop`: scans by shared openids of shared scenes and of scenes the
   * worker creates, keyed grants, grants to the worker's own openids and revocations of them,
   * consumptions with its own tokens.
   * Errors are counted and the loop goes on. Reports progress every `progressEvery` operations.
   */
  | {
      kind: 'loop'
      now: number
      lanes: number
      sharedScenes: string[]
      sharedOpenids: string[]
      keyedGrants: KeyedGrant[]
      ownOpenids: string[]
      ownTokens: string[]
      progressEvery: number
    }
  /** Ends the loop: the worker lets the operations in flight finish and reports. */
  | { kind: 'stop' }
  /** Closes the store and the pool and exits. */
  | { kind: 'exit' }

/** What a worker's operations answered in one phase. */
export interface Report {
  /** Operations that returned (whatever they answered) and operations that threw. */
  operations: number
  /** Scans that were processed, with what they answered. */
  processed: Array<{ sceneStr: string; openid: string; userId: number; result: 'authorized' | 'need_purchase' }>
  /** Scans answered `invalid`. */
  invalid: number
  /** The authorization id each keyed grant answered, by key. */
  grantedByKey: Record<string, number[]>
  /** Grants to the worker's own openids: points of those that returned, and of those that threw (applied or not: the caller cannot tell). */
  ownPointsGranted: number
  ownPointsInDoubt: number
  /** Consumptions by answer; `inDoubt` threw. */
  consumes: { ok: number; need_purchase: number; insufficient_points: number; inDoubt: number }
  /** For each `ok` consumption, the id of the authorization it used, counted. */
  consumedFrom: Record<number, number>
  /** Every distinct answer of a keyed consumption, as JSON, counted. */
  consumeAnswers: Record<string, number>
  /** Revocations answered with status `revoked`, and those refused because the authorization had already ended. */
  revokes: number
  revokesRefused: number
  /** Messages of the operations that threw, counted. */
  errors: Record<string, number>
  /** Errors the pool emitted for idle clients (a terminated backend nobody was using). */
  idleClientErrors: number
  /** Commits through the worker's store, and how many reported a conflict (and were planned again). */
  commits: number
  conflicts: number
}

/**
 * Worker → parent, in testkit's worker protocol. A `progress` count is the loop's operations that
 * returned so far (those that threw not counted).
 */
export type Reply = WorkerReply<Report>

/** A report with nothing in it yet. */
export function emptyReport(): Report {
  return {
    operations: 0,
    processed: [],
    invalid: 0,
    grantedByKey: {},
    ownPointsGranted: 0,
    ownPointsInDoubt: 0,
    consumes: { ok: 0, need_purchase: 0, insufficient_points: 0, inDoubt: 0 },
    consumedFrom: {},
    consumeAnswers: {},
    revokes: 0,
    revokesRefused: 0,
    errors: {},
    idleClientErrors: 0,
    commits: 0,
    conflicts: 0,
  }
}
