/**
 * Cancellation: an abortable sleep, a controller tied to a parent signal, and the wrapper that makes a
 * call settle the moment its caller aborts, while a result already in hand still wins.
 *
 * @module
 */
import { abortedError } from './errors'

/** Waits `ms` milliseconds; rejects with `aborted` (and clears the timer) as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortedError(signal.reason))
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortedError(signal.reason))
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** A controller that also aborts when `parent` does; `dispose()` detaches it (call it when done). */
export interface LinkedController {
  /** Its signal: aborted by `abort()` or by the parent. */
  signal: AbortSignal
  /** Aborts it (not the parent). */
  abort(): void
  /** Detaches it from the parent. */
  dispose(): void
}

/** Creates a {@link LinkedController} under `parent` (`AbortSignal.any` without needing a recent browser). */
export function linkedController(parent: AbortSignal): LinkedController {
  const controller = new AbortController()
  const onAbort = () => controller.abort(parent.reason)
  if (parent.aborted) controller.abort(parent.reason)
  else parent.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    dispose: () => parent.removeEventListener('abort', onAbort),
  }
}

/**
 * Runs `body` with a signal of its own and settles as soon as either `body` does or `callerSignal`
 * aborts: then the run's signal is aborted too, so no request or timer of it stays open. A result that
 * `body` has already handed to `hold` (an `authorized` answer read from the wire, whose callbacks are
 * still running) wins over an abort arriving at that moment: a signed-in user is never lost.
 */
export function runAbortable<T>(callerSignal: AbortSignal | undefined, body: (signal: AbortSignal, hold: (value: T) => void) => Promise<T>): Promise<T> {
  if (callerSignal?.aborted === true) return Promise.reject(abortedError(callerSignal.reason))
  const controller = new AbortController()
  let held: { value: T } | undefined
  return new Promise<T>((resolve, reject) => {
    let settled = false
    const settle = (finish: () => void) => {
      if (settled) return
      settled = true
      callerSignal?.removeEventListener('abort', onAbort)
      controller.abort()
      finish()
    }
    const onAbort = () => {
      const value = held
      if (value !== undefined) settle(() => resolve(value.value))
      else settle(() => reject(abortedError(callerSignal?.reason)))
    }
    callerSignal?.addEventListener('abort', onAbort, { once: true })
    let running: Promise<T>
    try {
      running = body(controller.signal, (value) => {
        held = { value }
      })
    } catch (error) {
      running = Promise.reject(error)
    }
    running.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    )
  })
}
