/**
 * The example's housekeeping: `store.purgeExpired` on a timer, with the service's clock, so expired
 * scenes, sessions and counters do not pile up in SQLite or PostgreSQL (Redis forgets those by
 * itself), nor closed, never-paid orders on any store (B-order-purge). What goes is core's one
 * retention rule (docs/behaviour.md, D-retention); users, authorizations, the ledger, idempotency
 * keys and paid or refunded orders stay.
 *
 * @module
 */
import type { PurgeResult, Store } from '@scanauth/core'
import { every } from './every'

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
 * Purges every `everyMs` through {@link every}: first after `everyMs`, never two at once, never
 * holding the process open; nothing at all for a store without `purgeExpired`. Returns the stop
 * function, which resolves once a running purge has finished.
 */
export function startPurgeTimer(store: Store, options: PurgeTimerOptions): () => Promise<void> {
  const purge = store.purgeExpired
  if (purge === undefined) return async () => undefined
  return every({ everyMs: options.everyMs, name: 'purge', log: options.log }, async () =>
    report(await purge.call(store, { now: options.now(), retentionMs: PURGE_RETENTION_MS })),
  )
}

/** One line when something was deleted; nothing otherwise (an idle server's log stays quiet). */
function report(result: PurgeResult): string | null {
  if (result.scenes + result.sessions + result.counters + result.orders === 0) return null
  return `purge: ${result.scenes} scenes, ${result.sessions} sessions, ${result.counters} counters, ${result.orders} closed orders deleted in ${result.batches} batches`
}
