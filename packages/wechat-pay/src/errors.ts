/**
 * The one error class of the package: {@link WechatPayError}, whose `code` says what failed. The
 * notification handler turns each code into its HTTP answer (401 for anything that is not provably
 * WeChat Pay's, 400 for a body it cannot read, 500 for our own misconfiguration), so the codes are
 * a contract, not decoration.
 *
 * @module
 */

/** What went wrong, machine-readable: the `code` of every {@link WechatPayError}. */
export type WechatPayErrorCode =
  /** An option of a `create…` function is missing or malformed (a key, the APIv3 key length, a URL); the message names it. */
  | 'invalid_options'
  /** A call's argument is out of range: an amount that is not a positive safe integer of fen, an `out_trade_no` outside WeChat's charset, … */
  | 'invalid_argument'
  /** A `Wechatpay-*` header needed to verify a response or notification is missing or repeated. Verification is never skipped. */
  | 'missing_header'
  /** The `Wechatpay-Timestamp` is further from our clock than the allowed skew (300 s by default), or not a number. */
  | 'timestamp_out_of_range'
  /** The `Wechatpay-Serial` names no key of `verificationKeys` (a platform certificate serial or a `PUB_KEY_ID_…`). */
  | 'unknown_serial'
  /** The signature does not verify over the raw bytes: forged, altered, re-serialized, or a `WECHATPAY/SIGNTEST/` probe. */
  | 'signature_invalid'
  /** A signature type or resource algorithm other than `WECHATPAY2-SHA256-RSA2048` / `AEAD_AES_256_GCM`. */
  | 'unsupported_algorithm'
  /** AES-256-GCM refused the resource: almost always a wrong APIv3 key (a server misconfiguration). */
  | 'decryption_failed'
  /** A notification body (or its decrypted resource) is not the JSON WeChat Pay sends. */
  | 'malformed_body'
  /** WeChat Pay answered a non-2xx status; `status`, `wechatCode`, `wechatMessage` and `detail` say what it said. */
  | 'http_error'
  /** The request never got an answer: DNS, refused or reset connection, TLS. */
  | 'network_error'
  /** No complete answer within `timeoutMs`. */
  | 'timeout'
  /** A 2xx answer failed verification (signature, skew, serial, headers); `cause` is the verification error. Its content was not believed. */
  | 'response_unverified'
  /** A verified 2xx answer is not the JSON the endpoint promises (e.g. no `code_url`). */
  | 'bad_response'

/** What an error carries beyond its code and message. */
export interface WechatPayErrorDetails {
  /** The underlying error. */
  cause?: unknown
  /** The HTTP status WeChat Pay answered (`http_error`, `bad_response`). */
  status?: number
  /** WeChat Pay's own error code, e.g. `PARAM_ERROR`, `SIGN_ERROR`, `ORDER_NOT_EXIST` (`http_error`). */
  wechatCode?: string
  /** WeChat Pay's own error message (`http_error`). */
  wechatMessage?: string
  /** WeChat Pay's `detail` object as sent; for a 401 `SIGN_ERROR` it holds `sign_information`. */
  detail?: unknown
  /** The `Request-ID` header of the answer, which WeChat Pay support asks for. */
  requestId?: string
}

/**
 * Every error this package throws. Catch it and read `code`; an HTTP failure also carries what
 * WeChat Pay said (`status`, `wechatCode`, `wechatMessage`, `detail`, `requestId`).
 *
 * @example
 * ```ts
 * import { WechatPayError, type WechatPayClient } from '@scanauth/wechat-pay'
 *
 * declare const client: WechatPayClient
 * try {
 *   await client.createNativeOrder({ outTradeNo: 'SA0001', description: '30-day pass', amountFen: 1990 })
 * } catch (error) {
 *   if (error instanceof WechatPayError && error.code === 'http_error') {
 *     console.error(error.status, error.wechatCode, error.wechatMessage, error.requestId)
 *   } else throw error
 * }
 * ```
 */
export class WechatPayError extends Error {
  /** Machine-readable code. */
  readonly code: WechatPayErrorCode
  /** The HTTP status WeChat Pay answered, when one was received. */
  readonly status: number | undefined
  /** WeChat Pay's error code (`PARAM_ERROR`, `SIGN_ERROR`, `ORDERPAID`, …), for `http_error`. */
  readonly wechatCode: string | undefined
  /** WeChat Pay's error message, for `http_error`. */
  readonly wechatMessage: string | undefined
  /** WeChat Pay's `detail` as sent (`field`/`issue`/`location`, or `sign_information` on a 401). */
  readonly detail: unknown
  /** The answer's `Request-ID`, when there was one. */
  readonly requestId: string | undefined

  constructor(code: WechatPayErrorCode, message: string, details: WechatPayErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'WechatPayError'
    this.code = code
    this.status = details.status
    this.wechatCode = details.wechatCode
    this.wechatMessage = details.wechatMessage
    this.detail = details.detail
    this.requestId = details.requestId
  }
}
