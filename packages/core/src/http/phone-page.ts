/**
 * The phone pages (`payments.phone`, docs/behaviour.md B-phone-3…9): the plans, the cashier, the
 * paid order, and the page that says to open the link in WeChat. Pure functions from what to show to
 * HTML text, on the skeleton of html-page.ts; every value is escaped where it is written.
 *
 * The cashier is the one page with a script, its own, at the end of the body (it needs the page's
 * elements): it reads the six parameters from
 * `<script type="application/json" id="wechatpay-jsapi">`, waits for `WeixinJSBridge` (WeChat injects
 * it, and fires `WeixinJSBridgeReady` when it is late), and calls `getBrandWCPayRequest`. On `ok` it
 * goes to the order page, which asks WeChat Pay (the `ok` proves nothing); on `cancel` it posts the
 * page's token back and shows the plans again.
 *
 * @module
 */
import type { PlanView } from '../orders/api'
import type { PhoneCashier, PhoneOrderView, PhonePayView } from '../phone/api'
import type { Authorization } from '../service/views'
import { escapeHtml, page, PAGE_HEADERS } from './html-page'

/** ¥19.90 for 1990 fen: integer arithmetic only, never a float. */
export function formatFen(fen: number): string {
  return `¥${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`
}

/** `2026-12-01 08:00 UTC` for an ISO 8601 time: the same on every phone, whatever its zone. */
function formatTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}

function describeAuthorization(a: Authorization): string {
  return a.type === 'time' ? `Access until ${formatTime(a.endAt ?? a.startAt)}` : `${a.remainingPoints} of ${a.totalPoints} points left`
}

function describePlan(plan: PlanView): string {
  const grant = plan.grant.type === 'time' ? `${plan.grant.days} day${plan.grant.days === 1 ? '' : 's'}` : `${plan.grant.points} points`
  return `${plan.description} · ${grant} · ${formatFen(plan.amountFen)}`
}

/**
 * The person's access and the plans, each a form that posts the page's token and the plan's id
 * (`name="plan"`) to `action`: `pay` from the phone pages, `m/pay` from the confirm page.
 */
export function plansSection(view: PhonePayView, action: string): string {
  const now = view.current === null ? '<p>You have no time or points right now.</p>' : `<p>Now: <strong>${escapeHtml(describeAuthorization(view.current))}</strong></p>`
  const queue =
    view.queue.length === 0 ? '' : `<p>Then, in this order:</p><ul>${view.queue.map((a) => `<li>${escapeHtml(describeAuthorization(a))}</li>`).join('')}</ul>`
  const plans = view.plans
    .map(
      (plan) => `<form class="plan" method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" name="plan" value="${escapeHtml(plan.id)}" class="buy">${escapeHtml(describePlan(plan))}</button>
</form>`,
    )
    .join('\n')
  return `${now}${queue}<h2>Buy</h2>\n${plans}`
}

/** `GET {base}/m/pay`: the plans page (B-phone-4). */
export function plansPage(view: PhonePayView): string {
  const device = view.deviceLabel === null ? '' : `<p>For the device <strong class="device">${escapeHtml(view.deviceLabel)}</strong>: it signs in as soon as the payment arrives.</p>`
  return page('Buy time or points', `<h1>Buy time or points</h1>${device}${plansSection(view, 'pay')}`)
}

/** The cashier's script: the bridge, the call, and where each answer leads (see the module comment). */
const CASHIER_SCRIPT = `(function () {
  var params = JSON.parse(document.getElementById('wechatpay-jsapi').textContent);
  var status = document.getElementById('pay-status');
  var again = document.getElementById('pay-again');
  function pay() {
    again.hidden = true;
    status.textContent = 'Opening WeChat Pay…';
    WeixinJSBridge.invoke('getBrandWCPayRequest', params, function (res) {
      var result = res && res.err_msg;
      if (result === 'get_brand_wcpay_request:ok') {
        status.textContent = 'Checking the payment…';
        window.location.href = document.getElementById('order-link').href;
      } else if (result === 'get_brand_wcpay_request:cancel') {
        document.getElementById('back-to-plans').submit();
      } else {
        status.textContent = 'The payment did not go through. Nothing was charged.';
        again.hidden = false;
      }
    });
  }
  again.addEventListener('click', pay);
  if (typeof WeixinJSBridge === 'undefined') document.addEventListener('WeixinJSBridgeReady', pay, false);
  else pay();
})();`

