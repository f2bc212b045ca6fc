/**
 * `createWechatPayClient`: the WeChat Pay API v3 calls scanauth needs (Native and JSAPI orders,
 * query, close, refund, refund query) on `fetch` and `node:crypto`. Every argument is checked before
 * anything is signed; every 2xx answer is verified before it is believed.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import type { JsapiPayParameters } from '@scanauth/core'
import { WechatPayError } from './errors'
import { exchange, type ExchangeContext, type FetchLike } from './http'
import { jsapiPayParameters } from './jsapi'
import { toMerchantPrivateKey, toVerificationKeySet, type VerificationKeys, type VerificationKeySet } from './keys'
import type { WechatPayRefund, WechatPayTransaction } from './resources'
import { checkFen, checkNotifyUrl, checkOpenid, checkPattern, checkText, checkTime, formatBeijingTime, OUT_REFUND_NO_PATTERN, OUT_TRADE_NO_PATTERN } from './validate'
import { checkMaxSkew } from './verify'

/** WeChat Pay's API host. */
export const WECHAT_PAY_API_BASE = 'https://api.mch.weixin.qq.com'

/** Options of {@link createWechatPayClient}. */
export interface WechatPayClientOptions {
  /** Merchant id (`mchid`). */
  mchid: string
  /** App id bound to the merchant (the Official Account's). */
  appid: string
  /** The merchant API private key, `apiclient_key.pem`. */
  merchantPrivateKey: string | Buffer | KeyObject
  /** Serial (hex) of the merchant API certificate, sent as `serial_no`. */
  merchantCertSerial: string
  /** WeChat Pay's keys by serial: platform certificates and/or the `PUB_KEY_ID_…` public key. */
  verificationKeys: VerificationKeys | VerificationKeySet
  /**
   * Sent as `Wechatpay-Serial` on every request, asking WeChat Pay to sign its answers with that key:
   * set it to your `PUB_KEY_ID_…` in public-key mode (answers use a platform certificate otherwise).
   */
  requestSerial?: string
  /** API base URL. Default `https://api.mch.weixin.qq.com`; an emulator's URL in tests. */
  apiBase?: string
  /** Where WeChat Pay posts payment and refund notifications: absolute, https in production, no query string. */
  notifyUrl: string
  /** The `fetch` to use. Default: the global one. */
  fetch?: FetchLike
  /** The clock, epoch milliseconds (request timestamps and the skew check of answers). Default `Date.now`. */
  now?: () => number
  /** Deadline of one whole exchange, in milliseconds. Default 10 000. */
  timeoutMs?: number
  /** Allowed distance of an answer's `Wechatpay-Timestamp` from our clock, in seconds. Default 300. */
  maxSkewSeconds?: number
}

/** Input of {@link WechatPayClient.createNativeOrder}. */
export interface NativeOrderInput {
  /** Our order id: 6–32 characters of `[0-9A-Za-z_\-*]`, unique per merchant. */
  outTradeNo: string
  /** Shown to the payer; at most 127 bytes of UTF-8 (42 Chinese characters). */
  description: string
  /** The amount in fen, a positive safe integer (1990 = ¥19.90). */
  amountFen: number
  /** Payment deadline (`time_expire`), sent in China Standard Time (`…+08:00`). */
  expiresAt?: number | Date
  /** Echoed back in queries and notifications; at most 128 characters. */
  attach?: string
}

/** Input of {@link WechatPayClient.createJsapiOrder}: a Native order's fields and who pays. */
export interface JsapiOrderInput extends NativeOrderInput {
  /** The payer's openid under the client's `appid` (`payer.openid`): 1–128 characters, no control characters. */
  payerOpenid: string
}

/** What {@link WechatPayClient.createJsapiOrder} answers. */
export interface JsapiOrderResult {
  /** The order's `prepay_id`, valid for 2 hours; the cashier gets it as `package: 'prepay_id=…'`. */
  prepayId: string
}

/** Input of {@link WechatPayClient.refund}. */
export interface RefundInput {
  /** The paid order. */
  outTradeNo: string
  /** Our refund number (1–64 of `[0-9A-Za-z_\-|*@]`). Retry with the same number: WeChat Pay refunds it once. */
  outRefundNo: string
  /** Amount to refund, in fen. */
  refundFen: number
  /** The order's total, in fen. */
  totalFen: number
  /** Shown to the payer; at most 80 characters. */
  reason?: string
  /** Where the refund's notification goes. Default: the client's `notifyUrl`. */
  notifyUrl?: string
}

/** What {@link WechatPayClient.createNativeOrder} answers. */
export interface NativeOrderResult {
  /** What the pay code encodes: `weixin://wxpay/bizpayurl?pr=…`, valid for 2 hours. */
  codeUrl: string
}

