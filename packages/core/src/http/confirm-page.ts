/**
 * The confirm page (`confirm: 'link'`, docs/behaviour.md B-confirm-5, B-confirm-11): server-rendered
 * HTML that works without JavaScript and fits a phone. Pure functions from what to show to the HTML
 * text; every value is escaped where it is written.
 *
 * @module
 */
import type { ConfirmationView } from '../service/confirm-api'

/**
 * Headers of every confirm page: never cached (it carries a one-time CSRF token), never framed (a
 * page that signs a device in must not be clickjacked), no referrer (the address holds the ticket),
 * and nothing loaded but its own inline style.
 */
export const CONFIRM_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
}

/** Text made safe inside HTML text and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:24px 16px;color:#111;background:#f6f6f6}
main{max-width:420px;margin:0 auto;background:#fff;border-radius:12px;padding:20px;box-shadow:0 1px 3px #0002}
h1{font-size:20px;margin:0 0 12px}dl{margin:0 0 16px}dt{color:#555;font-size:14px}dd{margin:0 0 8px;font-weight:600;overflow-wrap:anywhere}
.device{font-size:18px}.warn{background:#fff4e5;border-radius:8px;padding:10px;font-size:14px}
.actions{display:flex;gap:12px;margin-top:16px}.actions form{flex:1;margin:0}
button{width:100%;min-height:48px;font-size:18px;font-weight:600;border-radius:8px;border:2px solid #111;cursor:pointer}
.deny{background:#b3261e;border-color:#b3261e;color:#fff}.confirm{background:#1a7f37;border-color:#1a7f37;color:#fff}`

/** A whole page around `body`. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`
}

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

/** What the phone sees after its decision. */
export function resultPage(result: 'authorized' | 'need_purchase' | 'denied', deviceLabel: string): string {
  const device = `<p class="device">${escapeHtml(deviceLabel)}</p>`
  switch (result) {
    case 'authorized':
      return page('Signed in', `<h1>Signed in</h1>${device}<p>The device is signed in. You can close this page.</p>`)
    case 'need_purchase':
      return page('Signed in: purchase needed', `<h1>Signed in: purchase needed</h1>${device}<p>You are signed in, but have no time or points left. The device shows how to buy more.</p>`)
    case 'denied':
      return page('Sign-in denied', `<h1>Sign-in denied</h1>${device}<p>The device was not signed in. If you did not ask for this code, someone may have sent it to you: nothing was shared.</p>`)
  }
}

/** A page that says why nothing happened (every refused confirm request, B-confirm-12). */
export function errorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p><p>Nothing was changed.</p>`)
}
