// Buying access on the demo page, once a sign-in answered "Purchase needed" (or a signed-in card's
// authorization ended): the plan cards (client.listPlans), the purchase with its pay code, amount and
// deadline, whether the phone that scanned got a link to buy there (the purchase's phone_link), the
// emulated phone's payment (POST /demo/pay, emulator mode), and the wait for the payment
// (client.purchase: on the scene's event stream, which the server keeps open while the order is,
// docs/behaviour.md B-order-7, else its long poll or polls; a session buyer's session). app.js owns
// the card; this file fills the shop and paying sections.
// Plain browser JavaScript, no build step (the client is app.js's, from /client.js).
/* global AbortController */
import { api, formatDate, formatFen } from './lib.js'

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
 * - `client` is app.js's `@scanauth/client`.
 * - `setState(state)` / `setStatus(text, tone, options)` are app.js's: `need_purchase` shows the
 *   shop, `paying` the pay code.
 * - `onAuthorized(token, authorization)` is called once the payment has been applied.
 * - `emulated()` says whether WeChat Pay is the in-process emulator (the "pay" button).
 *
 * Returns `{ offer(buyer, note?), stop(), phoneLinked() }`: `offer({ sceneStr })` or
 * `offer({ sessionToken })` shows the plans for that buyer; `stop()` ends the purchase in progress (a
 * new code, sign-out); `phoneLinked()` says whether the pay code shown has a twin on the phone that
 * scanned (its reply's "Buy on this phone"), paid there or here alike.
 */
export function createCheckout({ $, client, setState, setStatus, onAuthorized, emulated }) {
  let buyer = null // { sceneStr } or { sessionToken }
  let order = null // the pay code (client.purchase's onCode), plus the plan bought
  let catalog = null // client.listPlans(), once loaded
  let round = 0 // bumped by every offer and stop: answers of an older round do nothing
  let purchasing = null // the AbortController of client.purchase, while it runs

  function stop() {
    round++
    purchasing?.abort()
    purchasing = null
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
        catalog = await client.listPlans()
      } catch (error) {
        if (r === round) $('plans').replaceChildren(message(error?.code === 'network' ? 'Cannot reach the server to load the plans.' : error?.detail || `The plans could not be loaded (${error?.status ?? error}).`))
        return
      }
      if (r !== round) return
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
    price.textContent = formatFen(plan.amountFen)
    button.append(name, grant, price)
    button.addEventListener('click', () => buy(plan))
    li.append(button)
    return li
  }

  function setPlansDisabled(disabled) {
    for (const button of $('plans').querySelectorAll('button')) button.disabled = disabled
  }

  // ------------------------------------------------------------ the purchase and the wait for the payment

  async function buy(plan) {
    stop()
    const r = round
    const controller = new AbortController()
    purchasing = controller
    setPlansDisabled(true)
    setStatus(`Opening an order for ${plan.description}…`, 'info', { show: true })
    let result
    try {
      result = await client.purchase({
        ...buyer,
        plan: plan.id,
        signal: controller.signal,
        onCode: (code) => {
          if (r !== round) return
          order = { ...code, plan }
          showPayCode()
        },
        onStatus: ({ transport }) => r === round && ($('card').dataset.transport = transport),
      })
    } catch (error) {
      if (r !== round) return // stopped on purpose: another plan, a new code, sign-out
      purchasing = null
      return purchaseFailed(error)
    }
    if (r !== round) return
    purchasing = null
    order = null
    onAuthorized(result.sessionToken, result.authorization)
  }

  function purchaseFailed(error) {
    if (order === null) {
      // No order was opened (the server or the payment service refused): the plans stay.
      setPlansDisabled(false)
      return setStatus(error?.code === 'network' ? 'Cannot reach the server: no order was opened. Try again.' : error?.detail || `The purchase failed (${error?.status ?? error?.code ?? error}).`, 'error')
    }
    if (error?.code === 'expired') return offer(buyer, 'The time to pay this code is up. Choose a plan for a new one.')
    if (error?.status === 401) return offer(buyer, 'The session ended before the payment arrived. Press "New code" and scan again.', 'error')
    if (error?.status === 404) return offer(buyer, 'This code is no longer known to the server. Press "New code" and scan again.', 'error')
    offer(buyer, error?.code === 'network' ? 'Cannot reach the server to learn of the payment. Choose a plan to try again.' : error?.detail || `The wait for the payment failed (${error?.status ?? error?.code}).`, 'error')
  }

  function showPayCode() {
    const img = $('pay-qr')
    img.alt = `WeChat Pay code: ${formatFen(order.amountFen)} for ${order.plan.description}`
    img.onerror = () => setStatus('The pay code could not be drawn.', 'error')
    img.src = `/demo/qr.svg?text=${encodeURIComponent(order.codeUrl)}`
    $('pay-amount').textContent = formatFen(order.amountFen)
    $('pay-plan').textContent = order.plan.description
    const [day, time] = formatDate(order.expiresAt)
    $('pay-deadline').textContent = `Pay by ${time} (${day})`
    // The person who scanned got "Buy on this phone" in WeChat (a server with payments.phone): a
    // Native code cannot be paid on the phone that shows it, so the code here is for a second phone.
    $('pay-phone').hidden = !order.phoneLink
    setState('paying')
    const where = order.phoneLink ? 'Scan the code with WeChat, or buy on the phone that scanned' : 'Scan the code with WeChat'
    setStatus(emulated() ? `Waiting for the payment… ${where}, or press the button below.` : `Waiting for the payment… ${where}.`)
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
      const res = await api('/demo/pay', { method: 'POST', json: { order_id: order.orderId } })
      if (r !== round) return
      if (res.status !== 200) return setStatus(res.body?.detail || `The emulated payment failed (${res.status}).`, 'error')
      // The client hears of it from the server (the stream, the long poll, or its next poll).
      setStatus('Paid on the emulated phone. Waiting for WeChat Pay to tell the server…')
    } catch {
      if (r === round) setStatus('Cannot reach the server.', 'error')
    } finally {
      button.disabled = false
      button.textContent = 'Pay with the emulated phone'
    }
  }

  $('emulator-pay').addEventListener('click', emulatedPay)
  $('other-plan').addEventListener('click', () => buyer && offer(buyer))

  /** Whether the order shown is one whose scanner got a link to buy on the phone (the purchase's `phone_link`). */
  const phoneLinked = () => order?.phoneLink === true

  return { offer, stop, phoneLinked }
}
