// The scanauth demo page: show a code, wait for the scan, show the result; when a purchase is needed,
// offer the plans and wait for the payment (pay.js); keep an authorized card current while the page
// is open; sign out. The waiting (event stream, long poll or polling; refreshing expired codes) and
// the purchase are @scanauth/client's: /client.js is the client bundled for browsers by the example
// server (examples/shared/src/client-bundle.ts). The page's own scripts have no build step.
//
// The session token is kept in localStorage ('scanauth.session'), so a reload stays signed in. It is
// saved when a sign-in or a payment answers authorized and removed by "Sign out", by "New code" (a new
// code means starting over) and when the server no longer knows it.
/* global setInterval, clearInterval, AbortController, location */
import { createScanAuthClient, ScanAuthClientError } from './client.js'
import { abbreviate, api, forgetSavedSession, formatDate, randomHex, remember, saveSession, savedSession } from './lib.js'
import { createCheckout } from './pay.js'

const AUTO_REFRESHES = 3 // expired codes replaced without asking (the client's maxRefreshes), before the page asks the person
// While a card shows "Authorized", the page asks the server again when the time pass ends (its
// end_at) and at least this often: an authorization revoked, points used up elsewhere, a session
// ended. Also when the tab comes back into view.
const RECHECK_MS = 60_000
const MIN_RECHECK_MS = 2000 // a device clock ahead of the server's must not turn the end_at timer into a loop

const $ = (id) => document.getElementById(id)
const card = $('card')
const client = createScanAuthClient({ baseUrl: `${location.origin}/auth` })
const checkout = createCheckout({
  $,
  client,
  setState,
  setStatus,
  emulated: () => config.pay_emulator === true,
  onAuthorized: (token, authorization) => {
    saveSession(token)
    showAuthorized(token, authorization)
  },
})

const deviceId = remember('scanauth.device_id', () => `web-${randomHex(16)}`)

// From GET /demo/config. With the emulator, `demo_openid` is the emulated phone's WeChat user: the
// emulator's own page scans as it too, so both sign in the same person.
let config = { emulator: false }
let scene = null // { sceneStr, qrUrl, expiresAt } of the code shown
let generation = 0 // bumped for every sign-in and state change: answers of an older one do nothing
let signingIn = null // the AbortController of client.signIn, while it runs
let tickTimer = null
let recheckTimer = null
let retryTimer = null // the countdown of a rate-limited "Try again"
let session = null // the token of the authorized card
// The emulated phone's chat when the reply to its scan carried a link: the confirm link (confirm on the
// phone), "Buy on this phone" (a scan that needs a purchase, on a server that sells on the phone), or
// "Remind me before it ends" (a scan that signs in, on a server with reminders).
let phoneLink = null

// ---------------------------------------------------------------- timers

/** Ends the sign-in in progress (the client closes its stream or request), the purchase, and the timers. */
function stopTimers() {
  checkout.stop()
  signingIn?.abort()
  clearInterval(tickTimer)
  clearTimeout(recheckTimer)
  clearInterval(retryTimer)
  signingIn = tickTimer = recheckTimer = retryTimer = null
}

// ---------------------------------------------------------------- view

