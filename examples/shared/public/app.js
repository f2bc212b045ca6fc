// The scanauth demo page: create a scene, show its QR code, wait for the scan (an event stream, else
// a long poll, else polling: wait.js), show the result; when a purchase is needed, offer the plans and
// wait for the payment (pay.js); sign out.
// Plain browser JavaScript, no build step. Served by both example servers.
//
// The session token is kept in localStorage ('scanauth.session'), so a reload stays signed in. It is
// saved when the status answers authorized and removed by "Sign out", by "New code" (a new code means
// starting over) and when the server no longer knows it (401).
/* global setInterval, clearInterval */
import { abbreviate, api, forgetSavedSession, formatDate, randomHex, remember, saveSession, savedSession } from './lib.js'
import { createCheckout } from './pay.js'
import { waitForScene } from './wait.js'

const RETRY_MS = 2000 // the first wait before asking for a code again while the server cannot be reached
const MAX_BACKOFF_MS = 30000 // the longest such wait
const AUTO_REFRESHES = 3 // expired codes replaced without asking, before the page asks the person

const $ = (id) => document.getElementById(id)
const card = $('card')
const checkout = createCheckout({
  $,
  setState,
  setStatus,
  emulated: () => config.pay_emulator === true,
  onAuthorized: (token, authorization) => {
    saveSession(token)
    showAuthorized(token, authorization)
  },
})

const deviceId = remember('scanauth.device_id', () => `web-${randomHex(16)}`)
const phoneOpenid = remember('scanauth.demo_openid', () => `phone-${randomHex(8)}`)

let config = { emulator: false }
let scene = null // { sceneStr, qrUrl, expiresAt }
let generation = 0 // bumped for every new scene: timers of an older one do nothing
let waiting = null // the wait for the current scene's scan (wait.js), while it runs
let retryTimer = null
let tickTimer = null
let failures = 0 // failed attempts to create a code, or connection trouble while waiting
let autoRefreshes = 0
let session = null // the token of the authorized card

// ---------------------------------------------------------------- timers

/** Ends the wait for a scan (the event stream, a request in flight) and the timers. */
function stopTimers() {
  checkout.stop()
  waiting?.stop()
  clearTimeout(retryTimer)
  clearInterval(tickTimer)
  waiting = retryTimer = tickTimer = null
}

// ---------------------------------------------------------------- view

function setState(state) {
  card.dataset.state = state
  const pending = state === 'pending'
  $('qr-box').hidden = !['loading', 'pending', 'expired', 'error'].includes(state)
  $('result').hidden = !['authorized', 'need_purchase'].includes(state)
  $('shop').hidden = state !== 'need_purchase'
  $('paying').hidden = state !== 'paying'
  $('qr-overlay').hidden = !['expired', 'error'].includes(state)
  // The outcome and the expired overlay say it all; the status line is for waiting and for errors.
  // (A result card shows it again for a problem: see setStatus.)
  $('status').hidden = !['loading', 'pending', 'error', 'paying'].includes(state)
  $('emulator-scan').hidden = !(pending && config.emulator)
  $('emulator-hint').hidden = !(pending && config.emulator)
  $('emulator-pay').hidden = !(state === 'paying' && config.pay_emulator)
  $('pay-hint').hidden = !(state === 'paying' && config.pay_emulator)
  $('other-plan').hidden = state !== 'paying'
  $('new-code').hidden = state !== 'need_purchase'
  $('sign-out').hidden = state !== 'authorized'
  $('lead').hidden = !['loading', 'pending'].includes(state)
}

