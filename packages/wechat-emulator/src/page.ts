/**
 * The emulator's HTML page: the live QR codes with their images, and a way for a person to "scan" one
 * by clicking it. A click posts to `POST /emulator/scan`, which pushes the scan to the app's callback
 * exactly as `emulator.scan()` does, and shows what the app answered.
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
  #log li { margin: .3rem 0 } .error { color: #b00 }
</style>
</head>
<body data-focused="${focused ? '1' : ''}" data-ticket="${escapeHtml(options.ticket ?? '')}" data-openid="${escapeHtml(options.demoOpenid)}">
<h1>WeChat emulator <span class="muted">${escapeHtml(options.appId)}</span></h1>
<p class="muted">Click a QR code (or its button) to scan it in the emulated WeChat app. The scan is pushed to the app's callback URL, signed (and encrypted in safe mode) like WeChat's.</p>
<p><label>Scan as openid <input id="openid" size="32"></label>
   <label><input type="checkbox" id="follower" checked> already follows the account (<code>SCAN</code>; else <code>subscribe</code>)</label></p>
<div id="codes"><p class="muted">No live QR codes yet. Create a scene in the app.</p></div>
<h2>Scans</h2>
<ul id="log"></ul>
<script>
(() => {
  const focused = document.body.dataset.focused === '1'
  const only = document.body.dataset.ticket || ''
  const openid = document.getElementById('openid')
  openid.value = localStorage.getItem('emulator-openid') || document.body.dataset.openid
  openid.addEventListener('change', () => localStorage.setItem('emulator-openid', openid.value))
  const follower = document.getElementById('follower')
  const log = document.getElementById('log')
  const codes = document.getElementById('codes')
  let shown = null

  function note(text, isError) {
    const li = document.createElement('li')
    li.textContent = new Date().toLocaleTimeString() + ' ' + text
    if (isError) li.className = 'error'
    log.prepend(li)
  }

  async function scan(ticket) {
    try {
      const res = await fetch('/emulator/scan', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket, openid: openid.value, subscribed: follower.checked }) })
      const out = await res.json()
      if (!res.ok) return note('Scan failed: ' + (out.detail || res.status), true)
      const said = out.reply && out.reply.Content ? ' The account replied: "' + out.reply.Content + '"' : ''
      const problem = out.replyError ? ' (' + out.replyError + ')' : ''
      note('Pushed ' + out.event.Event + ' ' + out.event.EventKey + ' from ' + out.event.FromUserName + ' → HTTP ' + out.status + '.' + said + problem, Boolean(out.replyError))
    } catch (e) { note('Scan failed: ' + e, true) }
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
  setInterval(refresh, 2000)
})()
</script>
</body>
</html>
`
}
