/**
 * The confirm page (`confirm: 'link'`, docs/behaviour.md B-confirm-5, B-confirm-11): server-rendered
 * HTML that works without JavaScript and fits a phone. Pure functions from what to show to the HTML
 * text; every value is escaped where it is written.
 *
 * @module
 */
import type { ConfirmationDecisionResult, ConfirmationView } from '../service/confirm-api'
import { escapeHtml, page, PAGE_HEADERS } from './html-page'
import { plansSection } from './phone-page'

export { errorPage, escapeHtml } from './html-page'

/** Headers of every confirm page (B-confirm-11): those of every page of ours. */
export const CONFIRM_PAGE_HEADERS = PAGE_HEADERS

/** "3 min 5 s" for an age in seconds. */
function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** One of the two forms: the same fields, a different button, both the same size (B-confirm-11). */
function decisionForm(ticket: string, csrf: string, decision: 'confirm' | 'deny', label: string): string {
  return `<form method="post" action="confirm">
<input type="hidden" name="ticket" value="${escapeHtml(ticket)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<button type="submit" name="decision" value="${decision}" class="${decision}">${label}</button>
</form>`
}

/** The page that asks: which device, from where, how old, and Deny beside Confirm. */
export function decisionPage(input: { ticket: string; csrf: string; view: ConfirmationView }): string {
  const { view } = input
  return page(
    'Sign in on this device?',
    `<h1>Sign in on this device?</h1>
<dl>
<dt>Device</dt><dd class="device">${escapeHtml(view.deviceLabel)}</dd>
<dt>Code requested from</dt><dd>${view.requestedFrom === null ? 'unknown network' : escapeHtml(view.requestedFrom)}</dd>
<dt>Code shown</dt><dd>${formatAge(view.ageSeconds)} ago</dd>
</dl>
<p class="warn">Only confirm if you are in front of this device and asked to sign in yourself. If someone sent you this code, tap Deny.</p>
<div class="actions">
${decisionForm(input.ticket, input.csrf, 'deny', 'Deny')}
${decisionForm(input.ticket, input.csrf, 'confirm', 'Confirm')}
</div>`,
  )
}

/** What the phone sees after its decision; with `payment`, a `need_purchase` page offers the plans (B-phone-8). */
export function resultPage(result: ConfirmationDecisionResult['result'], deviceLabel: string, payment?: ConfirmationDecisionResult['payment']): string {
  const device = `<p class="device">${escapeHtml(deviceLabel)}</p>`
  if (result === 'need_purchase' && payment !== undefined) {
    return page('Signed in: purchase needed', `<h1>Signed in: purchase needed</h1>${device}<p>You have no time or points left. Buy here, on this phone:</p>${plansSection(payment, 'm/pay')}`)
  }
  switch (result) {
    case 'authorized':
      return page('Signed in', `<h1>Signed in</h1>${device}<p>The device is signed in. You can close this page.</p>`)
    case 'need_purchase':
      return page('Signed in: purchase needed', `<h1>Signed in: purchase needed</h1>${device}<p>You are signed in, but have no time or points left. The device shows how to buy more.</p>`)
    case 'denied':
      return page('Sign-in denied', `<h1>Sign-in denied</h1>${device}<p>The device was not signed in. If you did not ask for this code, someone may have sent it to you: nothing was shared.</p>`)
  }
}