/** Sets the status line; on a result card (authorized, need_purchase) it is shown for problems and progress only, with `show`. */
function setStatus(text, tone = 'info', { show = false } = {}) {
  $('status').dataset.tone = tone
  $('status-text').textContent = text
  if (show || tone === 'error') $('status').hidden = false
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
  session = token
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
    text: 'The scan worked, but this WeChat user has no active authorization: the free trial has been used. Choose a plan and pay with WeChat.',
    facts: [],
  })
  setStatus('No active authorization', 'warn')
  // The device of the scanned scene buys for that scene's user; one back with a saved session (no
  // scene) buys with the session.
  checkout.offer(scene ? { sceneStr: scene.sceneStr } : { token: session })
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
    const delay = Math.min(MAX_BACKOFF_MS, RETRY_MS * 2 ** ++failures)
    setStatus(`Cannot reach the server. Trying again in ${Math.round(delay / 1000)} s…`, 'error')
    retryTimer = setTimeout(() => gen === generation && newScene({ auto }), delay)
    return
  }
  if (gen !== generation) return
  if (res.status !== 200) return showCreateError(res.body?.detail || `The server answered ${res.status}.`)
  scene = { sceneStr: res.body.scene_str, qrUrl: res.body.qr_url, expiresAt: Date.now() + res.body.expires_in * 1000 }
  card.dataset.scene = scene.sceneStr
  showQr(scene.qrUrl)
  setState('pending')
  showPending()
  tickTimer = setInterval(() => gen === generation && tick(), 1000)
  waiting = waitForScene(scene.sceneStr, {
    onAnswer: (httpStatus, body) => gen === generation && onAnswer(httpStatus, body),
    onProblem: (text) => {
      if (gen !== generation) return
      failures++
      setStatus(text, 'error')
    },
    onTransport: (name) => gen === generation && (card.dataset.transport = name),
  })
}

function secondsLeft() {
  return Math.max(0, Math.ceil((scene.expiresAt - Date.now()) / 1000))
}

function showPending() {
  const s = secondsLeft()
  setStatus(`Waiting for a scan · valid for ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`)
}

function tick() {
  if (failures > 0) return // the status line shows the connection problem
  showPending()
  // When plain polling, ask now rather than in up to 2 s; a stream or a long poll is told at the
  // deadline by the server itself (B-wait-1).
  if (secondsLeft() === 0) waiting?.checkNow()
}

/** An answer about the current scene, from the stream, a long poll or a poll. */
function onAnswer(httpStatus, body) {
  failures = 0
  // 404: the server no longer knows the scene (a memory store restarted): treat it as expired.
  const status = httpStatus === 404 ? 'expired' : body?.status
  if (status === 'authorized') {
    saveSession(body.session_token)
    return showAuthorized(body.session_token, body.authorization)
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
    else if (gen === generation && card.dataset.state === 'pending') {
      // (A stream may have shown the result before this answer came: then there is nothing to say.)
      setStatus('Scanned. Checking…')
      waiting?.checkNow() // only plain polling needs telling: a stream or a long poll hears it from the server
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
  const token = savedSession()
  if (!token) return false
  try {
    const res = await api('/auth/session', { token })
    if (res.status === 200) {
      session = token
      if (res.body.authorization) showAuthorized(token, res.body.authorization)
      else showNeedPurchase()
      return true
    }
    if (res.status === 401) forgetSession()
  } catch {
    // fall through to a new code
  }
  return false
}

function forgetSession() {
  session = null
  forgetSavedSession()
}

/** "New code": starting over, so the saved session goes too. */
function startOver() {
  forgetSession()
  newScene()
}

/** "Sign out": ends the session on the server (POST /auth/logout), forgets it, and shows a new code. */
async function signOut() {
  const token = session || savedSession()
  const button = $('sign-out')
  button.disabled = true
  try {
    if (token) {
      const res = await api('/auth/logout', { method: 'POST', token })
      // 401: the server had already ended it (expired, or signed out elsewhere): signed out all the same.
      if (res.status !== 204 && res.status !== 401) return setStatus(res.body?.detail || `Sign-out failed (${res.status}).`, 'error')
    }
    startOver()
  } catch {
    setStatus('Cannot reach the server: still signed in.', 'error')
  } finally {
    button.disabled = false
  }
}

async function start() {
  $('emulator-scan').addEventListener('click', emulatedScan)
  $('new-code').addEventListener('click', startOver)
  $('overlay-new').addEventListener('click', startOver)
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
  if (config.pay_emulator) parts.push('WeChat Pay emulator')
  $('footer').textContent = parts.join(' · ')
  if (!(await resumeSession())) await newScene()
}

start()
