/**
 * The pay emulator's JSAPI cashier over HTTP, for the `WeixinJSBridge` stand-in (`bridge.ts`) and
 * for tests:
 *
 * | endpoint | answers |
 * |---|---|
 * | `GET /emulator/jsapi-bridge.js` | the stand-in script (JavaScript, no cache, loadable from any origin) |
 * | `POST /emulator/jsapi/cashier` | `{ ok: true, description, total, payer }`, or 409 `{ ok: false, reason }`: what the cashier shows, nothing paid |
 * | `POST /emulator/jsapi/pay` | `{ err_msg: 'get_brand_wcpay_request:ok' }` once paid, or 409 `{ err_msg: '…:fail', reason }` |
 *
 * Both POSTs take the six cashier parameters as a JSON body of any content type (the script sends
 * `text/plain`, which needs no preflight). Who is paying: the person looking at the page, i.e. the
 * Official Account emulator's phone user, named by its `wxemu_openid` cookie (per host, so it reaches
 * this port when the script's `fetch` sends credentials), else the `payerOpenid` option. That is why
 * CORS answers echo the request's `Origin` with `Access-Control-Allow-Credentials: true` rather than
 * `*`, which browsers refuse with credentials.
 *
 * A payment goes through the emulator's `pay` (the order becomes SUCCESS and a signed notification
 * goes to its `notify_url` with retries), exactly as `emulator.pay()` and the page's button do.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { WechatEmulatorError } from '../errors'
import { readBody, send, sendJson } from '../http-io'
import { cookieValue, OPENID_COOKIE } from '../oauth'
import { bridgeScript, JSAPI_BRIDGE_PATH } from './bridge'
import { cashierParameters, checkCashier, type CashierCheck } from './cashier'
import type { MerchantKeys } from './keys'
import type { OrderBook } from './orders'
import { jsonObject } from './validate'

/** What the cashier endpoints need from the server. */
export interface JsapiDeps {
  api: { appid: string; orders: OrderBook }
  merchantKeys: MerchantKeys
  toleranceSeconds: number
  payerOpenid: string
  now: () => number
  pay(input: { prepayId: string; openid: string }): Promise<Record<string, unknown>>
}

const CASHIER_PATH = '/emulator/jsapi/cashier'
const PAY_PATH = '/emulator/jsapi/pay'
const OK = 'get_brand_wcpay_request:ok'
const FAIL = 'get_brand_wcpay_request:fail'

/** Whether the request is one of these endpoints. */
export function isJsapiPath(pathname: string): boolean {
  return pathname === JSAPI_BRIDGE_PATH || pathname === CASHIER_PATH || pathname === PAY_PATH
}

/** CORS for a credentialed request from any page: the page's own origin, never `*`. */
function corsHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin
  if (origin === undefined) return {}
  return { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' }
}

/** Serves one of the endpoints (see {@link isJsapiPath}). */
export async function serveJsapi(deps: JsapiDeps, method: string, pathname: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (pathname === JSAPI_BRIDGE_PATH) {
    if (method !== 'GET' && method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'GET only', { allow: 'GET, HEAD' })
    // The origin the browser used to reach us; the script prefers its own src.
    const fallback = `http://${req.headers.host ?? '127.0.0.1'}`
    return send(res, 200, 'text/javascript; charset=utf-8', bridgeScript(fallback), {
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    })
  }
  const cors = corsHeaders(req)
  if (method === 'OPTIONS') {
    // Only a page that sends another content type than the script does needs a preflight.
    res.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type', 'access-control-max-age': '600' }).end()
    return
  }
  if (method !== 'POST') return sendJson(res, 405, { detail: 'POST only' }, { ...cors, allow: 'POST, OPTIONS' })

  const params = cashierParameters(jsonObject(await readBody(req)))
  const viewer = cookieValue(req.headers.cookie, OPENID_COOKIE) ?? deps.payerOpenid
  const check: CashierCheck =
    'reason' in params
      ? { ok: false, reason: params.reason }
      : checkCashier({ appid: deps.api.appid, merchantKeys: deps.merchantKeys.all(), orders: deps.api.orders, now: deps.now(), toleranceSeconds: deps.toleranceSeconds }, params, viewer)

  if (pathname === CASHIER_PATH) {
    if (!check.ok) return sendJson(res, 409, { ok: false, reason: check.reason }, cors)
    const { input } = check.order
    return sendJson(res, 200, { ok: true, description: input.description, total: input.total, payer: input.payerOpenid }, cors)
  }
  if (!check.ok) return sendJson(res, 409, { err_msg: FAIL, reason: check.reason }, cors)
  try {
    await deps.pay({ prepayId: check.prepayId, openid: viewer })
  } catch (error) {
    // Paid or closed between the check and now: the same refusal, named by the emulator's pay.
    if (error instanceof WechatEmulatorError) return sendJson(res, 409, { err_msg: FAIL, reason: error.message }, cors)
    throw error
  }
  return sendJson(res, 200, { err_msg: OK }, cors)
}
