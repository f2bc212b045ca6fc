/**
 * The emulator's HTML page: the emulated phone. It shows the live QR codes, lets a person "scan"
 * one by clicking it, and lists the scans made, newest first, with what the phone shows (the
 * account's reply, its links tappable; a confirm link that was answered marked used) and what the
 * callback answered. A click posts to
 * `POST /emulator/scan`, which pushes the scan to the app's callback exactly as `emulator.scan()`
 * does; the list shows every scan whoever asked for it (a click here, a test, an app's "Scan with the
 * emulated phone").
 *
 * Below them, the account's messages (reminders sent through the send APIs) as the chat, their links
 * tappable as the person they were sent to.
 *
 * The codes, scans and messages are rendered on the server (`page-view.ts`, everything escaped) and fetched
 * again every two seconds from `GET /emulator/view`. The "Scan as" openid is also the phone's user
 * for web OAuth: the script keeps it in the `wxemu_openid` cookie the authorize page reads, and a
 * reply's link goes through `GET /emulator/open`, which sets that cookie to the scanner first.
 *
 * @module
 */
import { escapeHtml } from './html'
import { OPENID_COOKIE } from './oauth'
import type { PageView } from './page-view'

/**
 * The page, with its live parts already rendered. With `ticket` (possibly `''` for an unknown code),
 * it shows that one code: what a phone opens from the QR's URL. Without, every live code.
 */