function setState(state) {
  card.dataset.state = state
  const pending = state === 'pending'
  // Once scanned (confirm on the phone), the code is hidden: a code left on screen invites stray scans.
  $('qr-box').hidden = !['loading', 'pending', 'expired', 'error'].includes(state)
  $('result').hidden = !['authorized', 'need_purchase', 'denied'].includes(state)
  $('phone-confirm').hidden = !(state === 'scanned' && config.emulator && phoneLink !== null)
  $('shop').hidden = state !== 'need_purchase'
  $('paying').hidden = state !== 'paying'
  $('qr-overlay').hidden = !['expired', 'error'].includes(state)
  // The outcome and the expired overlay say it all; the status line is for waiting and for errors.
  // (A result card shows it again for a problem: see setStatus.)
  $('status').hidden = !['loading', 'pending', 'scanned', 'error', 'paying'].includes(state)
  $('emulator-scan').hidden = !(pending && config.emulator)
  $('emulator-hint').hidden = !(pending && config.emulator)
  $('emulator-pay').hidden = !(state === 'paying' && config.pay_emulator)
  $('pay-hint').hidden = !(state === 'paying' && config.pay_emulator)
  const buyOnPhone = state === 'paying' && config.emulator && phoneLink !== null && checkout.phoneLinked()
  $('phone-pay').hidden = !buyOnPhone
  $('phone-pay-hint').hidden = !buyOnPhone
  // The reply to a scan that signed in offers "Remind me before it ends" (SCANAUTH_REMINDERS).
  const remind = state === 'authorized' && config.emulator && config.reminders === true && phoneLink !== null
  $('phone-remind').hidden = !remind
  $('remind-hint').hidden = !remind
  $('other-plan').hidden = state !== 'paying'
  $('new-code').hidden = !['need_purchase', 'denied'].includes(state)
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
  if (a.type === 'points') return [['Type', 'Points'], ['Points left', String(a.remainingPoints)]]
  return [['Type', 'Time pass'], ['Valid until', a.endAt ? formatDate(a.endAt) : '—']]
}

function showAuthorized(token, authorization) {
  stopTimers()
  generation++
  session = token
  showResult({
    tone: 'ok',
    title: 'Authorized',
    text: 'This device is signed in.',
    facts: [...authorizationFacts(authorization), ['Session', abbreviate(token), 'token']],
  })
  setState('authorized')
  setStatus('Signed in', 'ok')
  watchAuthorization(token, authorization)
}

/**
 * "Purchase needed". The device of the scanned scene (`sceneStr`) buys for that scene's user; one with
 * a session whose authorization ended (a saved one, or the card's own) buys with the session. `note`
 * says why, on a card that was showing something else.
 */
function showNeedPurchase(buyer, note) {
  stopTimers()
  generation++
  showResult({
    tone: 'warn',
    title: 'Purchase needed',
    text: buyer.sceneStr
      ? 'The scan worked, but this WeChat user has no active authorization: the free trial has been used. Choose a plan and pay with WeChat.'
      : 'This device is signed in, but its WeChat user has no active authorization any more. Choose a plan and pay with WeChat.',
    facts: [],
  })
  setStatus('No active authorization', 'warn')
  checkout.offer(buyer, note)
}

/** The phone denied the sign-in (confirm on the phone): final for this code. */
function showDenied() {
  stopTimers()
  generation++
  showResult({
    tone: 'warn',
    title: 'Sign-in denied',
    text: 'The request was denied on the phone. If that was not you, nothing was shared. Get a new code to try again.',
    facts: [],
  })
  setState('denied')
  setStatus('Denied on the phone', 'warn')
}

/** Scanned, waiting for the person to confirm on the phone; the code is hidden. */
function showScanned() {
  clearInterval(tickTimer)
  tickTimer = null
  setState('scanned')
  setStatus('Scanned. Confirm on your phone…')
}

function showExpired() {
  stopTimers()
  $('overlay-text').textContent = 'This code has expired.'
  $('overlay-note').textContent = 'Get a new one when you are ready.'
  $('overlay-new').textContent = 'New code'
  $('overlay-new').disabled = false
  setState('expired')
  setStatus('The code expired.', 'warn')
}

function showCreateError(detail, title = 'No code could be created.') {
  stopTimers()
  generation++
  $('qr').hidden = true
  $('qr-placeholder').hidden = false
  $('overlay-text').textContent = title
  $('overlay-note').textContent = ''
  $('overlay-new').textContent = 'Try again'
  $('overlay-new').disabled = false
  setState('error')
  setStatus(detail, 'error')
}

