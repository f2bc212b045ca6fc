/**
 * This process's memory of what its deliveries produced, so a repeat that lands on the same instance
 * (WeChat's retry after a slow answer) gets the first answer's reply, or waits for it and fails with
 * it (B-wx-4, B-wx-6, B-wx-8). *Whether* a delivery is processed is decided by the Store records
 * (replay.ts) alone; this only shapes the answer of a repeat, so losing it (another instance, a
 * restart) costs a courtesy reply and nothing else.
 *
 * @module
 */
import { RecentMap } from './recent'

/** How many recent outcomes are kept (each entry is a few hundred bytes). */
const MAX_ENTRIES = 10_000

/** Outcomes by delivery identity: finished or in flight, and the ones still being decided. */
export class LocalOutcomes<O> {
  readonly #known: RecentMap<Promise<O>>
  /**
   * Per delivery, the request of this process that is asking the Store whether it is first. A repeat
   * arriving meanwhile (its own records answer first) waits for that decision instead of answering
   * `success` while the first one is about to process, or fail.
   */
  readonly #deciding = new Map<string, Promise<O | undefined>>()

  constructor(options: { ttlMs: number; now: () => number }) {
    this.#known = new RecentMap({ maxEntries: MAX_ENTRIES, ttlMs: options.ttlMs, now: options.now })
  }

  /**
   * Called by a request before it asks the Store about delivery `key`. Returns how to announce the
   * decision: `settle(work)` when the request processes it, `settle()` when it does not. Settling twice
   * does nothing. When another request of this process is already deciding, announcing is theirs and
   * the returned function does nothing.
   */
  begin(key: string): (work?: Promise<O>) => void {
    if (this.#deciding.has(key)) return () => undefined
    let resolve!: (value: Promise<O> | undefined) => void
    const decision = new Promise<O | undefined>((r) => (resolve = r))
    // A failed delivery rejects the decision too; only waiting repeats care (they answer 500).
    decision.catch(() => undefined)
    this.#deciding.set(key, decision)
    let settled = false
    return (work) => {
      if (settled) return
      settled = true
      if (work !== undefined) this.#known.set(key, work)
      this.#deciding.delete(key)
      resolve(work)
    }
  }

  /** What this process knows of delivery `key`: its outcome (maybe still in flight), or undefined. */
  lookup(key: string): Promise<O | undefined> | undefined {
    return this.#known.get(key) ?? this.#deciding.get(key)
  }

  /** Forgets delivery `key` (it failed: the retry must not get its outcome). */
  forget(key: string): void {
    this.#known.delete(key)
  }
}
