// Buying access on the demo page, once a scan answered "Purchase needed": the plan cards
// (GET /auth/plans), the purchase (POST /auth/purchase), the pay code with its amount and deadline,
// the emulated phone's payment (POST /demo/pay, emulator mode), and the wait for the payment: on the
// scene's event stream, which the server keeps open while the order is (docs/behaviour.md B-order-7),
// else its long poll or polls (wait.js); a device that came back with a saved session and no scene
// polls its session instead. app.js owns the card; this file fills the shop and paying sections.
// Plain browser JavaScript, no build step.
import { api, formatDate, formatFen } from './lib.js'
import { waitForScene } from './wait.js'

const SESSION_POLL_MS = 2000 // how often a session buyer asks whether the payment arrived
const AFTER_DEADLINE_MS = 2000 // a payment at the last second still needs its notification to land
const MAX_TIMER_MS = 2 ** 31 - 1 // setTimeout fires at once beyond this (a deadline weeks ahead)

/** "30 days", "12 hours", "100 points": what a plan grants, in words. */
export function grantText(grant) {
  if (grant?.type === 'points') return `${grant.points} ${grant.points === 1 ? 'point' : 'points'}`
  if (grant?.type === 'time') {
    if (Number.isInteger(grant.days)) return `${grant.days} ${grant.days === 1 ? 'day' : 'days'}`
    const hours = Math.round(grant.days * 24 * 10) / 10
    return `${hours} ${hours === 1 ? 'hour' : 'hours'}`
  }
  return ''
}

/**
 * The purchase flow of one card.
 *
 * - `setState(state)` / `setStatus(text, tone, options)` are app.js's: `need_purchase` shows the
 *   shop, `paying` the pay code.
 * - `onAuthorized(token, authorization)` is called once the payment has been applied.
 * - `emulated()` says whether WeChat Pay is the in-process emulator (the "pay" button).
 *
 * Returns `{ offer(buyer), stop() }`: `offer({ sceneStr })` or `offer({ token })` shows the plans for
 * that buyer; `stop()` ends every wait and timer (a new code, sign-out).
 */