/** A wait as a person reads it: "12 s", "4 min 05 s", "12 h 00 min". */
function formatWait(seconds) {
  if (seconds < 60) return `${seconds} s`
  const pad = (n) => String(n).padStart(2, '0')
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${pad(seconds % 60)} s`
  return `${Math.floor(seconds / 3600)} h ${pad(Math.floor((seconds % 3600) / 60))} min`
}

/**
 * After a rate limit: "Try again" stays disabled while the server would refuse a new code anyway,
 * counting down its Retry-After, then is enabled.
 */
function holdRetry(seconds) {
  const button = $('overlay-new')
  const until = Date.now() + seconds * 1000
  const tick = () => {
    const left = Math.ceil((until - Date.now()) / 1000)
    button.disabled = left > 0
    $('overlay-note').textContent = left > 0 ? `Try again in ${formatWait(left)}` : 'You can try again now.'
    if (left <= 0) {
      clearInterval(retryTimer)
      retryTimer = null
    }
  }
  clearInterval(retryTimer)
  retryTimer = setInterval(tick, 1000)
  tick()
}

// ---------------------------------------------------------------- flow

const LEAD = 'Scan the code with WeChat to authorize this device.'

/**
 * A new sign-in: the client creates the code, waits, refreshes it when it expires (up to
 * AUTO_REFRESHES), and answers. `lead` replaces the line above the code (why a new code is shown).
 */
async function newScene({ lead = LEAD } = {}) {
  stopTimers()
  $('lead').textContent = lead
  const gen = ++generation
  const controller = new AbortController()
  signingIn = controller
  scene = null
  phoneLink = null // the reply to a scan of an earlier code is not this one's
  $('qr').hidden = true
  $('qr-placeholder').hidden = false
  setState('loading')
  setStatus('Preparing a code…')
  let result
  try {
    result = await client.signIn({
      deviceId,
      signal: controller.signal,
      maxRefreshes: AUTO_REFRESHES,
      onCode: (code) => gen === generation && showCode(code, gen),
      onStatus: ({ status, transport }) => {
        if (gen !== generation) return
        card.dataset.transport = transport
        // With the server's confirm-on-phone mode the phone shows a page first.
        if (status === 'scanned') showScanned()
      },
    })
  } catch (error) {
    if (gen !== generation) return // stopped on purpose (a new code, sign-out): nothing to say
    signingIn = null
    return signInFailed(error)
  }
  if (gen !== generation) return
  signingIn = null
  if (result.status === 'authorized') {
    saveSession(result.sessionToken)
    return showAuthorized(result.sessionToken, result.authorization)
  }
  if (result.status === 'denied') return showDenied()
  showNeedPurchase({ sceneStr: result.sceneStr })
}

/** A code to show: the first one, or a refresh of an expired one. */
function showCode(code, gen) {
  scene = { sceneStr: code.sceneStr, qrUrl: code.qrUrl, expiresAt: Date.parse(code.expiresAt) }
  card.dataset.scene = scene.sceneStr
  card.dataset.refresh = String(code.refresh)
  showQr(scene.qrUrl)
  setState('pending')
  showPending(code.refresh > 0 ? 'The code expired; here is a new one. ' : '')
  clearInterval(tickTimer)
  tickTimer = setInterval(() => gen === generation && card.dataset.state === 'pending' && showPending(), 1000)
}

function signInFailed(error) {
  if (!(error instanceof ScanAuthClientError)) {
    showCreateError('Something went wrong on this page.')
    throw error
  }
  if (error.code === 'expired') return showExpired()
  if (error.code === 'rate_limited') {
    // The server's {detail} says which limit; how long is its Retry-After, which the note under the
    // title counts down (so the detail's own "; try again in N s", which would stand still, goes).
    const detail = error.detail?.replace(/;\s*try again in \d+ s\.?$/i, '')
    showCreateError(detail || 'Too many codes were asked for from here.', 'Too many codes asked for.')
    if (error.retryAfterSeconds > 0) holdRetry(error.retryAfterSeconds)
    return
  }
  if (error.code === 'network') return showCreateError('Cannot reach the server.')
  showCreateError(error.detail || `The server answered ${error.status ?? 'something unexpected'}.`)
}

function secondsLeft() {
  return Math.max(0, Math.ceil((scene.expiresAt - Date.now()) / 1000))
}

function showPending(prefix = '') {
  if (!scene) return
  const s = secondsLeft()
  setStatus(`${prefix}Waiting for a scan · valid for ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`)
}

async function emulatedScan() {
  if (!scene) return
  const button = $('emulator-scan')
  const gen = generation
  button.disabled = true
  button.textContent = 'Scanning…'
  try {
    const res = await api('/demo/emulator-scan', { method: 'POST', json: { scene_str: scene.sceneStr, openid: config.demo_openid } })
    // A reply with a link (the confirm link, or "Buy on this phone"): the emulated phone opens it.
    phoneLink = res.status === 200 && typeof res.body?.phone_url === 'string' ? res.body.phone_url : null
    $('phone-confirm').href = phoneLink ?? '#'
    $('phone-pay').href = phoneLink ?? '#'
    $('phone-remind').href = phoneLink ?? '#'
    // The client may have brought the result before this answer: show the link on the card it shows.
    if (card.dataset.state === 'scanned' || card.dataset.state === 'authorized') setState(card.dataset.state)
    if (res.status !== 200) setStatus(res.body?.detail || `The emulated scan failed (${res.status}).`, 'error')
    // (The client may have brought the result before this answer came: then there is nothing to say.)
    else if (gen === generation && card.dataset.state === 'pending') setStatus('Scanned. Checking…')
  } catch {
    setStatus('Cannot reach the server.', 'error')
  } finally {
    button.disabled = false
    button.textContent = 'Scan with the emulated phone'
  }
}

// ---------------------------------------------------------------- keeping the card current

/**
 * Asks the server about the card's session when its time pass ends, and every RECHECK_MS: the card
 * then follows what the server says without a reload (see recheck).
 */
function watchAuthorization(token, authorization) {
  const endsIn = authorization?.endAt ? Date.parse(authorization.endAt) - Date.now() : Infinity
  // Just after the end (the server's `now >= end_at`), never sooner than MIN_RECHECK_MS from now.
  const delay = Math.max(MIN_RECHECK_MS, Math.min(RECHECK_MS, endsIn + 500))
  clearTimeout(recheckTimer)
  recheckTimer = setTimeout(() => recheck(token), delay)
}

/** What the server says of the card's session now: still authorized (facts refreshed), purchase needed, or signed out. */
async function recheck(token) {
  if (session !== token || card.dataset.state !== 'authorized') return
  const gen = generation
  let info
  try {
    info = await client.getSession(token)
  } catch {
    // The server cannot be reached: the card stays, and the page asks again later.
    if (gen === generation) recheckTimer = setTimeout(() => recheck(token), RECHECK_MS)
    return
  }
  if (gen !== generation || session !== token) return
  if (info === null) {
    // The session ended (it expired, or was signed out elsewhere): a new code.
    forgetSession()
    return newScene({ lead: 'Your session has ended. Scan the code with WeChat to sign in again.' })
  }
  if (info.authorization) return showAuthorized(token, info.authorization)
  const ended = $('facts').textContent.includes('Points left') ? 'The points are used up.' : 'The time pass has ended.'
  showNeedPurchase({ sessionToken: token }, `${ended} Choose a plan to go on.`)
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && session && card.dataset.state === 'authorized') recheck(session)
})

/** A session from an earlier visit: show it when it is still valid, else start over. */
async function resumeSession() {
  const token = savedSession()
  if (!token) return false
  let info
  try {
    info = await client.getSession(token)
  } catch {
    return false // the server cannot be reached now: a new code (whose failure says so)
  }
  if (info === null) {
    forgetSession()
    return false
  }
  session = token
  if (info.authorization) showAuthorized(token, info.authorization)
  else showNeedPurchase({ sessionToken: token })
  return true
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
    // A session the server had already ended (expired, or signed out elsewhere) is signed out all the same.
    if (token) await client.logout(token)
    startOver()
  } catch (error) {
    setStatus(error?.code === 'network' ? 'Cannot reach the server: still signed in.' : error?.detail || `Sign-out failed (${error?.status ?? error}).`, 'error')
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
