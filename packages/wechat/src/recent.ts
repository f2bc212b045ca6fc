/**
 * A small bounded map whose entries expire: the callback's memory of this process's recent outcomes,
 * so a repeat that lands on the same instance gets the first answer's reply (whether a push is
 * processed at all is decided by the Store records, replay.ts). Bounded so a flood of deliveries
 * cannot grow memory without limit; the oldest entries go first, which are also the ones least
 * likely to be retried.
 *
 * @module
 */

/** A map with a maximum size and a time to live per entry, on an injected clock. */
export class RecentMap<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>()
  readonly #maxEntries: number
  readonly #ttlMs: number
  readonly #now: () => number

  constructor(options: { maxEntries: number; ttlMs: number; now: () => number }) {
    this.#maxEntries = Math.max(1, options.maxEntries)
    this.#ttlMs = options.ttlMs
    this.#now = options.now
  }

  /** The live value for `key`, or undefined. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (this.#now() >= entry.expiresAt) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Stores `value` for `key` for the time to live, evicting the oldest entries beyond the maximum size. */
  set(key: string, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs })
    // Map iteration is insertion order, so the first keys are the oldest entries.
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break
      this.#entries.delete(oldest)
    }
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#entries.delete(key)
  }

  /** Number of entries held (some may have expired but not yet been evicted). */
  get size(): number {
    return this.#entries.size
  }
}