export function createCheckout({ $, setState, setStatus, onAuthorized, emulated }) {
  let buyer = null // { sceneStr } or { token }
  let order = null // the purchase's answer, plus the plan bought
  let catalog = null // GET /auth/plans, once loaded
  let round = 0 // bumped by every offer and stop: answers and timers of an older round do nothing
  let waiting = null // the wait on the scene (wait.js)
  let pollTimer = null
  let deadlineTimer = null

  function stop() {
    round++
    waiting?.stop()
    waiting = null
    clearTimeout(pollTimer)
    clearTimeout(deadlineTimer)
  }

  // ------------------------------------------------------------ the plans

  async function offer(who, note, tone = 'warn') {
    stop()
    const r = round
    buyer = who
    order = null
    setState('need_purchase')
    if (note) setStatus(note, tone, { show: true })
    if (catalog === null) {
      $('plans').replaceChildren(message('Loading the plans…'))
      try {
        const res = await api('/auth/plans')
        if (r !== round) return
        if (res.status !== 200 || !Array.isArray(res.body)) return void $('plans').replaceChildren(message(res.body?.detail || `The plans could not be loaded (${res.status}).`))
        catalog = res.body
      } catch {
        if (r === round) $('plans').replaceChildren(message('Cannot reach the server to load the plans.'))
        return
      }
    }
    if (catalog.length === 0) return void $('plans').replaceChildren(message('This server sells nothing.'))
    $('plans').replaceChildren(...catalog.map((plan) => planItem(plan)))
  }

  function message(text) {
    const li = document.createElement('li')
    li.className = 'plans-note'
    li.textContent = text
    return li
  }

  /** One plan card: a button with what it is, what it grants and its price. */
  function planItem(plan) {
    const li = document.createElement('li')
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'plan'
    button.dataset.plan = plan.id
    const name = document.createElement('span')
    name.className = 'plan-name'
    name.textContent = plan.description
    const grant = document.createElement('span')
    grant.className = 'plan-grant'
    grant.textContent = `${plan.grant?.type === 'points' ? 'Points' : 'Time pass'} · ${grantText(plan.grant)}`
    const price = document.createElement('span')
    price.className = 'plan-price'
    price.textContent = formatFen(plan.amount_fen)
    button.append(name, grant, price)
    button.addEventListener('click', () => buy(plan))
    li.append(button)
    return li
  }

  function setPlansDisabled(disabled) {
    for (const button of $('plans').querySelectorAll('button')) button.disabled = disabled
  }

  // ------------------------------------------------------------ the purchase

  async function buy(plan) {
    const r = round
    setPlansDisabled(true)
    setStatus(`Opening an order for ${plan.description}…`, 'info', { show: true })
    let res
    try {
      const json = buyer.sceneStr ? { scene: buyer.sceneStr, plan: plan.id } : { plan: plan.id }
      res = await api('/auth/purchase', { method: 'POST', json, token: buyer.token })
    } catch {
      if (r !== round) return
      setPlansDisabled(false)
      return setStatus('Cannot reach the server: no order was opened. Try again.', 'error')
    }
    if (r !== round) return
    if (res.status !== 200) {
      setPlansDisabled(false)
      return setStatus(res.body?.detail || `The purchase failed (${res.status}).`, 'error')
    }
    order = { ...res.body, plan }
    showPayCode()
    waitForPayment(r)
  }

  function showPayCode() {
    const img = $('pay-qr')
    img.alt = `WeChat Pay code: ${formatFen(order.amount_fen)} for ${order.plan.description}`
    img.onerror = () => setStatus('The pay code could not be drawn.', 'error')
    img.src = `/demo/qr.svg?text=${encodeURIComponent(order.code_url)}`
    $('pay-amount').textContent = formatFen(order.amount_fen)
    $('pay-plan').textContent = order.plan.description
    const [day, time] = formatDate(order.expires_at)
    $('pay-deadline').textContent = `Pay by ${time} (${day})`
    setState('paying')
    setStatus(emulated() ? 'Waiting for the payment… Scan the code with WeChat, or press the button below.' : 'Waiting for the payment… Scan the code with WeChat.')
  }

  // ------------------------------------------------------------ the wait for the payment

  function waitForPayment(r) {
    if (buyer.sceneStr) {
      waiting = waitForScene(buyer.sceneStr, {
        // need_purchase is what the scene says until the payment lands: keep listening through it.
        keepWaiting: (body) => body?.status === 'pending' || body?.status === 'need_purchase',
        onAnswer: (httpStatus, body) => r === round && onSceneAnswer(httpStatus, body),
        onProblem: (text) => r === round && setStatus(text, 'error'),
      })
    } else {
      pollSession(r)
    }
    const left = Date.parse(order.expires_at) - Date.now() + AFTER_DEADLINE_MS
    if (left < MAX_TIMER_MS) deadlineTimer = setTimeout(() => r === round && deadlinePassed(), Math.max(0, left))
  }

  function onSceneAnswer(httpStatus, body) {
    if (httpStatus === 200 && body?.status === 'authorized') {
      stop()
      return onAuthorized(body.session_token, body.authorization)
    }
    if (httpStatus === 200 && (body?.status === 'need_purchase' || body?.status === 'pending')) return
    // The server no longer knows the scene (404), or it expired: the buyer starts over with a new code.
    offer(buyer, 'This code is no longer known to the server. Press "New code" and scan again.', 'error')
  }

  async function pollSession(r) {
    let res
    try {
      res = await api('/auth/session', { token: buyer.token })
    } catch {
      res = null
    }
    if (r !== round) return
    if (res?.status === 200 && res.body?.authorization) {
      stop()
      return onAuthorized(buyer.token, res.body.authorization)
    }
    if (res?.status === 401) {
      return offer(buyer, 'The session ended before the payment arrived. Press "New code" and scan again.', 'error')
    }
    if (res === null || res.status >= 500) setStatus('Cannot reach the server. Still waiting for the payment…', 'error')
    pollTimer = setTimeout(() => pollSession(r), SESSION_POLL_MS)
  }

  /** The order's window closed: one last look (a payment at the last second), else the plans again. */
  async function deadlinePassed() {
    const current = buyer
    stop()
    const r = round
    try {
      const res = current.sceneStr ? await api(`/auth/status?scene=${encodeURIComponent(current.sceneStr)}`) : await api('/auth/session', { token: current.token })
      if (r !== round) return
      const authorization = res.body?.authorization
      if (res.status === 200 && (res.body?.status === 'authorized' || (!current.sceneStr && authorization))) {
        return onAuthorized(res.body.session_token ?? current.token, authorization)
      }
    } catch {
      // fall through: the plans again, where a new purchase asks the server anyway
    }
    if (r === round) offer(current, 'The time to pay this code is up. Choose a plan for a new one.')
  }

  // ------------------------------------------------------------ the buttons

  /** "Pay with the emulated phone": the WeChat Pay emulator pays the order and notifies the server. */
  async function emulatedPay() {
    if (!order) return
    const r = round
    const button = $('emulator-pay')
    button.disabled = true
    button.textContent = 'Paying…'
    try {
      const res = await api('/demo/pay', { method: 'POST', json: { order_id: order.order_id } })
      if (r !== round) return
      if (res.status !== 200) return setStatus(res.body?.detail || `The emulated payment failed (${res.status}).`, 'error')
      setStatus('Paid on the emulated phone. Waiting for WeChat Pay to tell the server…')
      waiting?.checkNow() // only plain polling needs telling: a stream or a long poll hears it from the server
    } catch {
      if (r === round) setStatus('Cannot reach the server.', 'error')
    } finally {
      button.disabled = false
      button.textContent = 'Pay with the emulated phone'
    }
  }

  $('emulator-pay').addEventListener('click', emulatedPay)
  $('other-plan').addEventListener('click', () => buyer && offer(buyer))

  return { offer, stop }
}
