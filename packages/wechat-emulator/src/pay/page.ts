/**
 * The WeChat Pay emulator's HTML page: the orders that can be paid, each with a "Pay" button (the
 * emulated phone confirming the payment), and the notifications sent with their deliveries. A click
 * posts to `POST /emulator/pay`, exactly what `emulator.pay()` does; the lists come from
 * `GET /emulator/orders` and `GET /emulator/notifications`, refreshed every two seconds. A JSAPI
 * order is paid as its own payer (the openid field is for Native orders, which anyone may pay).
 *
 * All data is fetched as JSON and written with `textContent`, so nothing from an order is ever
 * parsed as HTML.
 *
 * @module
 */
import { escapeHtml } from '../html'

/**
 * The page. With `codeUrl` (possibly `''`), it shows only the order of that `code_url` (what a
 * person lands on from `/pay?code_url=…`); without, every order that can be paid.
 */
export function payPage(options: { mchid: string; payerOpenid: string; codeUrl?: string | undefined }): string {
  const focused = options.codeUrl !== undefined
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WeChat Pay emulator · ${escapeHtml(options.mchid)}</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222 }
  h1 { font-size: 1.3rem } .muted { color: #666 } code { background: #f3f3f3; padding: 0 .25em }
  #orders { display: flex; flex-wrap: wrap; gap: 1rem }
  .order { border: 1px solid #ddd; border-radius: 8px; padding: .75rem; width: 15rem; overflow-wrap: anywhere }
  .order .price { font-size: 1.4rem; font-weight: 600 }
  .order button { width: 100%; padding: .5rem; margin-top: .4rem; cursor: pointer; background: #07c160; color: #fff; border: 0; border-radius: 4px }
  .error { color: #b00 } #problem { margin: .5rem 0 }
  .log { overflow-x: auto } #log { border-collapse: collapse; width: 100%; font-size: .9rem }
  #log th, #log td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #eee; overflow-wrap: anywhere }
  #log th { font-weight: 600; color: #555; white-space: nowrap }
</style>
</head>
<body data-focused="${focused ? '1' : ''}" data-code-url="${escapeHtml(options.codeUrl ?? '')}" data-openid="${escapeHtml(options.payerOpenid)}">
<h1>WeChat Pay emulator <span class="muted">mchid ${escapeHtml(options.mchid)}</span></h1>
<p class="muted">Pay an order as the emulated phone: it becomes <code>SUCCESS</code> and a signed, encrypted <code>TRANSACTION.SUCCESS</code> notification goes to its <code>notify_url</code>.</p>
<p><label>Pay as openid <input id="openid" size="32"></label></p>
<div id="orders"><p class="muted">No order to pay. Create one in the app.</p></div>
<p id="problem" class="error" role="alert" hidden></p>
<h2>Notifications</h2>
<p class="muted" id="no-log">None sent yet.</p>
<div class="log"><table id="log" hidden>
<thead><tr><th>Event</th><th>Order</th><th>Kind</th><th>Deliveries</th><th>State</th></tr></thead>
<tbody></tbody>
</table></div>
<script>
(() => {
  const focused = document.body.dataset.focused === '1'
  const onlyCodeUrl = document.body.dataset.codeUrl || ''
  const openid = document.getElementById('openid')
  openid.value = localStorage.getItem('pay-emulator-openid') || document.body.dataset.openid
  openid.addEventListener('change', () => localStorage.setItem('pay-emulator-openid', openid.value))
  const problem = document.getElementById('problem')
  const orders = document.getElementById('orders')
  const table = document.getElementById('log')
  const noLog = document.getElementById('no-log')
  let shownOrders = null
  let shownLog = null

  function fail(text) {
    problem.textContent = new Date().toLocaleTimeString() + ' ' + text
    problem.hidden = false
  }

  async function pay(order) {
    try {
      const res = await fetch('/emulator/pay', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ out_trade_no: order.outTradeNo, openid: order.tradeType === 'JSAPI' ? undefined : openid.value }) })
      const out = await res.json()
      if (!res.ok) return fail('Payment refused: ' + (out.detail || res.status))
      problem.hidden = true
    } catch (e) { fail('Payment failed: ' + e) }
    refresh()
  }

  function div(text, className) {
    const el = document.createElement('div')
    el.textContent = text
    if (className) el.className = className
    return el
  }

  function renderOrders(list) {
    const key = JSON.stringify(list.map((o) => [o.outTradeNo, o.tradeState, o.payable]))
    if (key === shownOrders) return
    shownOrders = key
    orders.replaceChildren()
    const open = list.filter((o) => o.payable || focused)
    if (open.length === 0) {
      orders.append(div(focused ? 'This code_url is unknown.' : 'No order to pay. Create one in the app.', 'muted'))
      return
    }
    for (const o of open) {
      const box = document.createElement('div'); box.className = 'order'
      box.append(div('¥' + (o.total / 100).toFixed(2), 'price'), div(o.description), div(o.outTradeNo, 'muted'))
      if (o.tradeType === 'JSAPI') box.append(div('JSAPI, payer ' + o.payer, 'muted'))
      if (o.payable) {
        const button = document.createElement('button'); button.textContent = 'Pay'
        button.addEventListener('click', () => pay(o))
        box.append(button)
      } else box.append(div(o.tradeState === 'NOTPAY' ? 'expired' : o.tradeState))
      orders.append(box)
    }
  }

  function cell(text) {
    const td = document.createElement('td')
    td.textContent = text
    return td
  }

  function renderLog(list) {
    const key = JSON.stringify(list)
    if (key === shownLog) return
    shownLog = key
    const body = table.tBodies[0]
    body.replaceChildren()
    for (const n of list.slice().reverse()) {
      const tr = document.createElement('tr')
      const deliveries = n.attempts.map((a) => a.status === null ? 'none' : String(a.status)).join(', ')
      tr.append(cell(n.eventType + ' ' + n.id), cell(n.outTradeNo + (n.outRefundNo ? ' / ' + n.outRefundNo : '')), cell(n.kind), cell(deliveries), cell(n.state))
      body.append(tr)
    }
    table.hidden = list.length === 0
    noLog.hidden = list.length > 0
  }

  async function refresh() {
    try {
      const list = await (await fetch('/emulator/orders')).json()
      renderOrders(list.filter((o) => !focused || o.codeUrls.includes(onlyCodeUrl)))
      renderLog(await (await fetch('/emulator/notifications')).json())
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
