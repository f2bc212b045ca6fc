// The scanauth demo page: create a scene, show its QR code, poll its status, show the result.
// Plain browser JavaScript, no build step. Served by both example servers.
/* global localStorage, crypto, setInterval, clearInterval */

const POLL_MS = 2000 // how often a pending scene is polled
const MAX_BACKOFF_MS = 30000 // the longest wait between polls while the server cannot be reached
const AUTO_REFRESHES = 3 // expired codes replaced without asking, before the page asks the person

const $ = (id) => document.getElementById(id)
const card = $('card')

const deviceId = remember('scanauth.device_id', () => `web-${randomHex(16)}`)
const phoneOpenid = remember('scanauth.demo_openid', () => `phone-${randomHex(8)}`)

let config = { emulator: false }
let scene = null // { sceneStr, qrUrl, expiresAt }
let generation = 0 // bumped for every new scene: timers of an older one do nothing
let pollTimer = null
let tickTimer = null
let failures = 0
let autoRefreshes = 0

// ---------------------------------------------------------------- helpers

function randomHex(bytes) {
  // crypto.getRandomValues works on plain http too (randomUUID needs a secure context).
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')
}

function remember(key, make) {
  let value = null
  try {
    value = localStorage.getItem(key)
    if (!value) localStorage.setItem(key, (value = make()))
  } catch {
    value = value || make() // storage blocked: keep it for this page only
  }
  return value
}

function abbreviate(text, head = 6, tail = 4) {
  return text.length <= head + tail + 1 ? text : `${text.slice(0, head)}…${text.slice(-tail)}`
}

/** A date and a time, as two pieces that each stay on one line. */
function formatDate(iso) {
  const at = new Date(iso)
  return [at.toLocaleDateString(undefined, { dateStyle: 'medium' }), at.toLocaleTimeString(undefined, { timeStyle: 'short' })]
}

async function api(path, { method = 'GET', json, token } = {}) {
  const headers = {}
  if (json !== undefined) headers['content-type'] = 'application/json'
  if (token) headers.authorization = `Bearer ${token}`
  const res = await fetch(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json), cache: 'no-store' })
  let body = null
  try {
    body = await res.json()
  } catch {
    // not JSON (a proxy's error page): keep null
  }
  return { status: res.status, body }
}

function stopTimers() {
  clearTimeout(pollTimer)
  clearInterval(tickTimer)
  pollTimer = tickTimer = null
}

// ---------------------------------------------------------------- view

function setState(state) {
  card.dataset.state = state
  const pending = state === 'pending'
  $('qr-box').hidden = !['loading', 'pending', 'expired', 'error'].includes(state)
  $('result').hidden = !['authorized', 'need_purchase'].includes(state)
  $('qr-overlay').hidden = !['expired', 'error'].includes(state)
  // The outcome and the expired overlay say it all; the status line is for waiting and for errors.
  $('status').hidden = !['loading', 'pending', 'error'].includes(state)
  $('emulator-scan').hidden = !(pending && config.emulator)
  $('emulator-hint').hidden = !(pending && config.emulator)
  $('new-code').hidden = state !== 'need_purchase'
  $('sign-out').hidden = state !== 'authorized'
  $('lead').hidden = !['loading', 'pending'].includes(state)
}

function setStatus(text, tone = 'info') {
  $('status').dataset.tone = tone
  $('status-text').textContent = text
}

function showQr(url) {
  const img = $('qr')
  img.hidden = true
  $('qr-placeholder').hidden = false
  img.onload = () => {
    img.hidden = false
    $('qr-placeholder').hidden = true
  }
  img.onerror = () => setStatus('The QR image could not be loaded.', 'error')
  img.src = url
}

function showResult({ tone, title, text, facts }) {
  $('badge').dataset.tone = tone
  $('badge').textContent = tone === 'ok' ? '✓' : '!'
  $('result-title').textContent = title
  $('result-text').textContent = text
  const list = $('facts')
  list.replaceChildren()
  for (const [name, value, className] of facts) {
    const dt = document.createElement('dt')
    dt.textContent = name
    const dd = document.createElement('dd')
    if (className) dd.className = className
    for (const piece of Array.isArray(value) ? value : [value]) {
      const span = document.createElement('span')
      span.textContent = piece
      dd.append(span, ' ')
    }
    list.append(dt, dd)
  }
}

function authorizationFacts(a) {
  if (!a) return []
  if (a.type === 'points') return [['Type', 'Points'], ['Points left', String(a.remaining_points)]]
  return [['Type', 'Time pass'], ['Valid until', a.end_at ? formatDate(a.end_at) : '—']]
}

function showAuthorized(token, authorization) {
  stopTimers()
  showResult({
    tone: 'ok',
    title: 'Authorized',
    text: 'This device is signed in.',
    facts: [...authorizationFacts(authorization), ['Session', abbreviate(token), 'token']],
  })
  setState('authorized')
  setStatus('Signed in', 'ok')
}

function showNeedPurchase() {
  stopTimers()
  showResult({
    tone: 'warn',
    title: 'Purchase needed',
    text: 'The scan worked, but this WeChat user has no active authorization: the free trial has been used. Buy time or points, then scan a new code.',
    facts: [],
  })
  setState('need_purchase')
  setStatus('No active authorization', 'warn')
}

function showExpired() {
  stopTimers()
  $('overlay-text').textContent = 'This code has expired.'
  $('overlay-note').textContent = 'Get a new one when you are ready.'
  $('overlay-new').textContent = 'New code'
  setState('expired')
  setStatus('The code expired.', 'warn')
}

