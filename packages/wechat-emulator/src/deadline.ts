/**
 * The deadline of one outgoing delivery (a push to the app, a payment notification): a signal that
 * aborts after `ms` with a `TimeoutError`, or as soon as the emulator closes.
 *
 * Why not `AbortSignal.any([AbortSignal.timeout(ms), closed])`: on Node 20 the combined signal keeps
 * its sources only weakly, so a garbage collection before the timeout fires can drop the timeout
 * signal, and the delivery then waits forever instead of counting as unanswered (WeChat's retries
 * never come). A timer held here until `done()` cannot be collected.
 *
 * @module
 */

/** A signal for one delivery, and `done()`, to call once it settled (it clears the timer). */
export function deliveryDeadline(ms: number, closed: AbortSignal): { signal: AbortSignal; done(): void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms)
  const onClose = () => controller.abort(closed.reason)
  if (closed.aborted) onClose()
  else closed.addEventListener('abort', onClose, { once: true })
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer)
      closed.removeEventListener('abort', onClose)
    },
  }
}
