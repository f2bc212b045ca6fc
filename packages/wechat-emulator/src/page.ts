/**
 * The emulator's HTML page: the live QR codes with their images, a way for a person to "scan" one
 * by clicking it, and the scans the emulator made, newest first. A click posts to
 * `POST /emulator/scan`, which pushes the scan to the app's callback exactly as `emulator.scan()`
 * does. The list comes from `GET /emulator/scans`, so it shows every scan whoever asked for it (a
 * click here, a test, or an app's "Scan with the emulated phone"), with the callback's answer.
 *
 * All data is fetched as JSON and written with `textContent`, so nothing from a scene or a reply is
 * ever parsed as HTML.
 *
 * @module
 */

/** Escapes text for an HTML attribute or element. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * The page. With `ticket` (possibly `''` for an unknown code), it shows that one code: what a phone
 * opens from the QR's URL. Without, every live code, refreshed every two seconds.
 */
export function emulatorPage(options: { appId: string; demoOpenid: string; ticket?: string | undefined }): string {
  const focused = options.ticket !== undefined
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat emulator · ${escapeHtml(options.appId)}</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222 }
  h1 { font-size: 1.3rem } .muted { color: #666 } code { background: #f3f3f3; padding: 0 .25em }
  #codes { display: flex; flex-wrap: wrap; gap: 1rem }
  .code { border: 1px solid #ddd; border-radius: 8px; padding: .75rem; width: 15rem; overflow-wrap: anywhere }
  .code img { width: 100%; cursor: pointer; image-rendering: pixelated }
  .code button { width: 100%; padding: .4rem; margin-top: .3rem; cursor: pointer }
  .error { color: #b00 } #problem { margin: .5rem 0 }
  .scans { overflow-x: auto } #scans { border-collapse: collapse; width: 100%; font-size: .9rem }
  #scans th, #scans td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #eee; overflow-wrap: anywhere }
  #scans th { font-weight: 600; color: #555; white-space: nowrap } #scans td.time { white-space: nowrap }
</style>
</head>
<body data-focused="${focused ? '1' : ''}" data-ticket="${escapeHtml(options.ticket ?? '')}" data-openid="${escapeHtml(options.demoOpenid)}">
<h1>WeChat emulator <span class="muted">${escapeHtml(options.appId)}</span></h1>
<p class="muted">Click a QR code (or its button) to scan it in the emulated WeChat app. The scan is pushed to the app's callback URL, signed (and encrypted in safe mode) like WeChat's.</p>
<p><label>Scan as openid <input id="openid" size="32"></label>
   <label><input type="checkbox" id="follower" checked> already follows the account (<code>SCAN</code>; else <code>subscribe</code>)</label></p>
<div id="codes"><p class="muted">No live QR codes yet. Create a scene in the app.</p></div>
<p id="problem" class="error" role="alert" hidden></p>
<h2>Scans</h2>
<p class="muted" id="no-scans">No scans yet.</p>
<div class="scans"><table id="scans" hidden>
<thead><tr><th>Time</th><th>Scene</th><th>openid</th><th>The callback answered</th></tr></thead>
<tbody></tbody>
</table></div>
<script>
(() => {
  const focused = document.body.dataset.focused === '1'
  const only = document.body.dataset.ticket || ''
  const openid = document.getElementById('openid')
  openid.value = localStorage.getItem('emulator-openid') || document.body.dataset.openid
  openid.addEventListener('change', () => localStorage.setItem('emulator-openid', openid.value))
  const follower = document.getElementById('follower')
  const problem = document.getElementById('problem')
  const codes = document.getElementById('codes')
  const table = document.getElementById('scans')
  const noScans = document.getElementById('no-scans')
  let shown = null
  let shownScans = null

  function fail(text) {
    problem.textContent = new Date().toLocaleTimeString() + ' ' + text
    problem.hidden = false
  }

  async function scan(ticket) {
    try {
      const res = await fetch('/emulator/scan', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket, openid: openid.value, subscribed: follower.checked }) })
      const out = await res.json()
      if (!res.ok) return fail('Scan failed: ' + (out.detail || res.status))
      problem.hidden = true
    } catch (e) { fail('Scan failed: ' + e) }
    refreshScans()
  }

  function cell(text, className) {
    const td = document.createElement('td')
    td.textContent = text
    if (className) td.className = className
    return td
  }

  /** What the callback answered, in words: the HTTP status, the account's reply, and what WeChat would object to. */
  function answerOf(s) {
    if (s.status === null) return 'no answer after ' + s.attempts + ' deliveries'
    let text = 'HTTP ' + s.status + (s.attempts > 1 ? ' (after ' + s.attempts + ' deliveries)' : '')
    if (s.reply !== null) text += ' · replied "' + s.reply + '"'
    if (s.replyError !== null) text += ' · ' + s.replyError
    return text
  }

  function renderScans(list) {
    const key = JSON.stringify(list)
    if (key === shownScans) return
    shownScans = key
    const body = table.tBodies[0]
    body.replaceChildren()
    for (const s of list) {
      const tr = document.createElement('tr')
      const bad = s.status !== 200 || s.replyError !== null
      tr.append(
        cell(new Date(s.at).toLocaleTimeString(), 'time'),
        cell(s.sceneStr + (s.event === 'subscribe' ? ' (subscribe)' : '')),
        cell(s.openid),
        cell(answerOf(s), bad ? 'error' : ''),
      )
      body.append(tr)
    }
    table.hidden = list.length === 0
    noScans.hidden = list.length > 0
  }

  async function refreshScans() {
    try {
      const res = await fetch('/emulator/scans')
      const list = (await res.json()).filter((s) => !focused || s.ticket === only)
      renderScans(list)
    } catch { /* the emulator may be restarting */ }
  }

  function render(list) {
    const key = list.map((c) => c.ticket).join()
    if (key === shown) return
    shown = key
    codes.replaceChildren()
    if (list.length === 0) {
      const p = document.createElement('p'); p.className = 'muted'
      p.textContent = focused ? 'This QR code is unknown or has expired.' : 'No live QR codes yet. Create a scene in the app.'
      codes.append(p); return
    }
    for (const c of list) {
      const box = document.createElement('div'); box.className = 'code'
      const img = document.createElement('img'); img.src = c.imageUrl; img.alt = 'QR code for ' + c.sceneStr; img.title = 'Click to scan'
      img.addEventListener('click', () => scan(c.ticket))
      const scene = document.createElement('div'); scene.className = 'muted'; scene.textContent = c.sceneStr
      const until = document.createElement('div'); until.className = 'muted'
      until.textContent = c.expiresAt === null ? 'permanent' : 'expires ' + new Date(c.expiresAt).toLocaleTimeString()
      const button = document.createElement('button'); button.textContent = 'Scan'
      button.addEventListener('click', () => scan(c.ticket))
      box.append(img, scene, until, button)
      codes.append(box)
    }
  }

  async function refresh() {
    try {
      const res = await fetch('/emulator/tickets')
      const list = (await res.json()).filter((c) => c.live && (!focused || c.ticket === only))
      render(list)
    } catch { /* the emulator may be restarting */ }
  }
  refresh()
  refreshScans()
  setInterval(() => { refresh(); refreshScans() }, 2000)
})()
</script>
</body>
</html>
`
}
