/**
 * The demo page's endpoints under `/demo/`: the emulated phone's scan, its payment, and the pay
 * code as an image. Each takes the parsed JSON body (or the query) and returns a
 * {@link DemoResponse} for any framework to send. The scan exists only while the Official Account is
 * emulated and the payment only while WeChat Pay is (404 otherwise): with the real ones, people scan
 * and pay with WeChat. Both, and `/demo/config`, answer only in demo mode ({@link DemoContext.routes}:
 * fully emulated, or `SCANAUTH_DEMO=1`; demo-mode.ts), since beside a real part they would sign
 * anyone in or pay any order for nothing. The pay code's image is harmless and always answers.
 *
 * @module
 */
import QRCode from 'qrcode'
import { SCENE_STR_PATTERN, type ScanAuth } from '@scanauth/core'
import { OUT_TRADE_NO_PATTERN } from '@scanauth/wechat-pay'
import { WechatEmulatorError, type WechatEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'

/** A response of the demo endpoints, for any framework to send: JSON unless `type` says otherwise. */
export interface DemoResponse {
  /** HTTP status. */
  status: number
  /** The JSON body (the answer, or `{detail}` for an error), or the text of a `type` answer. */
  body: unknown
  /** The content type of a body that is not JSON (then `body` is a string), e.g. the pay code's SVG. */
  type?: string
  /** Extra response headers. */
  headers?: Record<string, string>
}

/** The openids an emulated scan may use; stricter than core's 1–128 characters, for the log's sake. */
const OPENID = /^[\w-]{1,64}$/
const OPENID_RULE = 'openid must be 1-64 letters, digits, _ or -'

/** What the demo endpoints work with. */
export interface DemoContext {
  /** The scanauth instance. */
  auth: ScanAuth
  /** The in-process Official Account emulator; null with a real account, where the scan answers 404. */
  emulator: WechatEmulator | null
  /** The in-process WeChat Pay emulator; null with a real merchant, where the payment answers 404. */
  payEmulator: WechatPayEmulator | null
  /** Demo mode (demo-mode.ts): the scan and the payment answer 404 without it, whatever is emulated. */
  routes: boolean
  /** The server's log. */
  log(line: string): void
}

/**
 * The emulated phone's WeChat user. The emulator scans as this openid from its own page (its
 * `demoOpenid`), and `GET /demo/config` gives it to the demo page for "Scan with the emulated phone":
 * one phone, one user, whichever page scans. It passes the scan's openid check.
 */
export const EMULATED_PHONE_OPENID = 'o_emulator_demo_user'

/** What the demo routes answer outside demo mode: as if they did not exist, with a hint for the developer. */
export const DEMO_OFF: DemoResponse = Object.freeze({
  status: 404,
  body: Object.freeze({ detail: 'Not found: the demo routes are off unless the server is fully emulated or SCANAUTH_DEMO=1' }),
})

const fields = (body: unknown) => (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>

/**
 * `POST /demo/emulator-scan` `{scene_str, openid}`: the emulated phone scans the scene. Answers
 * `{scanned, reply, phone_url}`: the passive reply the phone got, and, when it carries a link (the
 * confirm link of confirm on the phone, or "Buy on this phone" of a scan that needs a purchase), the
 * emulated phone's page where that link can be opened.
 */
export async function demoScan({ emulator, routes, log }: DemoContext, body: unknown): Promise<DemoResponse> {
  if (!routes) return DEMO_OFF
  if (emulator === null) return { status: 404, body: { detail: 'No emulator: scan the code with WeChat' } }
  const { scene_str: sceneStr, openid } = fields(body)
  if (typeof sceneStr !== 'string' || !SCENE_STR_PATTERN.test(sceneStr)) return { status: 400, body: { detail: 'scene_str is required' } }
  if (typeof openid !== 'string' || !OPENID.test(openid)) return { status: 400, body: { detail: OPENID_RULE } }
  try {
    const push = await emulator.scan({ sceneStr, openid })
    if (push.status !== 200) throw new Error(`the callback answered ${push.status ?? 'nothing'}`)
    const reply = push.reply?.Content ?? null
    // The reply links to the confirm page (confirm on the phone) or to the phone pay pages (a
    // need_purchase scan), which the emulated phone's chat (the emulator's page) opens as this person.
    const phoneUrl = reply !== null && reply.includes('<a href=') ? `${emulator.url}/` : null
    return { status: 200, body: { scanned: sceneStr, reply, phone_url: phoneUrl } }
  } catch (error) {
    log(`emulated scan failed: ${error instanceof Error ? error.message : String(error)}`)
    return { status: 502, body: { detail: `The emulated scan failed: ${error instanceof Error ? error.message : String(error)}` } }
  }
}

/**
 * What a refused payment answers, by the emulator's reason: the order is paid already (409), or can
 * no longer be paid (410: closed, past its deadline, or its code too old); one the emulator never
 * opened is 404.
 */
const PAY_REFUSALS: Record<string, number> = {
  unknown_order: 404,
  order_paid: 409,
  order_closed: 410,
  order_expired: 410,
  code_url_expired: 410,
  invalid_argument: 400,
}

/**
 * `POST /demo/pay` `{order_id}`: the emulated phone pays the order at the in-process WeChat Pay
 * emulator, which then notifies `/wechatpay/notify` as WeChat Pay would (in the background; the page
 * learns of the payment from its wait on the scene). 200 `{order_id, transaction_id, trade_state}`;
 * 400 for a malformed id; 404 for an order the emulator does not know, or without the emulator;
 * 409/410 with the emulator's reason when the order cannot be paid; 404 outside demo mode.
 */
export async function demoPay({ payEmulator, routes, log }: DemoContext, body: unknown): Promise<DemoResponse> {
  if (!routes) return DEMO_OFF
  if (payEmulator === null) return { status: 404, body: { detail: 'No WeChat Pay emulator: pay the code with WeChat' } }
  const { order_id: orderId } = fields(body)
  if (typeof orderId !== 'string' || !OUT_TRADE_NO_PATTERN.test(orderId)) {
    return { status: 400, body: { detail: 'order_id is required: the order_id POST /auth/purchase answered' } }
  }
  try {
    const transaction = await payEmulator.pay({ outTradeNo: orderId })
    log(`emulated payment of order ${orderId}: ${String(transaction.transaction_id)}`)
    return { status: 200, body: { order_id: orderId, transaction_id: transaction.transaction_id, trade_state: transaction.trade_state } }
  } catch (error) {
    const status = error instanceof WechatEmulatorError ? PAY_REFUSALS[error.code] : undefined
    if (status === undefined) throw error
    log(`emulated payment of order ${orderId} refused: ${(error as WechatEmulatorError).code}`)
    return { status, body: { detail: (error as Error).message, code: (error as WechatEmulatorError).code } }
  }
}

/** What the pay code may encode: WeChat Pay's Native `code_url`, nothing else (this is no QR service). */
const PAY_CODE_TEXT = /^weixin:\/\/wxpay\/[\x21-\x7e]{1,240}$/

/**
 * `GET /demo/qr.svg?text=<code_url>`: the pay code as an SVG image, for the page to show (a real app
 * would draw it on the device). Only `weixin://wxpay/…` texts of at most 255 characters; 400 otherwise.
 * It works whichever WeChat Pay is used: the code of a real order is what a real phone scans.
 */
export async function demoQr(text: unknown): Promise<DemoResponse> {
  if (typeof text !== 'string' || !PAY_CODE_TEXT.test(text)) {
    return { status: 400, body: { detail: 'text must be a WeChat Pay code_url (weixin://wxpay/…, at most 255 characters)' } }
  }
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } })
  return {
    status: 200,
    body: svg,
    type: 'image/svg+xml',
    // The same text always draws the same code; and an image has no business running anything.
    headers: { 'cache-control': 'private, max-age=3600', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'", 'x-content-type-options': 'nosniff' },
  }
}