/** A WeChat Pay API v3 client for one merchant. */
export interface WechatPayClient {
  /** The merchant id. */
  readonly mchid: string
  /** The app id orders are opened for. */
  readonly appid: string
  /** Opens a Native order (re-entry with the same parameters answers a fresh code for the same order). */
  createNativeOrder(input: NativeOrderInput): Promise<NativeOrderResult>
  /**
   * Opens a JSAPI order for `payerOpenid` (`POST /v3/pay/transactions/jsapi`). Re-entry with the same
   * parameters while the order is open answers its current `prepay_id`; other parameters on the same
   * `outTradeNo` are refused by WeChat Pay (`OUT_TRADE_NO_USED`).
   */
  createJsapiOrder(input: JsapiOrderInput): Promise<JsapiOrderResult>
  /**
   * The cashier's parameters for `prepayId`, signed with the client's merchant key for its `appid`
   * and stamped by its clock: {@link jsapiPayParameters} with what the client already holds.
   */
  signJsapiPayParameters(prepayId: string, options?: { timeStamp?: string; nonceStr?: string }): JsapiPayParameters
  /** The order as WeChat Pay knows it, or null when it knows none by that id (`ORDER_NOT_EXIST`). */
  queryOrder(outTradeNo: string): Promise<WechatPayTransaction | null>
  /** Closes an unpaid order: `closed`, or `paid` when WeChat Pay answers `ORDERPAID`. */
  closeOrder(outTradeNo: string): Promise<'closed' | 'paid'>
  /** Asks for a refund. The answer only means accepted; its `status` is usually `PROCESSING`. */
  refund(input: RefundInput): Promise<WechatPayRefund>
  /** A refund by our refund number, or null when WeChat Pay knows none (404). */
  queryRefund(outRefundNo: string): Promise<WechatPayRefund | null>
}

function requiredString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new WechatPayError('invalid_options', `createWechatPayClient: ${name} is required`)
  return value.trim()
}

/** A JSON object answer, or `bad_response`. */
function objectAnswer(json: unknown, endpoint: string): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new WechatPayError('bad_response', `WeChat Pay ${endpoint} answered without the JSON object it promises`)
  }
  return json as Record<string, unknown>
}

/** WeChat Pay's codes for "no such order / refund". */
const NOT_FOUND_CODES = new Set(['ORDER_NOT_EXIST', 'ORDERNOTEXIST', 'RESOURCE_NOT_EXISTS'])

/**
 * True for WeChat Pay's own "does not exist" answer, which queries turn into null. A bare 404 (a
 * wrong `apiBase`, a proxy) stays an error: reading it as "no such order" could close a paid one.
 */
function isNotFound(error: unknown): boolean {
  return error instanceof WechatPayError && error.code === 'http_error' && error.status === 404 && NOT_FOUND_CODES.has(error.wechatCode ?? '')
}

/**
 * Creates the client. Options are checked here (`invalid_options`): the keys are parsed once, the
 * notify URL must be absolute without a query string.
 *
 * @example
 * ```ts
 * import { createWechatPayClient } from '@scanauth/wechat-pay'
 *
 * declare const merchantKeyPem: string, platformCertPem: string, wechatPayPublicKeyPem: string
 * const client = createWechatPayClient({
 *   mchid: '1230000109',
 *   appid: 'wxd678efh567hg6787',
 *   merchantPrivateKey: merchantKeyPem,
 *   merchantCertSerial: '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C',
 *   verificationKeys: {
 *     '5157F45F2ACD8E2B': platformCertPem,
 *     PUB_KEY_ID_0114232134912410000000000000: wechatPayPublicKeyPem,
 *   },
 *   notifyUrl: 'https://example.com/wxpay/notify',
 * })
 * const { codeUrl } = await client.createNativeOrder({ outTradeNo: 'SA0001', description: '30-day pass', amountFen: 1990 })
 * ```
 */
