/**
 * `purgeExpired`, the same on every store: its options, its result, and the batch loop that every
 * scanauth store shares (`RedisStore` only for closed orders: its other keys expire by TTL). What
 * may be deleted is decided by the pure rules in `rules/retention.ts` (docs/behaviour.md,
 * D-retention, B-order-purge).
 *
 * @module
 */
import { z } from 'zod'
import { mayPurge, purgeCutoff, sceneNeededUntil } from '../rules/retention'

/**
 * Options of `purgeExpired` on every store.
 *
 * @example
 * ```ts
 * import type { PurgeOptions } from '@scanauth/core'
 *
 * // Keep what expired in the last day, delete the rest, at most 20 batches of 500 per table now.
 * const options: PurgeOptions = { now: Date.now(), retentionMs: 24 * 3600_000, batchSize: 500, maxBatches: 20 }
 * ```
 */
export interface PurgeOptions {
  /**
   * The time to purge at, in epoch milliseconds: your service's clock (the one given to
   * `createScanAuth`). Required: a store never reads a clock of its own, so a purge can never
   * disagree with the service about what has expired.
   */
  now: number
  /**
   * Keep expired records this many milliseconds past the time they were needed until before
   * deleting them (for support questions and audits): a closed order this long past its payment
   * deadline. Default 0.
   */
  retentionMs?: number
  /**
   * At most this many records of each kind deleted per batch. Default 500. A batch is one short
   * transaction on SQLite, two short statements on PostgreSQL and one script run on Redis, and the
   * purge yields to the event loop between batches, so a big purge never holds up scans and polls
   * for long.
   */
  batchSize?: number
  /** Stop after this many batches even if more is left (the next call continues). Default: no limit. */
  maxBatches?: number
}

/** What `purgeExpired` did. */
export interface PurgeResult {
  /** Scenes deleted. */
  scenes: number
  /** Sessions deleted. */
  sessions: number
  /** Counters (rate-limit windows, WeChat replay and duplicate records) deleted. */
  counters: number
  /** Closed orders that never took money, deleted past their payment deadline (B-order-purge). */
  orders: number
  /** Batches run. */
  batches: number
  /** True when `maxBatches` stopped the purge before everything due was deleted: call again. */
  more: boolean
}

/** The purge options with every default filled in. */
export interface ResolvedPurgeOptions {
  /** The time to purge at (epoch ms), as given. */
  now: number
  /** How long past being needed records are kept (ms); 0 when not given. */
  retentionMs: number
  /** At most this many records of each kind per batch. */
  batchSize: number
  /** At most this many batches per call; `Infinity` when not given. */
  maxBatches: number
}

/** The default `batchSize` of {@link PurgeOptions}. */
export const DEFAULT_PURGE_BATCH_SIZE = 500

const purgeOptionsSchema = z
  .object({
    now: z.number({ error: 'now is required: pass your service clock, e.g. { now: Date.now() }' }).finite(),
    retentionMs: z.number().finite().min(0).default(0),
    batchSize: z.number().int().min(1).max(100_000).default(DEFAULT_PURGE_BATCH_SIZE),
    maxBatches: z.number().int().min(1).optional(),
  })
  .strict()

/**
 * Checks and completes purge options. An invalid one is reported through `fail(option, message)`,
 * which builds the calling store's own error (each store has its error class) to be thrown.
 */
export function resolvePurgeOptions(options: PurgeOptions, fail: (option: string, message: string) => Error): ResolvedPurgeOptions {
  const parsed = purgeOptionsSchema.safeParse(options ?? {})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const option = issue?.path.map(String).join('.') || 'options'
    throw fail(option, issue?.message ?? 'invalid')
  }
  const { now, retentionMs, batchSize, maxBatches } = parsed.data
  return { now, retentionMs, batchSize, maxBatches: maxBatches ?? Number.POSITIVE_INFINITY }
}