/** JSON made safe inside a `<script>` element: no `<` (so no `</script>`), no line separators. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/**
 * `POST {base}/m/pay`'s answer: the cashier page (B-phone-6), and its headers, whose CSP allows its
 * own script by `nonce` (and, with an emulator, the bridge's origin) and nothing else.
 */
export function cashierPage(cashier: PhoneCashier, nonce: string): { html: string; headers: Record<string, string> } {
  const bridge = cashier.emulatorBridgeUrl
  const bridgeOrigin = bridge === null ? null : new URL(bridge).origin
  const head =
    `<script type="application/json" id="wechatpay-jsapi">${scriptJson(cashier.parameters)}</script>` +
    (bridge === null ? '' : `<script src="${escapeHtml(bridge)}"></script>`)
  const device = cashier.deviceLabel === null ? '' : `<p>For the device <strong class="device">${escapeHtml(cashier.deviceLabel)}</strong></p>`
  const body = `<h1>Pay ${escapeHtml(formatFen(cashier.amountFen))}</h1>
<p>${escapeHtml(cashier.description)}</p>${device}
<p id="pay-status" role="status">Waiting for WeChat Pay…</p>
<button type="button" id="pay-again" class="buy" hidden>Try again</button>
<p><a id="order-link" href="order?id=${encodeURIComponent(cashier.orderId)}">I have paid: check the payment</a></p>
<form id="back-to-plans" method="post" action="pay"><input type="hidden" name="csrf" value="${escapeHtml(cashier.csrf)}"><button type="submit">Choose another plan</button></form>
<script nonce="${escapeHtml(nonce)}">${CASHIER_SCRIPT}</script>`
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'${bridgeOrigin === null ? '' : ` ${bridgeOrigin}`}`,
    `connect-src ${bridgeOrigin ?? "'none'"}`,
    "style-src 'unsafe-inline'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
  return { html: page(`Pay ${formatFen(cashier.amountFen)}`, body, head), headers: { ...PAGE_HEADERS, 'content-security-policy': csp } }
}

/** `GET {base}/m/order`'s page for a paid order (B-phone-7). */
export function orderPage(view: PhoneOrderView): string {
  const title = view.status === 'paid' ? 'Paid' : 'Refunded'
  const device =
    view.deviceLabel === null
      ? ''
      : `<p>The device <strong class="device">${escapeHtml(view.deviceLabel)}</strong> ${view.status === 'paid' ? 'continues on its own: you can close this page.' : 'lost what this order bought.'}</p>`
  const now = view.current === null ? '<p>You have no time or points right now.</p>' : `<p>Now: <strong>${escapeHtml(describeAuthorization(view.current))}</strong></p>`
  const remind = view.remindUrl === null ? '' : `<p><a id="remind-me" href="${escapeHtml(view.remindUrl)}">Remind me before it ends</a></p>`
  return page(title, `<h1>${title}</h1><p>${escapeHtml(view.description)} · ${escapeHtml(formatFen(view.amountFen))}</p>${device}${now}${remind}`)
}

/** `GET {base}/m/subscribed`'s page: what WeChat's subscription redirect came to (B-remind-7). */
export function subscribedPage(outcome: 'subscribed' | 'cancelled'): string {
  return outcome === 'subscribed'
    ? page('You will be reminded', '<h1>You will be reminded</h1><p>You will get one message before your access ends, with a link to renew. You can close this page.</p>')
    : page('No reminder', '<h1>No reminder</h1><p>You will not be reminded. You can close this page.</p>')
}

/** Outside WeChat's browser there is no cashier: the page says where to open the link (B-phone-3). */
export function openInWeChatPage(): string {
  return page(
    'Open this link in WeChat',
    '<h1>Open this link in WeChat</h1><p>Paying here works only inside WeChat. Copy the link and open it in a WeChat chat, or tap it in the message from the official account.</p>',
  )
}
