// Helpers of the demo page (app.js): random ids, what the page keeps in localStorage, formatting,
// and JSON requests. Plain browser JavaScript, no build step.
/* global localStorage, crypto */

const SESSION_KEY = 'scanauth.session'

/** `bytes` random bytes as hex. */
export function randomHex(bytes) {
  // crypto.getRandomValues works on plain http too (randomUUID needs a secure context).
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The value kept under `key` in localStorage, made (and kept) on the first visit. */
export function remember(key, make) {
  let value = null
  try {
    value = localStorage.getItem(key)
    if (!value) localStorage.setItem(key, (value = make()))
  } catch {
    value = value || make() // storage blocked: keep it for this page only
  }
  return value
}

/** The saved session token, or null; storage may be blocked, then there is none. */
export function savedSession() {
  try {
    return localStorage.getItem(SESSION_KEY)
  } catch {
    return null
  }
}

/** Keeps the session token for the next visit. */
export function saveSession(token) {
  try {
    localStorage.setItem(SESSION_KEY, token)
  } catch {
    // storage blocked: signed in for this page only
  }
}

/** Removes the kept session token. */
export function forgetSavedSession() {
  try {
    localStorage.removeItem(SESSION_KEY)
  } catch {
    // nothing was saved
  }
}

/**
 * A price in fen as yuan, e.g. 1990 → "¥19.90". Integer arithmetic only: 1990 / 100 is not exactly
 * 19.9 in floating point, and rounding it is how prices end up a fen off.
 */
export function formatFen(fen) {
  if (!Number.isSafeInteger(fen) || fen < 0) return '—'
  const cents = fen % 100
  const yuan = (fen - cents) / 100 // exact: a whole multiple of 100 divided by 100
  return `¥${yuan.toLocaleString('en-US')}.${String(cents).padStart(2, '0')}`
}

/** `text` shortened to its head and tail, for a token on the card. */
export function abbreviate(text, head = 6, tail = 4) {
  return text.length <= head + tail + 1 ? text : `${text.slice(0, head)}…${text.slice(-tail)}`
}

/** A date and a time, as two pieces that each stay on one line. */
export function formatDate(iso) {
  const at = new Date(iso)
  return [at.toLocaleDateString(undefined, { dateStyle: 'medium' }), at.toLocaleTimeString(undefined, { timeStyle: 'short' })]
}

/**
 * A JSON request to our server: `{status, body}` (body null when the answer is not JSON, e.g. a 204).
 * `signal` aborts it (the promise then rejects).
 */
export async function api(path, { method = 'GET', json, token, signal } = {}) {
  const headers = {}
  if (json !== undefined) headers['content-type'] = 'application/json'
  if (token) headers.authorization = `Bearer ${token}`
  const res = await fetch(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json), cache: 'no-store', signal })
  let body = null
  try {
    body = await res.json()
  } catch {
    // not JSON (a proxy's error page): keep null
  }
  return { status: res.status, body }
}
