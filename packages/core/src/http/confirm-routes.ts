/**
 * `GET` and `POST {base}/confirm`: the confirm page of `confirm: 'link'` (docs/behaviour.md,
 * B-confirm-6…12). Unlike the other routes they answer a phone's browser, so every answer is an HTML
 * page (or the redirect to WeChat OAuth), refusals included, each with a clear page and its 4xx.
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import { ScanAuthError, type ScanAuthErrorCode } from '../errors'
import { CONFIRM_PAGE_HEADERS, decisionPage, errorPage, resultPage } from './confirm-page'
import { queryValue } from './request'
import { Prepared, type RouteRun } from './route'
import type { HttpRequest, HttpResponse } from './types'

/** The title of the page that explains each refusal; the detail is the error's own message. */
const TITLES: Partial<Record<ScanAuthErrorCode, string>> = {
  confirm_not_configured: 'Confirm on the phone is not set up',
  confirm_ticket_invalid: 'This link is not valid',
  confirm_ticket_used: 'Already answered',
  confirm_ticket_expired: 'This request has expired',
  confirm_wrong_user: 'Not your sign-in request',
  confirm_csrf_invalid: 'This page is out of date',
  confirm_oauth_refused: 'WeChat did not confirm who you are',
  confirm_oauth_failed: 'WeChat could not be reached',
  invalid_request: 'This request is not complete',
}

/** An HTML answer; a refusal names its code in `x-scanauth-error` for programs (B-wire-7). */
function html(status: number, text: string, code?: string): HttpResponse {
  return { status, headers: code === undefined ? { ...CONFIRM_PAGE_HEADERS } : { ...CONFIRM_PAGE_HEADERS, 'x-scanauth-error': code }, text }
}

/** The page of an error: a refusal explains itself; anything else is a 500 that reveals nothing. */
function errorAnswer(error: unknown, onError: ((error: unknown) => void) | undefined): HttpResponse {
  if (error instanceof ScanAuthError && error.status < 500) return html(error.status, errorPage(TITLES[error.code] ?? 'Request refused', error.message), error.code)
  // A failure of WeChat is reported; the page says it in our words (the message is ours already).
  if (!(error instanceof ScanAuthError) || error.code === 'confirm_oauth_failed') onError?.(error)
  if (error instanceof ScanAuthError && error.code === 'confirm_oauth_failed') return html(error.status, errorPage(TITLES[error.code] as string, error.message), error.code)
  return html(500, errorPage('Something went wrong', 'The server could not answer this request. Try again in a moment.'))
}

/** `GET {base}/confirm?ticket=…[&code=…&state=…]`: to WeChat OAuth first, then the page with its two forms. */
export async function openConfirmPage(auth: ScanAuth, request: HttpRequest, onError?: (error: unknown) => void): Promise<HttpResponse> {
  // A HEAD (a link preview, a prefetch) must not spend WeChat's one-time code nor replace the page's
  // CSRF token: it gets the page's headers and nothing is run.
  if (request.method.toUpperCase() === 'HEAD') return html(200, '')
  try {
    const code = queryValue(request, 'code')
    const state = queryValue(request, 'state')
    const step = await auth.openConfirmation({
      ticket: queryValue(request, 'ticket') ?? '',
      ...(code === undefined ? {} : { code }),
      ...(state === undefined ? {} : { state }),
    })
    if (step.step === 'authorize') {
      return { status: 302, headers: { location: step.location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } }
    }
    return html(200, decisionPage(step))
  } catch (error) {
    return errorAnswer(error, onError)
  }
}

/** `POST {base}/confirm` with the form's `ticket`, `csrf` and `decision`: the scanner's answer. */
export async function decideOnConfirmPage(auth: ScanAuth, request: HttpRequest, maxBodyBytes: number, onError?: (error: unknown) => void): Promise<HttpResponse> {
  try {
    const form = formBody(request, maxBodyBytes)
    const decision = form.decision
    const result = await auth.decideConfirmation({
      ticket: form.ticket ?? '',
      csrf: form.csrf ?? '',
      decision: decision as 'confirm' | 'deny',
    })
    return html(200, resultPage(result.result, result.deviceLabel, result.payment))
  } catch (error) {
    return errorAnswer(error, onError)
  }
}

// The phone's browser, not a device: HTML pages and a redirect, refusals included (B-confirm-11, B-confirm-12).

/** `GET confirm` as a route of the table (routes.ts). */
export const confirmPageRoute: RouteRun = async (request, { auth, onError }) =>
  new Prepared(await openConfirmPage(auth, request, (error) => onError?.(error, request)))

/** `POST confirm` as a route of the table (routes.ts). */
export const confirmDecisionRoute: RouteRun = async (request, { auth, maxBodyBytes, onError }) =>
  new Prepared(await decideOnConfirmPage(auth, request, maxBodyBytes, (error) => onError?.(error, request)))

// TextDecoder, as in request.ts: this module also runs under the Fetch handler on Bun and Deno.
const UTF8 = new TextDecoder('utf-8')

/**
 * The fields of an `application/x-www-form-urlencoded` body: raw bytes or text are parsed; an object a
 * body parser left (`express.urlencoded()`) is taken as it is, its string fields only.
 */
export function formBody(request: HttpRequest, maxBytes: number): Record<string, string | undefined> {
  let body = request.body
  if (body instanceof Uint8Array) {
    if (body.byteLength > maxBytes) throw new ScanAuthError('invalid_request', 'Request body is too large')
    body = UTF8.decode(body)
  }
  if (body === undefined || body === null) return {}
  if (typeof body === 'string') {
    if (body.length > maxBytes) throw new ScanAuthError('invalid_request', 'Request body is too large')
    return Object.fromEntries(new URLSearchParams(body))
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw new ScanAuthError('invalid_request', 'The form is not complete')
  const fields: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) if (typeof value === 'string') fields[key] = value
  return fields
}
