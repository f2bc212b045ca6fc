/**
 * `GET` and `POST {base}/m/pay` and `GET {base}/m/order`: the phone pages of `payments.phone`
 * (docs/behaviour.md, B-phone-3…10). Like the confirm page they answer a phone's browser, so every
 * answer is an HTML page (or the redirect to WeChat OAuth), refusals included, each with a clear page,
 * its 4xx, and its code in `x-scanauth-error` for programs (B-wire-7).
 *
 * @module
 */
import { ScanAuthError, type ScanAuthErrorCode } from '../errors'
import { formBody } from './confirm-routes'
import { errorPage, PAGE_HEADERS } from './html-page'
import { cashierPage, openInWeChatPage, orderPage, plansPage, subscribedPage } from './phone-page'
import type { PhoneEntryStep } from '../phone/api'
import { headerValue, queryValue } from './request'
import { Prepared, type RouteRun } from './route'
import type { HttpRequest, HttpResponse } from './types'

/** The title of the page that explains each refusal; the detail is the error's own message. */
const TITLES: Partial<Record<ScanAuthErrorCode, string>> = {
  phone_not_configured: 'Paying on the phone is not set up',
  phone_ticket_invalid: 'This link is not valid',
  phone_ticket_used: 'This link was used already',
  phone_ticket_expired: 'This link has expired',
  phone_wrong_user: 'Not yours',
  phone_csrf_invalid: 'This page is out of date',
  phone_oauth_refused: 'WeChat did not confirm who you are',
  phone_oauth_failed: 'WeChat could not be reached',
  user_not_found: 'No account yet',
  plan_not_found: 'No such plan',
  order_not_found: 'No such order',
  order_not_paid: 'Not paid',
  payment_provider_failed: 'WeChat Pay could not be reached',
  purchase_in_progress: 'One moment',
  rate_limited: 'Too many purchases',
  subscription_not_configured: 'Reminders are not set up',
  subscription_invalid: 'This reminder was not offered here',
  subscription_state_invalid: 'This link is not yours, or was used already',
  invalid_request: 'This request is not complete',
}

/** An HTML answer; a refusal names its code in `x-scanauth-error`. */
function html(status: number, text: string, code?: string, headers: Record<string, string> = PAGE_HEADERS): HttpResponse {
  return { status, headers: code === undefined ? { ...headers } : { ...headers, 'x-scanauth-error': code }, text }
}

/** The page of an error: a refusal explains itself; anything else is a 500 that reveals nothing. */
function errorAnswer(error: unknown, request: HttpRequest, onError: ((error: unknown, request: HttpRequest) => void) | undefined): HttpResponse {
  if (error instanceof ScanAuthError && (error.status < 500 || error.code === 'phone_oauth_failed' || error.code === 'payment_provider_failed')) {
    // A failure of WeChat or WeChat Pay is reported; the page says it in our words (B-wire-5).
    if (error.status >= 500) onError?.(error, request)
    const headers: Record<string, string> = error.retryAfterSeconds === undefined ? { ...PAGE_HEADERS } : { ...PAGE_HEADERS, 'retry-after': String(error.retryAfterSeconds) }
    const detail = error.code === 'payment_provider_failed' ? 'WeChat Pay did not answer; nothing was charged. Try again in a moment.' : error.message
    return html(error.status, errorPage(TITLES[error.code] ?? 'Request refused', detail), error.code, headers)
  }
  onError?.(error, request)
  return html(500, errorPage('Something went wrong', 'The server could not answer this request. Try again in a moment.'))
}

/** The answer of a step taken before WeChat says who is there. */
function entryAnswer(step: PhoneEntryStep): HttpResponse {
  if (step.step === 'open_in_wechat') return html(200, openInWeChatPage())
  return { status: 302, headers: { location: step.location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } }
}

/** A fresh nonce for the cashier's script: 16 random bytes, base64. */
function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return btoa(String.fromCharCode(...bytes))
}

/** The query values a phone page reads, and the browser's user agent. */
function pageQuery(request: HttpRequest, names: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {}
  for (const name of names) {
    const value = queryValue(request, name)
    if (value !== undefined) values[name] = value
  }
  const userAgent = headerValue(request, 'user-agent')
  if (userAgent !== undefined) values.userAgent = userAgent
  return values
}

/** `GET m/pay[?ticket=…][&code=…&state=…]`: to WeChat OAuth first, then the plans. */
export const phonePayPageRoute: RouteRun = async (request, { auth, onError }) => {
  // A HEAD (a link preview, a prefetch) must not spend WeChat's one-time code nor the ticket.
  if (request.method.toUpperCase() === 'HEAD') return new Prepared(html(200, ''))
  try {
    const step = await auth.openPhonePay(pageQuery(request, ['ticket', 'code', 'state']))
    if (step.step === 'plans') return new Prepared(html(200, plansPage(step.view)))
    if (step.step === 'cashier') throw new Error('openPhonePay answered a cashier')
    return new Prepared(entryAnswer(step))
  } catch (error) {
    return new Prepared(errorAnswer(error, request, onError))
  }
}

/** `POST m/pay` with the form's `csrf` and `plan`: the cashier (no plan: the plans again). */
export const phonePlanRoute: RouteRun = async (request, { auth, maxBodyBytes, onError }) => {
  try {
    const form = formBody(request, maxBodyBytes)
    const address = request.clientAddress
    const step = await auth.choosePhonePlan({
      csrf: form.csrf ?? '',
      ...(form.plan === undefined ? {} : { plan: form.plan }),
      ...(address === undefined || address === '' ? {} : { clientAddress: address }),
    })
    if (step.step === 'plans') return new Prepared(html(200, plansPage(step.view)))
    if (step.step !== 'cashier') throw new Error(`choosePhonePlan answered ${step.step}`)
    const page = cashierPage(step.cashier, newNonce())
    return new Prepared(html(200, page.html, undefined, page.headers))
  } catch (error) {
    return new Prepared(errorAnswer(error, request, onError))
  }
}

/** `GET m/order?id=…[&code=…&state=…]`: to WeChat OAuth first, then the order, asked of WeChat Pay. */
export const phoneOrderPageRoute: RouteRun = async (request, { auth, onError }) => {
  if (request.method.toUpperCase() === 'HEAD') return new Prepared(html(200, ''))
  try {
    const query = pageQuery(request, ['id', 'code', 'state'])
    const { id, ...rest } = query
    const step = await auth.openPhoneOrder({ orderId: id ?? '', ...rest })
    if (step.step === 'order') return new Prepared(html(200, orderPage(step.view)))
    return new Prepared(entryAnswer(step))
  } catch (error) {
    return new Prepared(errorAnswer(error, request, onError))
  }
}

/**
 * `GET m/subscribed`: WeChat's redirect back from the one-time subscription page, with `openid` (on a
 * confirmation), `template_id`, `action`, `scene` and `reserved` (B-remind-7). Not behind the
 * WeChat-browser check: WeChat itself sends the phone here.
 */
export const subscribedRoute: RouteRun = async (request, { auth, onError }) => {
  if (request.method.toUpperCase() === 'HEAD') return new Prepared(html(200, ''))
  try {
    const value = (name: string) => queryValue(request, name)
    const redirect = { openid: value('openid'), templateId: value('template_id'), action: value('action'), scene: value('scene'), reserved: value('reserved') }
    const outcome = await auth.acceptSubscription(Object.fromEntries(Object.entries(redirect).filter(([, v]) => v !== undefined)))
    return new Prepared(html(200, subscribedPage(outcome)))
  } catch (error) {
    return new Prepared(errorAnswer(error, request, onError))
  }
}
