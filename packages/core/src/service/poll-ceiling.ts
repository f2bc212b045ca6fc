/**
 * The status poll ceiling (docs/behaviour.md, B-rate-9): at most so many polls per scene per window,
 * counted in this instance's memory. Not in the store: a pending poll must stay one store read
 * (B-poll-2), and a device polling in a tight loop is stopped by the instance it reaches. The memory
 * is bounded: the ceiling remembers a fixed number of scenes and forgets the oldest first, so a flood
 * of scene strings cannot grow it.
 *
 * @module
 */
import { rateLimited } from './rate-limiter'
import { isWithin, secondsUntilEnd, windowOf, type WindowLimit } from '../rules/rate-limits'

/** How many scenes the ceiling remembers (about 100 bytes each). */
export const POLL_CEILING_SCENES = 10_000

/** Counts a poll of a scene; throws `rate_limited` over the ceiling. See {@link createPollCeiling}. */
export type PollCeiling = (sceneStr: string, now: number) => void

/**
 * Creates a poll ceiling of `setting`, remembering at most `capacity` scenes. A scene forgotten to
 * make room starts counting again from zero: under a flood the ceiling may let a few more polls
 * through, but it never holds more than `capacity` entries.
 */
export function createPollCeiling(setting: WindowLimit, capacity = POLL_CEILING_SCENES): PollCeiling {
  // A Map iterates in insertion order: its first key is the scene counted least recently in a new window.
  const counts = new Map<string, { windowStart: number; count: number }>()
  return (sceneStr, now) => {
    const window = windowOf(now, setting.windowSeconds)
    let entry = counts.get(sceneStr)
    if (entry === undefined || entry.windowStart !== window.start) {
      // A new window (or a scene not seen yet) goes to the end of the order, so the oldest go first.
      counts.delete(sceneStr)
      entry = { windowStart: window.start, count: 0 }
      counts.set(sceneStr, entry)
      if (counts.size > capacity) counts.delete(counts.keys().next().value as string)
    }
    entry.count += 1
    if (isWithin(entry.count, setting.limit)) return
    const retryAfterSeconds = secondsUntilEnd(window, now)
    throw rateLimited('poll', `Too many polls of this scene; try again in ${retryAfterSeconds} s`, retryAfterSeconds)
  }
}