export function createWechatPayClient(options: WechatPayClientOptions): WechatPayClient {
  const mchid = requiredString('mchid', options.mchid)
  const appid = requiredString('appid', options.appid)
  const notifyUrl = checkNotifyUrl('notifyUrl', options.notifyUrl)
  const timeoutMs = options.timeoutMs ?? 10_000
  if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) throw new WechatPayError('invalid_options', 'createWechatPayClient: timeoutMs must be a positive integer')
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const context: ExchangeContext = {
    apiBase: options.apiBase ?? WECHAT_PAY_API_BASE,
    mchid,
    merchantCertSerial: requiredString('merchantCertSerial', options.merchantCertSerial),
    merchantPrivateKey: toMerchantPrivateKey(options.merchantPrivateKey),
    verificationKeys: toVerificationKeySet(options.verificationKeys),
    requestSerial: options.requestSerial === undefined ? undefined : requiredString('requestSerial', options.requestSerial),
    fetch: fetchImpl,
    now: options.now ?? Date.now,
    timeoutMs,
    maxSkewSeconds: checkMaxSkew(options.maxSkewSeconds),
    userAgent: `scanauth-wechat-pay/0.1.0 (Node.js ${process.version})`,
  }
  try {
    new URL(context.apiBase)
  } catch {
    throw new WechatPayError('invalid_options', `createWechatPayClient: apiBase ${JSON.stringify(context.apiBase)} is not an absolute URL`)
  }
  const tradeNo = (value: unknown) => checkPattern('outTradeNo', value, OUT_TRADE_NO_PATTERN, '6–32 characters of [0-9A-Za-z_-*]')
  const refundNo = (value: unknown) => checkPattern('outRefundNo', value, OUT_REFUND_NO_PATTERN, '1–64 characters of [0-9A-Za-z_-|*@]')
  const mchidQuery = `mchid=${encodeURIComponent(mchid)}`
  /** The body both order kinds share, in the documented field order. */
  const orderBody = (input: NativeOrderInput): Record<string, unknown> => {
    const body: Record<string, unknown> = {
      appid,
      mchid,
      description: checkText('description', input.description, 127),
      out_trade_no: tradeNo(input.outTradeNo),
    }
    if (input.expiresAt !== undefined) body.time_expire = formatBeijingTime(checkTime('expiresAt', input.expiresAt))
    if (input.attach !== undefined) body.attach = checkText('attach', input.attach, 128)
    body.notify_url = notifyUrl
    body.amount = { total: checkFen('amountFen', input.amountFen), currency: 'CNY' }
    return body
  }

  return {
    mchid,
    appid,

    async createNativeOrder(input) {
      const { json } = await exchange(context, { method: 'POST', path: '/v3/pay/transactions/native', body: orderBody(input) })
      const codeUrl = objectAnswer(json, 'native order').code_url
      if (typeof codeUrl !== 'string' || codeUrl === '') throw new WechatPayError('bad_response', 'WeChat Pay answered the Native order without a code_url')
      return { codeUrl }
    },

    async createJsapiOrder(input) {
      // The payer goes last and is checked with the rest, before anything is signed.
      const body = { ...orderBody(input), payer: { openid: checkOpenid('payerOpenid', input.payerOpenid) } }
      const { json } = await exchange(context, { method: 'POST', path: '/v3/pay/transactions/jsapi', body })
      const prepayId = objectAnswer(json, 'JSAPI order').prepay_id
      if (typeof prepayId !== 'string' || prepayId === '') throw new WechatPayError('bad_response', 'WeChat Pay answered the JSAPI order without a prepay_id')
      return { prepayId }
    },

    signJsapiPayParameters(prepayId, options = {}) {
      const timeStamp = options.timeStamp ?? String(Math.floor(context.now() / 1000))
      return jsapiPayParameters({ appId: appid, prepayId, privateKey: context.merchantPrivateKey, timeStamp, ...(options.nonceStr === undefined ? {} : { nonceStr: options.nonceStr }) })
    },

    async queryOrder(outTradeNo) {
      const path = `/v3/pay/transactions/out-trade-no/${encodeURIComponent(tradeNo(outTradeNo))}?${mchidQuery}`
      try {
        const { json } = await exchange(context, { method: 'GET', path })
        return objectAnswer(json, 'order query') as WechatPayTransaction
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },

    async closeOrder(outTradeNo) {
      const path = `/v3/pay/transactions/out-trade-no/${encodeURIComponent(tradeNo(outTradeNo))}/close`
      try {
        await exchange(context, { method: 'POST', path, body: { mchid } })
        return 'closed'
      } catch (error) {
        // Paid meanwhile: the caller must grant, not close (B-order-4).
        if (error instanceof WechatPayError && error.code === 'http_error' && error.wechatCode === 'ORDERPAID') return 'paid'
        throw error
      }
    },

    async refund(input) {
      const refund = checkFen('refundFen', input.refundFen)
      const total = checkFen('totalFen', input.totalFen)
      if (refund > total) throw new WechatPayError('invalid_argument', `refundFen ${refund} is more than totalFen ${total}`)
      const body: Record<string, unknown> = { out_trade_no: tradeNo(input.outTradeNo), out_refund_no: refundNo(input.outRefundNo) }
      if (input.reason !== undefined) body.reason = checkText('reason', input.reason, 80)
      body.notify_url = input.notifyUrl === undefined ? notifyUrl : checkNotifyUrl('notifyUrl', input.notifyUrl)
      body.amount = { refund, total, currency: 'CNY' }
      const { json } = await exchange(context, { method: 'POST', path: '/v3/refund/domestic/refunds', body })
      return objectAnswer(json, 'refund') as WechatPayRefund
    },

    async queryRefund(outRefundNo) {
      const path = `/v3/refund/domestic/refunds/${encodeURIComponent(refundNo(outRefundNo))}`
      try {
        const { json } = await exchange(context, { method: 'GET', path })
        return objectAnswer(json, 'refund query') as WechatPayRefund
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },
  }
}
