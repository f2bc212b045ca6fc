// Waiting for a scan, or for a payment: how the demo page (app.js, pay.js) learns that its scene has
// left `pending` (or, while an order of it is open, `need_purchase`: B-order-7), by the best way the
// browser and the server offer (docs/behaviour.md B-wait-1…3):
//
//   1. Server-Sent Events, `GET /auth/events?scene=…` (B-wait-3): one request for the whole wait;
//      the server sends the status on connect and again the moment it changes, then closes.
//   2. The long poll, `GET /auth/status?scene=…&wait=25` (B-wait-2), in a loop: one request per
//      25 s of waiting, answered the moment the status changes. Used when the browser has no
//      EventSource, or the stream fails before its first event (a proxy that refuses or buffers it).
//   3. The plain poll every 2 s, backing off while the server cannot be reached. Used when the long
//      poll fails, or is answered at once (a server that does not know `wait`).
//
// Each new scene starts again from the best one, so one failed connection costs one code's worth.
// Plain browser JavaScript, no build step.
/* global EventSource, AbortController */
import { api } from './lib.js'

const POLL_MS = 2000 // the plain poll's interval
const MAX_BACKOFF_MS = 30000 // the longest wait between polls while the server cannot be reached
const LONG_POLL_SECONDS = 25 // below the 30 s that proxies and the server allow (wait=1…30)
const FIRST_EVENT_MS = 10000 // the server sends the status at once; nothing by then means a buffering proxy

/**
 * Waits for the status of `sceneStr` to leave `pending`.
 *
 * - `onAnswer(httpStatus, body)` gets every answer: `pending` ones (the wait goes on) and the final
 *   one (a status other than `pending`, or a 404 for a scene the server no longer knows), after
 *   which the wait has ended by itself.
 * - `keepWaiting(body)` says which answers are not final; by default `pending` ones. The wait for a
 *   payment also goes on through `need_purchase`, which the server keeps streaming while the order
 *   is open.
 * - `onProblem(text)` is told of connection trouble while the wait goes on (for the status line).
 * - `onTransport(name)` is told which way it waits: `sse`, `long-poll` or `poll`.
 *
 * Returns `{ stop, checkNow }`: `stop()` ends the wait (closes the stream, aborts a request in
 * flight, clears timers); `checkNow()` asks at once when plain polling (the other two are told by
 * the server as soon as anything changes, so for them it does nothing).
 */
export function waitForScene(sceneStr, { onAnswer, onProblem, onTransport = () => {}, keepWaiting = (body) => body?.status === 'pending' }) {
  const scene = encodeURIComponent(sceneStr)
  let stopped = false
  let transport = null
  let timer = null
  let source = null // the EventSource, while streaming
  let inFlight = null // the AbortController of a request in flight
  let failures = 0

  const use = (name) => {
    transport = name
    onTransport(name)
  }

  function stop() {
    stopped = true
    clearTimeout(timer)
    source?.close()
    source = null
    inFlight?.abort()
    inFlight = null
  }

  /** Hands an answer to the page; true while the scene is still pending (the wait goes on). */
  function answer(httpStatus, body) {
    const pending = httpStatus === 200 && keepWaiting(body)
    if (!pending) stop()
    failures = 0
    onAnswer(httpStatus, body)
    return pending && !stopped
  }

  /** A GET that `stop()` aborts. */
  async function get(path) {
    const controller = new AbortController()
    inFlight = controller
    try {
      return await api(path, { signal: controller.signal })
    } finally {
      if (inFlight === controller) inFlight = null
    }
  }

  // ------------------------------------------------------------ 1. Server-Sent Events

  function stream() {
    use('sse')
    let heard = false
    const events = new EventSource(`/auth/events?scene=${scene}`)
    source = events
    const fallBack = () => {
      clearTimeout(timer)
      events.close()
      if (source === events) source = null
      if (!stopped) longPoll()
    }
    timer = setTimeout(() => heard || fallBack(), FIRST_EVENT_MS)
    events.addEventListener('status', (event) => {
      if (stopped) return
      heard = true
      clearTimeout(timer)
      let body
      try {
        body = JSON.parse(event.data)
      } catch {
        return fallBack()
      }
      answer(200, body)
    })
    events.addEventListener('error', (event) => {
      if (stopped) return
      // Fall back when the stream never worked, when the server says it failed (`event: error`
      // with a body), or when the browser gave up (CLOSED: a reconnection was answered 404 after a
      // restart, or 5xx). The long poll's first answer then says what became of the scene.
      if (!heard || event.data !== undefined || events.readyState === EventSource.CLOSED) return fallBack()
      // The connection dropped after it worked: the browser reconnects by itself, and the server
      // sends the current status again on connect (B-wait-3).
      onProblem('Connection lost. Reconnecting…')
    })
  }

  // ------------------------------------------------------------ 2. the long poll

  async function longPoll() {
    use('long-poll')
    while (!stopped) {
      const began = Date.now()
      let res
      try {
        res = await get(`/auth/status?scene=${scene}&wait=${LONG_POLL_SECONDS}`)
      } catch (error) {
        if (stopped) return
        return pollAfterFailure(error.message)
      }
      if (stopped) return
      // 400 (a server that refuses `wait`), 5xx, a proxy's 502/504: poll instead.
      if (res.status !== 200 && res.status !== 404) return pollAfterFailure(`the server answered ${res.status}`)
      if (!answer(res.status, res.body)) return
      // Pending long before the wait was up: the server ignored `wait`. Poll rather than loop.
      if (Date.now() - began < (LONG_POLL_SECONDS * 1000) / 2) return poll(POLL_MS)
    }
  }

  // ------------------------------------------------------------ 3. the plain poll

  function poll(delay) {
    use('poll')
    clearTimeout(timer)
    timer = setTimeout(pollOnce, delay)
  }

  function pollAfterFailure(reason) {
    use('poll')
    const delay = Math.min(MAX_BACKOFF_MS, POLL_MS * 2 ** ++failures)
    onProblem(`Connection problem (${reason}). Retrying in ${Math.round(delay / 1000)} s…`)
    poll(delay)
  }

  async function pollOnce() {
    if (stopped || inFlight) return // a poll in flight answers soon and schedules the next one
    let res
    try {
      res = await get(`/auth/status?scene=${scene}`)
      if (res.status >= 500) throw new Error(`the server answered ${res.status}`)
    } catch (error) {
      if (stopped) return
      return pollAfterFailure(error.message)
    }
    if (stopped) return
    if (answer(res.status, res.body)) poll(POLL_MS)
  }

  if (typeof EventSource === 'function') stream()
  else longPoll()

  return {
    stop,
    checkNow() {
      if (!stopped && transport === 'poll') poll(0)
    },
  }
}
