/** What the test services' modules share. */

/** Whether a server answered at a URL, and if not, why. */
export type Probe = { ok: true } | { ok: false; reason: string }

/** A server the test services started for this run. */
export interface ThrowawayServer {
  /** Where the tests reach it (what REDIS_URL or DATABASE_URL becomes). */
  url: string
  /** Kills it at once, synchronously: for a run that ends without its teardown (an interrupt). */
  kill(): void
  /** Shuts it down and waits for its process to exit. */
  stop(): Promise<void>
}
