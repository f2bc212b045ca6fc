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
 *
 * A purge may keep records `retentionMs` longer than they are needed (for support questions); a
 * record is deleted once `now - retentionMs` reaches the time it was needed until.
 *
 * @module
 */
import type { SceneRecord, SessionRecord } from '../records'
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
