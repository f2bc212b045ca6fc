/**
 * Errors of the WeChat client. Every failure of an outbound call becomes one of these, and its
 * `message` always names the endpoint and the cause, because core turns that message into the
 * `detail` of the 502 that `create_scene` answers ("QR code creation failed: <message>"), and that
 * detail is often the only thing an operator sees.
 *
 * Messages never contain a request URL: the classic token endpoint carries the AppSecret in its query
 * string and every other call carries the access token.
 *
 * @module
 */

/** Short hints for the errcodes an operator can fix, appended to the message. */
const HINTS: Readonly<Record<number, string>> = {
  40001: 'the AppSecret is wrong or the access token is invalid or not the latest',
  40013: 'check appId',
  40125: 'check appSecret',
  40164: "add this server's outbound IP to the account's IP whitelist",
  40243: 'the AppSecret is frozen',
  41001: 'the access token is missing',
  42001: 'the access token has expired',
  45009: 'the daily API quota is used up',
  48001: 'only a verified service account may create parametric QR codes',
  [-1]: 'WeChat is busy, try again later',
}

/** Base class of every error this package throws for a failed WeChat API call. */
export class WechatError extends Error {
  /** The API path that failed, e.g. `cgi-bin/qrcode/create`. */
  readonly endpoint: string

  constructor(endpoint: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WechatError'
    this.endpoint = endpoint
  }
}

/**
 * WeChat answered with a non-zero `errcode`, e.g. `{"errcode":40013,"errmsg":"invalid appid"}`.
 *
 * @example
 * ```ts
 * try { await provider.createQr({ sceneStr, expiresInSeconds: 300 }) } catch (e) {
 *   if (e instanceof WechatApiError && e.errcode === 48001) console.error('not a verified service account')
 * }
 * ```
 */
export class WechatApiError extends WechatError {
  /** WeChat's global return code (non-zero). */
  readonly errcode: number
  /** WeChat's message, e.g. `invalid credential, access_token is invalid or not latest rid: ...`. */
  readonly errmsg: string

  constructor(endpoint: string, errcode: number, errmsg: string) {
    const hint = HINTS[errcode]
    super(endpoint, `WeChat ${endpoint} failed: errcode ${errcode} (${errmsg || 'no errmsg'})${hint ? `; ${hint}` : ''}`)
    this.name = 'WechatApiError'
    this.errcode = errcode
    this.errmsg = errmsg
  }
}

/** How an HTTP exchange with WeChat failed before an API answer could be read. */
export type WechatHttpFailure =
  /** No answer within `timeoutMs`. */
  | 'timeout'
  /** The connection failed (DNS, refused, reset, TLS). */
  | 'network'
  /** An HTTP status other than 2xx. */
  | 'http_status'
  /** A 2xx answer that is not the JSON the endpoint promises. */
  | 'bad_response'

/** The HTTP exchange itself failed: timeout, network error, non-2xx status, or an unreadable body. */
export class WechatHttpError extends WechatError {
  /** What went wrong. */
  readonly failure: WechatHttpFailure
  /** The HTTP status, when one was received. */
  readonly httpStatus: number | undefined

  constructor(endpoint: string, failure: WechatHttpFailure, message: string, options?: { cause?: unknown; httpStatus?: number }) {
    super(endpoint, message, options)
    this.name = 'WechatHttpError'
    this.failure = failure
    this.httpStatus = options?.httpStatus
  }
}

/** The errcodes after which a call is worth one retry with a fresh access token. */
export const TOKEN_ERRCODES: ReadonlySet<number> = new Set([40001, 40014, 42001])

/** True when `error` says the access token used for the call is invalid or expired. */
export function isTokenRejected(error: unknown): boolean {
  return error instanceof WechatApiError && TOKEN_ERRCODES.has(error.errcode)
}
