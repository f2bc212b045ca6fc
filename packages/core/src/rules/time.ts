/**
 * The one expiry boundary every rule uses.
 *
 * The specification says a time authorization is valid only while end_at is after now ("end_at not
 * after now" means expired). We apply the same boundary to scenes and sessions: a deadline has passed
 * once `now >= deadline`.
 */
export function hasPassed(deadline: number, now: number): boolean {
  return now >= deadline
}

/** Milliseconds in a second, an hour and a day, for converting configured lifetimes. */
export const SECOND = 1000
export const HOUR = 3600 * SECOND
export const DAY = 24 * HOUR
