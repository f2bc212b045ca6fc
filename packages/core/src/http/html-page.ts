/**
 * The skeleton of scanauth's own HTML pages, for the phone of the person who scanned: the confirm
 * page (B-confirm-11) and the phone pages (B-phone-9). Pure functions from what to show to HTML
 * text; every value is escaped where it is written. The pages work without JavaScript, except the
 * cashier, whose one script is its own (a nonce).
 *
 * @module
 */

/**
 * Headers of every page: never cached (it carries a one-time token), never framed (a page that signs
 * a device in or takes a payment must not be clickjacked), no referrer (the address holds a ticket
 * or an order), and nothing loaded but its own inline style.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
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

// One column, 320 px wide and up, thumb-sized buttons.
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:24px 16px;color:#111;background:#f6f6f6}
main{max-width:420px;margin:0 auto;background:#fff;border-radius:12px;padding:20px;box-shadow:0 1px 3px #0002}
h1{font-size:20px;margin:0 0 12px}h2{font-size:17px;margin:16px 0 8px}dl{margin:0 0 16px}dt{color:#555;font-size:14px}dd{margin:0 0 8px;font-weight:600;overflow-wrap:anywhere}
.device{font-size:18px}.warn{background:#fff4e5;border-radius:8px;padding:10px;font-size:14px}
.actions{display:flex;gap:12px;margin-top:16px}.actions form{flex:1;margin:0}
form.plan{margin:0 0 10px}ul{padding-left:20px}
button{width:100%;min-height:48px;font-size:18px;font-weight:600;border-radius:8px;border:2px solid #111;cursor:pointer;background:#fff}
.deny{background:#b3261e;border-color:#b3261e;color:#fff}.confirm,.buy{background:#1a7f37;border-color:#1a7f37;color:#fff}`

/** A whole page around `body`; `head` adds to the head (the cashier's scripts). */
export function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style>${head}</head>
<body><main>${body}</main></body></html>
`
}

/** A page that says why nothing happened (every refused request of a page route). */
export function errorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p><p>Nothing was changed.</p>`)
}