function showCreateError(detail) {
  stopTimers()
  $('qr').hidden = true
  $('qr-placeholder').hidden = false
  $('overlay-text').textContent = 'No code could be created.'
  $('overlay-note').textContent = ''
  $('overlay-new').textContent = 'Try again'
  setState('error')
  setStatus(detail, 'error')
}

// ---------------------------------------------------------------- flow

async function newScene({ auto = false } = {}) {
  const gen = ++generation
  stopTimers()
  failures = 0
  if (!auto) autoRefreshes = 0
  scene = null
  $('qr').hidden = true
  $('qr-placeholder').hidden = false
  setState('loading')
  setStatus(auto ? 'The code expired; here is a new one…' : 'Preparing a code…')
  let res
  try {
    res = await api('/auth/create_scene', { method: 'POST', json: { device_id: deviceId } })
  } catch {
    if (gen !== generation) return
    const delay = Math.min(MAX_BACKOFF_MS, POLL_MS * 2 ** ++failures)
    setStatus(`Cannot reach the server. Trying again in ${Math.round(delay / 1000)} s…`, 'error')
    pollTimer = setTimeout(() => gen === generation && newScene({ auto }), delay)
    return
  }
  if (gen !== generation) return
  if (res.status !== 200) return showCreateError(res.body?.detail || `The server answered ${res.status}.`)
  scene = { sceneStr: res.body.scene_str, qrUrl: res.body.qr_url, expiresAt: Date.now() + res.body.expires_in * 1000 }
  card.dataset.scene = scene.sceneStr
  showQr(scene.qrUrl)
  setState('pending')
  showPending()
  tickTimer = setInterval(() => gen === generation && tick(gen), 1000)
  schedulePoll(gen, POLL_MS)
}

function secondsLeft() {
  return Math.max(0, Math.ceil((scene.expiresAt - Date.now()) / 1000))
}

function showPending() {
  const s = secondsLeft()
  setStatus(`Waiting for a scan · valid for ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`)
}

function tick(gen) {
  if (failures > 0) return // the status line shows the connection problem
  showPending()
  if (secondsLeft() === 0) schedulePoll(gen, 0) // ask the server now rather than in up to 2 s
}

function schedulePoll(gen, delay) {
  clearTimeout(pollTimer)
  pollTimer = setTimeout(() => poll(gen), delay)
}

async function poll(gen) {
  if (gen !== generation || !scene) return
  let res
  try {
    res = await api(`/auth/status?scene=${encodeURIComponent(scene.sceneStr)}`)
    if (res.status >= 500) throw new Error(`the server answered ${res.status}`)
  } catch (error) {
    if (gen !== generation) return
    const delay = Math.min(MAX_BACKOFF_MS, POLL_MS * 2 ** ++failures)
    setStatus(`Connection problem (${error.message}). Retrying in ${Math.round(delay / 1000)} s…`, 'error')
    return schedulePoll(gen, delay)
  }
  if (gen !== generation) return
  failures = 0
  // 404: the server no longer knows the scene (a memory store restarted): treat it as expired.
  const status = res.status === 404 ? 'expired' : res.body?.status
  if (status === 'authorized') {
    localStorage.setItem('scanauth.session', res.body.session_token)
    return showAuthorized(res.body.session_token, res.body.authorization)
  }
  if (status === 'need_purchase') return showNeedPurchase()
  if (status === 'expired') {
    if (autoRefreshes < AUTO_REFRESHES) {
      autoRefreshes++
      return newScene({ auto: true })
    }
    return showExpired()
  }
  showPending()
  schedulePoll(gen, POLL_MS)
}

async function emulatedScan() {
  if (!scene) return
  const button = $('emulator-scan')
  const gen = generation
  button.disabled = true
  button.textContent = 'Scanning…'
  try {
    const res = await api('/demo/emulator-scan', { method: 'POST', json: { scene_str: scene.sceneStr, openid: phoneOpenid } })
    if (res.status !== 200) setStatus(res.body?.detail || `The emulated scan failed (${res.status}).`, 'error')
    else if (gen === generation) {
      setStatus('Scanned. Checking…')
      schedulePoll(gen, 0)
    }
  } catch {
    setStatus('Cannot reach the server.', 'error')
  } finally {
    button.disabled = false
    button.textContent = 'Scan with the emulated phone'
  }
}

/** A session from an earlier visit: show it when it is still valid, else start over. */
async function resumeSession() {
  const token = localStorage.getItem('scanauth.session')
  if (!token) return false
  try {
    const res = await api('/auth/session', { token })
    if (res.status === 200) {
      if (res.body.authorization) showAuthorized(token, res.body.authorization)
      else showNeedPurchase()
      return true
    }
    if (res.status === 401) localStorage.removeItem('scanauth.session')
  } catch {
    // fall through to a new code
  }
  return false
}

function signOut() {
  localStorage.removeItem('scanauth.session')
  newScene()
}

async function start() {
  $('emulator-scan').addEventListener('click', emulatedScan)
  $('new-code').addEventListener('click', () => newScene())
  $('overlay-new').addEventListener('click', () => newScene())
  $('sign-out').addEventListener('click', signOut)
  try {
    const res = await api('/demo/config')
    if (res.status === 200 && res.body) config = res.body
  } catch {
    // no demo endpoints: a plain page
  }
  const parts = [`Device ${abbreviate(deviceId, 8, 4)}`]
  if (config.framework) parts.push(config.framework)
  if (config.store) parts.push(`${config.store} store`)
  if (config.emulator) parts.push('WeChat emulator')
  $('footer').textContent = parts.join(' · ')
  if (!(await resumeSession())) await newScene()
}

start()
