/**
 * The example's safety net for payments: `auth.reconcileOrders()` on a timer (docs/behaviour.md,
 * B-order-10). A notification can be lost (the server was down through WeChat Pay's retries, a
 * proxy refused it); asking WeChat Pay about open orders grants those paid anyway and closes those
 * past their deadline, so no payer goes without what they paid for.
 *
 * @module
 */
import type { ReconcileResult, ScanAuth } from '@scanauth/core'
import { every } from './every'

/** How the timer runs. */
export interface ReconcileTimerOptions {
  /** Milliseconds between the end of one reconciliation and the start of the next. */
  everyMs: number
  /** Where a reconciliation that did something, or failed, is written. */
  log: (line: string) => void
}

/**
 * Reconciles every `everyMs` through {@link every}: first after `everyMs`, never two at once, never
 * holding the process open. Returns the stop function, which resolves once a running
 * reconciliation has finished.
 */
export function startReconcileTimer(auth: Pick<ScanAuth, 'reconcileOrders'>, options: ReconcileTimerOptions): () => Promise<void> {
  return every({ ...options, name: 'reconcile' }, async () => report(await auth.reconcileOrders()))
}

/** One line when an order was granted, closed or could not be checked; an idle shop's log stays quiet. */
function report(result: ReconcileResult): string | null {
  if (result.granted + result.closed + result.failed === 0) return null
  const errors = result.errors.map((e) => `; ${e.orderId}: ${e.message}`).join('')
  return `reconcile: ${result.checked} orders checked, ${result.granted} granted, ${result.closed} closed, ${result.open} open, ${result.failed} failed${errors}`
}
