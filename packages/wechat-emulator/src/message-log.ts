/**
 * The messages the account sent through the send APIs (what the phone's chat shows) and the daily
 * quota knob those APIs count against.
 *
 * @module
 */
import type { EmulatorMessage } from './types'

/** Messages kept for `messages()` and the page: a session's worth, bounded for a long-running dev server. */
export const MESSAGE_LOG_LIMIT = 500

/** The delivered messages, oldest first. */
export class MessageLog {
  readonly #entries: EmulatorMessage[] = []
  #nextId = 1_000_000_001

  /** A new message id, WeChat-like (a number). */
  nextMsgId(): number {
    return this.#nextId++
  }

  add(message: EmulatorMessage): void {
    this.#entries.push(message)
    if (this.#entries.length > MESSAGE_LOG_LIMIT) this.#entries.splice(0, this.#entries.length - MESSAGE_LOG_LIMIT)
  }

  /** Copies, oldest first. */
  all(): EmulatorMessage[] {
    return this.#entries.map((entry) => ({ ...entry, data: entry.data === null ? null : { ...entry.data } }))
  }
}

/** Beijing is UTC+8 all year: WeChat's daily quotas start again at its midnight. */
const BEIJING_OFFSET_MS = 8 * 3_600_000

/**
 * Calls per send API per day, refused with 45009 beyond `limit` (null: no limit). Each API has its own
 * count, as WeChat's quotas are per API; the day is Beijing's, on the emulator's clock.
 */
export class DailyQuota {
  #limit: number | null
  readonly #counts = new Map<string, number>()
  readonly #now: () => number

  constructor(limit: number | null, now: () => number) {
    this.#limit = limit
    this.#now = now
  }

  setLimit(limit: number | null): void {
    this.#limit = limit
  }

  /** Counts one call of `endpoint`; false when the day's quota was already used up. */
  take(endpoint: string): boolean {
    const day = Math.floor((this.#now() + BEIJING_OFFSET_MS) / 86_400_000)
    const key = `${day}:${endpoint}`
    const used = this.#counts.get(key) ?? 0
    if (this.#limit !== null && used >= this.#limit) return false
    this.#counts.set(key, used + 1)
    // Yesterday's counts are of no use any more.
    for (const old of this.#counts.keys()) if (!old.startsWith(`${day}:`)) this.#counts.delete(old)
    return true
  }
}
