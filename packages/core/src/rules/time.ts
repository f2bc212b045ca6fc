/**
 * The one expiry boundary every rule uses.
 *
 * A time authorization is valid only while now is before end_at (docs/behaviour.md, B-valid-1). We
 * apply the same boundary to scenes and sessions (B-expiry-1, decision D-expiry): a deadline has passed
 * once `now >= deadline`.
 */
export function hasPassed(deadline: number, now: number): boolean {
  return now >= deadline
}

/** Milliseconds in a second, an hour and a day, for converting configured lifetimes. */
export const SECOND = 1000
export const HOUR = 3600 * SECOND
export const DAY = 24 * HOUR
