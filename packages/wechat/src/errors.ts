/**
 * Errors of the WeChat package: {@link WechatError} is the one class to catch, its `code` says what
 * failed. Every failure of an outbound call is a {@link WechatApiError} or {@link WechatHttpError}, and its
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

/** What went wrong, machine-readable: the `code` of every {@link WechatError}. */
export type WechatErrorCode =
  /** WeChat answered an API call with a non-zero `errcode` ({@link WechatApiError}). */
  | 'api_error'
  /** The HTTP exchange of an API call failed or its answer was unreadable ({@link WechatHttpError}). */
  | 'http_error'
  /** A safe-mode payload could not be decrypted or unpacked (`WechatCryptoError`); the push is answered 400. */
  | 'crypto_error'
  /** A push body is not the narrow XML WeChat sends (`WechatXmlError`); the push is answered 400. */
  | 'xml_error'
  /**
   * The options of `createWechatQrProvider`, `createWechatCallback` or `createWechatWebOAuth` are
   * invalid (a missing appId, a malformed EncodingAESKey); the message names the option. A mistake in
   * the application's set-up.
   */
  | 'invalid_options'
  /**
   * A call's own argument is out of range, e.g. a `sceneStr` longer than WeChat's 64 characters, or
   * an OAuth `state` that is not 0–128 characters of `[A-Za-z0-9]`.
   */
  | 'invalid_argument'

/**
 * Base class of every error this package throws: catch this one and read `code`. The subclasses add
 * what their kind knows (`errcode` and `errmsg`, the HTTP `failure`).
 *
 * @example
 * ```ts
 * import { WechatError, type WechatQrProvider } from '@scanauth/wechat'
 *
 * declare const provider: WechatQrProvider
 * try {
 *   await provider.createQr({ sceneStr: 'pc_1', expiresInSeconds: 300 })
 * } catch (error) {
 *   if (error instanceof WechatError && (error.code === 'api_error' || error.code === 'http_error')) {
 *     console.error(`WeChat ${error.endpoint} failed: ${error.message}`)
 *   } else throw error
 * }
 * ```
 */
export class WechatError extends Error {
  /** Machine-readable code. */
  readonly code: WechatErrorCode
  /**
   * The API path that failed, e.g. `cgi-bin/qrcode/create`: always set for `api_error` and
   * `http_error`, `undefined` for the codes that involve no API call.
   */
  readonly endpoint: string | undefined

  constructor(code: WechatErrorCode, message: string, options?: { cause?: unknown; endpoint?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'WechatError'
    this.code = code
    this.endpoint = options?.endpoint
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
  /** The API path that failed, e.g. `cgi-bin/qrcode/create`. */
  declare readonly endpoint: string
  /** WeChat's global return code (non-zero). */
  readonly errcode: number
  /** WeChat's message, e.g. `invalid credential, access_token is invalid or not latest rid: ...`. */
  readonly errmsg: string

  constructor(endpoint: string, errcode: number, errmsg: string) {
    const hint = HINTS[errcode]
    super('api_error', `WeChat ${endpoint} failed: errcode ${errcode} (${errmsg || 'no errmsg'})${hint ? `; ${hint}` : ''}`, { endpoint })
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
  /** The API path that failed, e.g. `cgi-bin/stable_token`. */
  declare readonly endpoint: string
  /** What went wrong. */
  readonly failure: WechatHttpFailure
  /** The HTTP status, when one was received. */
  readonly httpStatus: number | undefined

  constructor(endpoint: string, failure: WechatHttpFailure, message: string, options?: { cause?: unknown; httpStatus?: number }) {
    super('http_error', message, { cause: options?.cause, endpoint })
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
