/**
 * How long a store keeps what it may delete (docs/behaviour.md, D-retention). One rule for every
 * store: `MemoryStore`, `SqliteStore` and `PostgresStore` apply it in `purgeExpired`, and
 * `RedisStore` turns it into key TTLs. Pure functions, no clock: the caller passes the service's
 * `now`.
 *
 * - A scene is needed until its own deadline; an authorized scene keeps answering polls with its
 *   session (B-poll-4b, D-authorized-poll), so it is needed as long as its latest session too.
 * - A session and a counter are needed until their own deadlines.
 * - Users, authorizations, ledger entries and idempotency keys are kept for good: they are the
 *   record of what was granted and sold.
 * - An order is kept for good while it is open, once it is paid or refunded, and whenever money
 *   moved for it; a closed one that never took money is needed until its payment deadline
 *   (B-order-purge).
 *
 * A purge may keep records `retentionMs` longer than they are needed (for support questions); a
 * record is deleted once `now - retentionMs` reaches the time it was needed until.
 *
 * @module
 */
import type { OrderRecord, SceneRecord, SessionRecord } from '../store/records'
import { hasPassed } from './time'

/**
 * Until when a scene is needed: its own `expiresAt`, or its latest session's if that is later
 * (the poll of an authorized scene reads only the latest session, B-poll-4b).
 */
export function sceneNeededUntil(scene: Pick<SceneRecord, 'expiresAt'>, latestSession: Pick<SessionRecord, 'expiresAt'> | null): number {
  return latestSession === null ? scene.expiresAt : Math.max(scene.expiresAt, latestSession.expiresAt)
}

/**
 * The purge cutoff: a record needed until a time at or before it may be deleted. Records are
 * needed until at least their own `expiresAt`, so a store may look for candidates among records
 * whose `expiresAt` is at or before the cutoff, through an index on it.
 */
export function purgeCutoff(now: number, retentionMs: number): number {
  return now - retentionMs
}

/**
 * Whether a record needed until `neededUntil` may be deleted by a purge with this cutoff: once
 * the cutoff has reached that time, by the one expiry boundary (B-expiry-1, `hasPassed`).
 */
export function mayPurge(neededUntil: number, cutoff: number): boolean {
  return hasPassed(neededUntil, cutoff)
}

/**
 * Until when an order is needed, or null when it is kept for good (B-order-purge). An `open` order
 * may still be paid, and a `paid` or `refunded` one is the record of money taken: both stay for good.
 * A `closed` order was closed at the payment service before it was closed here (B-order-4, B-order-10),
 * so nothing can be paid for it any more; it is needed until its payment deadline (`expiresAt`, the
 * `time_expire` the payment service was given), the latest time at which a payer could have paid
 * it. A closed order that records money all the same (a `paidAt`, or a refund: the payment service
 * contradicting itself) is kept for good too.
 *
 * This function is the one statement of the rule. `MemoryStore` calls it; the database stores
 * write it as the condition of their purge (SQL `WHERE`, the Redis purge script) over an index of
 * closed orders by `expiresAt`, as they write `expires_at <= cutoff` for sessions and counters; the
 * contract suite checks every store against it.
 */
export function orderNeededUntil(order: Pick<OrderRecord, 'status' | 'expiresAt' | 'paidAt' | 'refundedFen'>): number | null {
  if (order.status !== 'closed' || order.paidAt !== null || order.refundedFen !== 0) return null
  return order.expiresAt
}