export function emulatorPage(options: { appId: string; demoOpenid: string; ticket?: string | undefined; view: PageView }): string {
  const focused = options.ticket !== undefined
  const { view } = options
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat emulator · ${escapeHtml(options.appId)}</title>
<style>${STYLE}</style>
</head>
<body data-focused="${focused ? '1' : ''}" data-ticket="${escapeHtml(options.ticket ?? '')}" data-openid="${escapeHtml(options.demoOpenid)}" data-cookie="${OPENID_COOKIE}">
<h1>WeChat emulator <span class="muted">${escapeHtml(options.appId)}</span></h1>
<p class="muted">Click a QR code (or its button) to scan it in the emulated WeChat app. The scan is pushed to the app's callback URL, signed (and encrypted in safe mode) like WeChat's. Links in the account's replies open as the user who scanned.</p>
<p class="settings"><label>Scan as openid <input id="openid" size="32"></label>
   <label><input type="checkbox" id="follower" checked> already follows the account (<code>SCAN</code>; else <code>subscribe</code>)</label></p>
<div id="codes">${view.codes}</div>
<p id="problem" class="error" role="alert" hidden></p>
<h2>Scans</h2>
<p class="muted" id="no-scans"${view.scanCount > 0 ? ' hidden' : ''}>No scans yet.</p>
<table id="scans"${view.scanCount === 0 ? ' hidden' : ''}>
<thead><tr><th>Time</th><th>Scene</th><th>openid</th><th>The phone shows</th><th>The callback answered</th></tr></thead>
<tbody>${view.scans}</tbody>
</table>
<section id="chat"${focused ? ' hidden' : ''}>
<h2>Messages from the account</h2>
<p class="muted" id="no-messages"${view.messageCount > 0 ? ' hidden' : ''}>No messages yet. Reminders (one-time subscription, template and customer-service messages) show here, their links opening as the person they were sent to.</p>
<ul id="messages">${view.messages}</ul>
</section>
<script>${SCRIPT}</script>
</body>
</html>
`
}

/**
 * Narrow screens (a phone is 320 px wide) get the table as stacked cards, each cell labelled, so
 * nothing needs scrolling sideways; long openids and scenes break anywhere.
 */
const STYLE = `
  *, *::before, *::after { box-sizing: border-box }
  body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; padding: 0 1rem; color: #222; overflow-wrap: anywhere }
  h1 { font-size: 1.3rem } .muted { color: #666 } code { background: #f3f3f3; padding: 0 .25em }
  .settings label { display: inline-block; margin: 0 1rem .3rem 0 } #openid { max-width: 100% }
  #codes { display: flex; flex-wrap: wrap; gap: 1rem }
  .code { border: 1px solid #ddd; border-radius: 8px; padding: .75rem; width: 15rem; max-width: 100% }
  .code img { width: 100%; image-rendering: pixelated } .code img[data-scan] { cursor: pointer }
  .code.scanned img { opacity: .35 }
  .code button { width: 100%; padding: .4rem; margin-top: .3rem; cursor: pointer }
  .code button.secondary { background: none; border: 1px solid #bbb; color: #555 }
  .badge { margin: .3rem 0 0; color: #1a7f37; font-weight: 600 }
  .error { color: #b00 } #problem { margin: .5rem 0 }
  #scans { border-collapse: collapse; width: 100%; font-size: .9rem }
  #scans th, #scans td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #eee }
  #scans th { font-weight: 600; color: #555 }
  .bubble { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .3rem .5rem; white-space: pre-wrap; max-width: 24rem }
  .reply-link { color: #576b95 } .reply-link.dead { text-decoration: underline dotted }
  .reply-link.used { color: #888; text-decoration: line-through } .link-used { color: #666; font-size: .85em; white-space: nowrap }
  #messages { list-style: none; padding: 0 } .message { margin: 0 0 .8rem } .message .bubble { background: #f7f7f7 }
  @media (max-width: 40rem) {
    #scans thead { display: none }
    #scans, #scans tbody, #scans tr, #scans td { display: block; width: 100% }
    #scans tr { border-bottom: 1px solid #ddd; padding: .4rem 0 }
    #scans td { border: 0; padding: .1rem 0 }
    #scans td::before { content: attr(data-label) ": "; font-weight: 600; color: #555 }
  }
`

/** Clicks (by delegation, since the parts are replaced), the openid cookie, and the refresh. */
const SCRIPT = `
(() => {
  const data = document.body.dataset
  const focused = data.focused === '1'
  const openid = document.getElementById('openid')
  const follower = document.getElementById('follower')
  const problem = document.getElementById('problem')
  const codes = document.getElementById('codes')
  const table = document.getElementById('scans')
  const noScans = document.getElementById('no-scans')
  const messages = document.getElementById('messages')
  const noMessages = document.getElementById('no-messages')

  // The authorize page knows the phone's user from this cookie, as WeChat knows it from the app.
  function remember() {
    localStorage.setItem('emulator-openid', openid.value)
    document.cookie = data.cookie + '=' + encodeURIComponent(openid.value) + '; path=/; samesite=lax'
  }
  openid.value = localStorage.getItem('emulator-openid') || data.openid
  remember()
  openid.addEventListener('change', remember)

  function fail(text) {
    problem.textContent = new Date().toLocaleTimeString() + ' ' + text
    problem.hidden = false
  }

  function localTimes(root) {
    for (const t of root.querySelectorAll('time[datetime]')) t.textContent = new Date(t.dateTime).toLocaleTimeString()
  }

  async function scan(ticket) {
    try {
      const res = await fetch('/emulator/scan', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket, openid: openid.value, subscribed: follower.checked }) })
      const out = await res.json()
      if (!res.ok) return fail('Scan failed: ' + (out.detail || res.status))
      problem.hidden = true
    } catch (e) { fail('Scan failed: ' + e) }
    refresh()
  }

  codes.addEventListener('click', (event) => {
    const target = event.target.closest('[data-scan]')
    if (target) scan(target.dataset.scan)
  })

  let shown = null
  async function refresh() {
    try {
      const res = await fetch('/emulator/view' + (focused ? '?ticket=' + encodeURIComponent(data.ticket) : ''))
      const view = await res.json()
      const key = view.codes + '\\u0000' + view.scans + '\\u0000' + view.messages
      if (key === shown) return
      shown = key
      // Server-rendered and escaped there (page-view.ts): no value from a scene or a reply is markup.
      codes.innerHTML = view.codes
      table.tBodies[0].innerHTML = view.scans
      table.hidden = view.scanCount === 0
      noScans.hidden = view.scanCount > 0
      messages.innerHTML = view.messages
      noMessages.hidden = view.messageCount > 0
      localTimes(document.body)
    } catch { /* the emulator may be restarting */ }
  }
  localTimes(document.body)
  setInterval(refresh, 2000)
})()
`
