/**
 * The parameters of WeChat's cashier for a JSAPI order, signed by the merchant:
 * `WeixinJSBridge.invoke('getBrandWCPayRequest', parameters, callback)` in a page opened inside
 * WeChat. `paySign` is RSA-SHA256 (PKCS#1 v1.5) by the merchant API key over
 * `appId\ntimeStamp\nnonceStr\npackage\n` (four lines, the last one ending with `\n` too; `signType`
 * is not signed). The page gets the object as it is and passes it on untouched.
 *
 * Every value is checked before signing: a line feed in a prepay id or nonce would sign a different
 * set of lines than the cashier rebuilds, and a millisecond timestamp (the classic mistake) is
 * refused by WeChat's cashier, so it is refused here first.
 *
 * @module
 */
import { randomInt, type KeyObject } from 'node:crypto'
import type { JsapiPayParameters } from '@scanauth/core'
import { WechatPayError } from './errors'
import { toMerchantPrivateKey } from './keys'
import { signMessage } from './signature'

/** Input of {@link jsapiPayParameters}. */
export interface JsapiPayParametersInput {
  /** The app id the JSAPI order was opened for (the payer's openid is under it). */
  appId: string
  /** The order's `prepay_id`, as `POST /v3/pay/transactions/jsapi` answered it. */
  prepayId: string
  /** The merchant API private key (`apiclient_key.pem`): the key that signs API requests. */
  privateKey: string | Buffer | KeyObject
  /** Unix time in **seconds**, as a decimal string. Default: now. */
  timeStamp?: string
  /** At most 32 visible ASCII characters. Default: 32 random letters and digits. */
  nonceStr?: string
}

/** The four signed fields of the cashier's parameters. */
export interface JsapiSignedFields {
  /** The app id, first line. */
  appId: string
  /** Unix seconds, second line. */
  timeStamp: string
  /** The nonce, third line. */
  nonceStr: string
  /** `prepay_id=…`, fourth line. */
  package: string
}

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The `package` prefix WeChat's cashier expects before the prepay id. */
const PACKAGE_PREFIX = 'prepay_id='

/** A `prepay_id`: WeChat's are `wx` and digits/hex, ≤64; anything printable without spaces passes, up to `package`'s 128 characters. */
const PREPAY_ID = /^[\x21-\x7e]{1,118}$/
/** `nonceStr`: string(32), visible ASCII (a space or line feed would change what is signed). */
const NONCE_STR = /^[\x21-\x7e]{1,32}$/
/** Unix seconds: up to 11 digits (year 5138); 13 digits are milliseconds and are refused. */
const UNIX_SECONDS = /^[1-9]\d{0,10}$/

/** `appId\ntimeStamp\nnonceStr\npackage\n`, the bytes `paySign` signs. */
export function jsapiPaySignMessage(fields: JsapiSignedFields): Buffer {
  return Buffer.from(`${fields.appId}\n${fields.timeStamp}\n${fields.nonceStr}\n${fields.package}\n`, 'utf8')
}

/** 32 random letters and digits, each drawn uniformly (no modulo bias). */
function randomNonceStr(): string {
  let out = ''
  for (let i = 0; i < 32; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]
  return out
}

function invalid(message: string): never {
  throw new WechatPayError('invalid_argument', `jsapiPayParameters: ${message}`)
}

/** Checks one input field against `pattern`, naming it in the error. */
function checked(name: string, value: unknown, pattern: RegExp, rule: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) invalid(`${name} must be ${rule}, got ${JSON.stringify(value) ?? String(value)}`)
  return value
}

/**
 * The signed parameters of `getBrandWCPayRequest` for one JSAPI order. Pure apart from the defaults
 * of `timeStamp` (the clock) and `nonceStr` (random); with both given, the same input always answers
 * the same parameters (PKCS#1 v1.5 signatures are deterministic).
 *
 * Throws `invalid_argument` for a value the cashier would refuse or that would change the signed
 * lines (an empty app id, a line feed, a timestamp in milliseconds, a nonce over 32 characters), and
 * `invalid_options` for a key that is not a private key.
 *
 * @example
 * ```ts
 * import { jsapiPayParameters } from '@scanauth/wechat-pay'
 *
 * declare const merchantKeyPem: string, prepayId: string
 * const parameters = jsapiPayParameters({ appId: 'wxd678efh567hg6787', prepayId, privateKey: merchantKeyPem })
 * // In the page: WeixinJSBridge.invoke('getBrandWCPayRequest', parameters, (res) => res.err_msg)
 * ```
 */
export function jsapiPayParameters(input: JsapiPayParametersInput): JsapiPayParameters {
  if (typeof input !== 'object' || input === null) invalid('an input { appId, prepayId, privateKey } is required')
  const appId = checked('appId', input.appId, /^[\x21-\x7e]{1,32}$/, '1–32 visible ASCII characters')
  const prepayId = checked('prepayId', input.prepayId, PREPAY_ID, 'the prepay_id WeChat Pay answered (visible ASCII, no spaces)')
  const timeStamp =
    input.timeStamp === undefined
      ? String(Math.floor(Date.now() / 1000))
      : checked('timeStamp', input.timeStamp, UNIX_SECONDS, 'Unix time in seconds as a decimal string (not milliseconds)')
  const nonceStr = input.nonceStr === undefined ? randomNonceStr() : checked('nonceStr', input.nonceStr, NONCE_STR, '1–32 visible ASCII characters')
  const privateKey = toMerchantPrivateKey(input.privateKey)
  const pkg = `${PACKAGE_PREFIX}${prepayId}`
  const paySign = signMessage(jsapiPaySignMessage({ appId, timeStamp, nonceStr, package: pkg }), privateKey)
  return { appId, timeStamp, nonceStr, package: pkg, signType: 'RSA', paySign }
}
