/**
 * The example's housekeeping: `store.purgeExpired` on a timer, with the service's clock, so expired
 * scenes, sessions and counters do not pile up in SQLite or PostgreSQL (Redis forgets them by
 * itself; its purge deletes nothing). What goes is core's one retention rule (docs/behaviour.md,
 * D-retention); users, authorizations, the ledger and idempotency keys stay.
 *
 * @module
 */
import type { PurgeResult, Store } from '@scanauth/core'

/** Expired records are kept this long before a purge deletes them (for support questions). */
export const PURGE_RETENTION_MS = 24 * 3600_000

/** How the timer runs. */
export interface PurgeTimerOptions {
  /** Milliseconds between the end of one purge and the start of the next. */
  everyMs: number
  /** The clock the service runs on: the purge must judge expiry as the service does. */
  now: () => number
  /** Where the outcome of a purge that deleted something, or failed, is written. */
  log: (line: string) => void
}

/**
 * Purges every `everyMs` (first after `everyMs`), never two at once, and never holding the process
 * open. Returns the stop function: no purge starts after it, and it resolves once a purge that is
 * running has finished, so the store can be closed right after.
 */
export function startPurgeTimer(store: Store, options: PurgeTimerOptions): () => Promise<void> {
  const purge = store.purgeExpired
  if (purge === undefined) return async () => undefined
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const run = async () => {
    try {
      report(await purge.call(store, { now: options.now(), retentionMs: PURGE_RETENTION_MS }), options.log)
    } catch (error) {
      options.log(`purge failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const schedule = () => {
    timer = setTimeout(() => {
      running = run().finally(() => {
        if (!stopped) schedule()
      })
    }, options.everyMs)
    timer.unref()
  }
  schedule()
  return async () => {
    stopped = true
    clearTimeout(timer)
    await running
  }
}

/** One line when something was deleted; nothing otherwise (an idle server's log stays quiet). */
function report(result: PurgeResult, log: (line: string) => void): void {
  if (result.scenes + result.sessions + result.counters === 0) return
  log(`purge: ${result.scenes} scenes, ${result.sessions} sessions, ${result.counters} counters deleted in ${result.batches} batches`)
}
