/**
 * `every`: the example's one background timer, behind both the purge and the reconciler. A task runs
 * `everyMs` after the previous one ended (never two at once, however long one takes), the timer never
 * holds the process open, and stopping waits for a run in progress, so the store can be closed right
 * after. A timer in a server must not bring it down: a failure is logged, and the next run comes.
 *
 * @module
 */

/** How {@link every} runs a task. */
export interface EveryOptions {
  /** Milliseconds between the end of one run and the start of the next (the first comes after `everyMs` too). */
  everyMs: number
  /** Names the task in the line a failure logs: `<name> failed: <message>`. */
  name: string
  /** Where a run that did something, or failed, is written. */
  log: (line: string) => void
}

/**
 * Runs `task` every `options.everyMs` and logs the line it resolves with; `null` logs nothing, so an
 * idle server's log stays quiet. Returns the stop function: no run starts after it, and it resolves
 * once a run in progress has finished.
 */
export function every(options: EveryOptions, task: () => Promise<string | null>): () => Promise<void> {
  let stopped = false
  let running: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const run = async () => {
    try {
      const line = await task()
      if (line !== null) options.log(line)
    } catch (error) {
      options.log(`${options.name} failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const schedule = () => {
    timer = setTimeout(() => {
      running = run().finally(() => {
        if (!stopped) schedule()
      })
    }, options.everyMs)
    timer.unref()
  }
  schedule()
  return async () => {
    stopped = true
    clearTimeout(timer)
    await running
  }
}
