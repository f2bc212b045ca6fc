/**
 * `parseWechatPayNotification`: a notification POSTed to `notify_url`, verified over its raw bytes
 * and decrypted. Every header is required (a missing one refuses the notification, it never skips
 * the check), and nothing of the body is read before the signature verifies.
 *
 * @module
 */
import { apiV3KeyBytes, decryptWithKey, RESOURCE_ALGORITHM } from './aes-gcm'
import { WechatPayError } from './errors'
import { toVerificationKeySet, type VerificationKeys, type VerificationKeySet } from './keys'
import type { RawNotificationRequest } from './raw-notification'
import { checkMaxSkew, signedMessageFromHeaders, verifyChecked, type CheckedVerifyOptions } from './verify'

/** Options of {@link parseWechatPayNotification}. */
export interface ParseNotificationOptions {
  /** WeChat Pay's keys by serial (platform certificates and/or `PUB_KEY_ID_…`). */
  verificationKeys: VerificationKeys | VerificationKeySet
  /** The merchant's APIv3 key: 32 ASCII characters. */
  apiV3Key: string
  /** The clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number
  /** Allowed distance of `Wechatpay-Timestamp` from our clock, in seconds. Default 300. */
  maxSkewSeconds?: number
}

/** A verified, decrypted notification. */
export interface WechatPayNotification {
  /** The notification id (the same on every retry of one notification). */
  id: string
  /** `TRANSACTION.SUCCESS`, `REFUND.SUCCESS`, `REFUND.ABNORMAL`, `REFUND.CLOSED`, … */
  eventType: string
  /** When WeChat Pay created it, RFC 3339. */
  createTime: string
  /** `encrypt-resource`. */
  resourceType: string
  /** WeChat Pay's summary, e.g. `支付成功`. */
  summary: string
  /** `resource.original_type`: `transaction`, `refund`, … */
  originalType: string
  /** The decrypted resource (a transaction for `TRANSACTION.*`, a refund for `REFUND.*`). */
  resource: Record<string, unknown>
  /** The key that signed it (`Wechatpay-Serial`). */
  serial: string
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function text(source: Record<string, unknown>, name: string, required: boolean): string {
  const value = source[name]
  if (typeof value === 'string') return value
  if (required || value !== undefined) throw new WechatPayError('malformed_body', `the notification's ${name} is missing or not a string`)
  return ''
}

function parseJsonObject(bytes: Uint8Array | string, what: string): Record<string, unknown> {
  let json: unknown
  try {
    json = JSON.parse(typeof bytes === 'string' ? bytes : UTF8.decode(bytes))
  } catch (error) {
    throw new WechatPayError('malformed_body', `the ${what} is not JSON`, { cause: error })
  }
  if (!isRecord(json)) throw new WechatPayError('malformed_body', `the ${what} is not a JSON object`)
  return json
}

/**
 * Verifies and decrypts a notification. Throws a {@link WechatPayError}: `missing_header`,
 * `timestamp_out_of_range`, `unknown_serial`, `signature_invalid` (also for a
 * `WECHATPAY/SIGNTEST/` probe), `unsupported_algorithm`, `malformed_body`, `decryption_failed`
 * (wrong APIv3 key), or `invalid_options`.
 *
 * @example
 * ```ts
 * import { parseWechatPayNotification, type VerificationKeys } from '@scanauth/wechat-pay'
 *
 * declare const headers: Record<string, string | string[] | undefined>, rawBody: Buffer
 * declare const verificationKeys: VerificationKeys, apiV3Key: string
 * const notification = parseWechatPayNotification({ headers, body: rawBody }, { verificationKeys, apiV3Key })
 * if (notification.eventType === 'TRANSACTION.SUCCESS') console.log(notification.resource.out_trade_no)
 * ```
 */
export function parseWechatPayNotification(request: RawNotificationRequest, options: ParseNotificationOptions): WechatPayNotification {
  return parseChecked(request, checkNotificationOptions(options))
}

/** {@link ParseNotificationOptions} once checked: the keys parsed, the APIv3 key as its bytes. */
export interface CheckedNotificationOptions extends CheckedVerifyOptions {
  apiV3Key: Buffer
}

/**
 * Checks the options of {@link parseWechatPayNotification} (`invalid_options`): the verification
 * keys, then the APIv3 key, then the skew. The notification handler calls it once, when it is created.
 */
export function checkNotificationOptions(options: ParseNotificationOptions): CheckedNotificationOptions {
  const verificationKeys = toVerificationKeySet(options.verificationKeys)
  const apiV3Key = apiV3KeyBytes(options.apiV3Key, 'invalid_options')
  return { verificationKeys, apiV3Key, now: options.now, maxSkewSeconds: checkMaxSkew(options.maxSkewSeconds) }
}

/** {@link parseWechatPayNotification} with options checked beforehand: nothing of them is validated again. */
export function parseChecked(request: RawNotificationRequest, options: CheckedNotificationOptions): WechatPayNotification {
  const signed = signedMessageFromHeaders(request.headers ?? {}, request.body ?? '')
  verifyChecked(signed, options)

  const envelope = parseJsonObject(signed.body, 'notification body')
  const resource = envelope.resource
  if (!isRecord(resource)) throw new WechatPayError('malformed_body', 'the notification has no resource object')
  const algorithm = text(resource, 'algorithm', true)
  if (algorithm !== RESOURCE_ALGORITHM) throw new WechatPayError('unsupported_algorithm', `unsupported resource algorithm ${JSON.stringify(algorithm)}`)
  const plaintext = decryptWithKey(options.apiV3Key, {
    nonce: text(resource, 'nonce', true),
    associatedData: text(resource, 'associated_data', false),
    ciphertext: text(resource, 'ciphertext', true),
  })
  return {
    id: text(envelope, 'id', true),
    eventType: text(envelope, 'event_type', true),
    createTime: text(envelope, 'create_time', false),
    resourceType: text(envelope, 'resource_type', false),
    summary: text(envelope, 'summary', false),
    originalType: text(resource, 'original_type', false),
    resource: parseJsonObject(plaintext, 'decrypted resource'),
    serial: signed.serial,
  }
}
