/**
 * Key expiry. Core decides when a scene or session has expired, by comparing its stored times with
 * the injected clock; Redis TTLs only free the memory of records nobody can use any more. So a TTL
 * is a *relative* duration taken from the record's own times — `deadline − reference + grace`,
 * where the reference is a time written in the same change set (the record's `createdAt`) — and
 * never an absolute server time: the application's clock and the Redis server's clock need not
 * agree, and tests may run on a manual clock years away from the real one.
 *
 * What expires (see `docs/redis.md`):
 * - a pending scene: its lifetime plus the grace, so a late poll still answers `expired`;
 * - an authorized scene: as long as its session plus the grace, so polls keep answering `authorized`;
 * - a scene's confirm-ticket index key (`<p>ct:`): exactly when its scene does, whatever the
 *   scene's status (the commit script copies the scene key's expiry, `scripts/commit.ts`);
 * - a session and its scene's latest-session pointer: the session lifetime plus the grace;
 * - users and authorizations: never;
 * - a counter: `expiresAt − now` of the increment that started it, without grace (the script
 *   decides restarts from the stored `expiresAt`, so the TTL only frees memory).
 *
 * @module
 */

/** The shortest TTL ever set: a computed TTL at or below zero becomes this, never `PX 0`. */
export const MIN_TTL_MS = 1000

/** Longer than this (about 100 years) means "keep for ever": no TTL is set. */
export const MAX_TTL_MS = 100 * 365 * 24 * 3600 * 1000

/** A TTL argument of the commit script: milliseconds, {@link KEEP_TTL}, or {@link NO_TTL}. */
export type TtlArg = string

/** Keep the key's current TTL (`SET ... KEEPTTL`): the write does not move the record's deadline. */
export const KEEP_TTL: TtlArg = 'keep'

/** No TTL (`SET` without expiry). */
export const NO_TTL: TtlArg = ''

/**
 * The TTL of a counter that starts now (`Store.incrementCounter`): `expiresAt − now` in whole
 * milliseconds, rounded up, without grace (the script compares the stored `expiresAt` with `now`
 * itself, so the TTL only frees a dead counter's memory). At least 1 ms (never `PX 0`: an expiry
 * already passed stores a counter that lives a moment and is dead anyway), {@link NO_TTL} when
 * not finite or beyond {@link MAX_TTL_MS}.
 */
export function counterTtl(expiresAt: number, now: number): TtlArg {
  const ttl = Math.ceil(expiresAt - now)
  if (Number.isNaN(ttl) || ttl > MAX_TTL_MS) return NO_TTL
  return String(Math.max(ttl, 1))
}

/**
 * The TTL, in whole milliseconds, for a record whose deadline is `deadline` when the change set was
 * planned at `reference`: `deadline − reference + grace`, at least {@link MIN_TTL_MS}. A deadline
 * that is not finite or lies beyond {@link MAX_TTL_MS} yields {@link NO_TTL}.
 */
export function relativeTtl(deadline: number, reference: number, graceMs: number): TtlArg {
  const ttl = Math.ceil(deadline - reference + graceMs)
  if (Number.isNaN(ttl)) return NO_TTL
  if (ttl > MAX_TTL_MS) return NO_TTL
  return String(Math.max(ttl, MIN_TTL_MS))
}
