/**
 * The emulator's background work (notification deliveries with their retry waits, refunds turning
 * SUCCESS later), tracked so tests can wait for it with `settled()` and `close()` can end it.
 *
 * @module
 */

/** A set of running tasks that can be awaited as a whole. */
export class BackgroundWork {
  readonly #running = new Set<Promise<unknown>>()

  /** Runs `task` in the background; a failure is swallowed here (tasks record their own outcome). */
  run(task: () => Promise<unknown>): void {
    const promise: Promise<unknown> = task()
      .catch(() => undefined)
      .finally(() => this.#running.delete(promise))
    this.#running.add(promise)
  }

  /** Resolves once nothing runs, including tasks started by tasks that were running. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running])
  }
}