/** What one batch of a purge deleted, and whether nothing due is left. */
export interface PurgeBatchOutcome {
  /** Scenes the batch deleted. */
  scenes: number
  /** Sessions the batch deleted. */
  sessions: number
  /** Counters the batch deleted. */
  counters: number
  /** Closed orders the batch deleted; left out (0) by a store without orders. */
  orders?: number
  /** True when this batch found less than a full batch of every kind: the purge is complete. */
  done: boolean
}

/**
 * Runs `batch(cutoff, batchSize)` until it reports `done` or `maxBatches` is reached, yielding to
 * the event loop between batches, and adds up what was deleted. `beforeNext` runs before each
 * further batch (a store checks there that it was not closed meanwhile).
 */
export async function purgeInBatches(
  options: ResolvedPurgeOptions,
  batch: (cutoff: number, limit: number) => PurgeBatchOutcome | Promise<PurgeBatchOutcome>,
  beforeNext: () => void = () => undefined,
): Promise<PurgeResult> {
  const cutoff = purgeCutoff(options.now, options.retentionMs)
  const result: PurgeResult = { scenes: 0, sessions: 0, counters: 0, orders: 0, batches: 0, more: false }
  for (;;) {
    const outcome = await batch(cutoff, options.batchSize)
    result.scenes += outcome.scenes
    result.sessions += outcome.sessions
    result.counters += outcome.counters
    result.orders += outcome.orders ?? 0
    result.batches++
    if (outcome.done) return result
    if (result.batches >= options.maxBatches) return { ...result, more: true }
    // Let queued scans and polls run between batches.
    await nextTurn()
    beforeNext()
  }
}

/** A scene a purge batch read as a candidate: past its own deadline, with its latest session's (null when none). */
export interface PurgeSceneCandidate<Id> {
  /** The scene's id. */
  id: Id
  /** The scene's own `expiresAt`. */
  expiresAt: number
  /** `expiresAt` of the scene's latest session, null when it has none. */
  sessionEnd: number | null
}

/** Where the scene pass of a purge has got to: the last candidate read, in (expiresAt, id) order. */
export interface PurgeSceneCursor<Id> {
  /** `expiresAt` of the last candidate read. */
  expiresAt: number
  /** `id` of the last candidate read. */
  id: Id
  /** True once a batch read fewer candidates than it asked for: every scene has been examined. */
  done: boolean
}

/** A cursor before every scene; `firstId` is below every id (0, or '0' for a bigint read as a string). */
export function startOfScenes<Id>(firstId: Id): PurgeSceneCursor<Id> {
  return { expiresAt: Number.NEGATIVE_INFINITY, id: firstId, done: false }
}

/**
 * One batch of a database store's scene pass: moves `cursor` past `candidates` (at most `limit`,
 * read in (expiresAt, id) order after the cursor) and returns those core's retention rule lets go
 * (D-retention): an authorized scene stays while its latest session lives. The store's select
 * should already leave out scenes whose latest session ends after the cutoff: were they offered,
 * a backlog of them as long as `batchSize × maxBatches` would fill every batch of every call, and
 * the scenes behind them would never be reached.
 */
export function purgeableScenes<Id, C extends PurgeSceneCandidate<Id>>(candidates: readonly C[], cutoff: number, limit: number, cursor: PurgeSceneCursor<Id>): C[] {
  const last = candidates[candidates.length - 1]
  if (last !== undefined) {
    cursor.expiresAt = last.expiresAt
    cursor.id = last.id
  }
  cursor.done = candidates.length < limit
  return candidates.filter((c) => mayPurge(sceneNeededUntil(c, c.sessionEnd === null ? null : { expiresAt: c.sessionEnd }), cutoff))
}

/** Resolves on a later turn of the event loop (`setImmediate` where the runtime has it). */
function nextTurn(): Promise<void> {
  const later: (callback: () => void) => unknown = typeof setImmediate === 'function' ? setImmediate : (callback) => setTimeout(callback, 0)
  return new Promise<void>((resolve) => later(resolve))
}
