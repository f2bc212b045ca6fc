/**
 * Verification of what WeChat Pay signs (API answers and notifications): the `Wechatpay-*` headers
 * present and single, the signature type ours, the timestamp within the skew, the serial one of our
 * keys, the signature valid over the raw body. Each failure is its own {@link WechatPayError} code;
 * none of them is ever treated as success.
 *
 * @module
 */
import { WechatPayError } from './errors'
import { toVerificationKeySet, type VerificationKeys, type VerificationKeySet } from './keys'
import { responseSignatureMessage, SIGNATURE_SCHEME, verifyMessage } from './signature'

/** The default and usual allowed distance between `Wechatpay-Timestamp` and our clock, in seconds. */
export const DEFAULT_MAX_SKEW_SECONDS = 300

/** Headers as Node or a framework gives them: any case, repeated headers as arrays. */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>

/** The signed parts of an answer or notification. */
export interface SignedMessage {
  /** `Wechatpay-Timestamp`, Unix seconds. */
  timestamp: string
  /** `Wechatpay-Nonce`. */
  nonce: string
  /** `Wechatpay-Signature`, base64. */
  signature: string
  /** `Wechatpay-Serial`: the key WeChat Pay signed with. */
  serial: string
  /** `Wechatpay-Signature-Type`, when sent. */
  signatureType?: string
  /** The raw body, exactly as received. */
  body: Uint8Array | string
}

/** Options of {@link verifyWechatPaySignature}. */
export interface VerifySignatureOptions {
  /** WeChat Pay's keys by serial. */
  verificationKeys: VerificationKeys | VerificationKeySet
  /** The clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number
  /** Largest allowed |now − timestamp|, in seconds. Default 300. */
  maxSkewSeconds?: number
}

/** One header by name, case-insensitively; a header sent twice is refused rather than guessed at. */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  const wanted = name.toLowerCase()
  let found: string | undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue
    const values = typeof value === 'string' ? [value] : [...value]
    if (found !== undefined || values.length > 1) {
      throw new WechatPayError('missing_header', `the ${name} header is repeated`)
    }
    found = values[0]
  }
  return found
}

/** A required header: a missing or empty one refuses the message (never skips verification). */
function requiredHeader(headers: HeaderBag, name: string): string {
  const value = headerValue(headers, name)?.trim()
  if (value === undefined || value === '') throw new WechatPayError('missing_header', `the ${name} header is missing`)
  return value
}

/** The signed parts of a message from its headers and raw body; throws `missing_header`. */
export function signedMessageFromHeaders(headers: HeaderBag, body: Uint8Array | string): SignedMessage {
  const signatureType = headerValue(headers, 'Wechatpay-Signature-Type')?.trim()
  return {
    timestamp: requiredHeader(headers, 'Wechatpay-Timestamp'),
    nonce: requiredHeader(headers, 'Wechatpay-Nonce'),
    signature: requiredHeader(headers, 'Wechatpay-Signature'),
    serial: requiredHeader(headers, 'Wechatpay-Serial'),
    ...(signatureType === undefined || signatureType === '' ? {} : { signatureType }),
    body,
  }
}

/** Validates `maxSkewSeconds` once, where an option is read. */
export function checkMaxSkew(maxSkewSeconds: number | undefined): number {
  const value = maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new WechatPayError('invalid_options', 'maxSkewSeconds must be a non-negative integer number of seconds')
  }
  return value
}

/**
 * Verifies a message WeChat Pay signed. Returns nothing; throws a {@link WechatPayError} with code
 * `unsupported_algorithm`, `timestamp_out_of_range`, `unknown_serial` or `signature_invalid`.
 *
 * The order is deliberate: cheap checks that need no key first, then the key by serial, then RSA.
 */
export function verifyWechatPaySignature(message: SignedMessage, options: VerifySignatureOptions): void {
  verifyChecked(message, checkVerifyOptions(options))
}

/** {@link VerifySignatureOptions} once checked: the keys parsed, the skew a whole number of seconds. */
export interface CheckedVerifyOptions {
  verificationKeys: VerificationKeySet
  now?: (() => number) | undefined
  maxSkewSeconds: number
}

/** Checks the options of a verification once, where they are read; throws `invalid_options`. */
export function checkVerifyOptions(options: VerifySignatureOptions): CheckedVerifyOptions {
  return { verificationKeys: toVerificationKeySet(options.verificationKeys), now: options.now, maxSkewSeconds: checkMaxSkew(options.maxSkewSeconds) }
}

/**
 * {@link verifyWechatPaySignature} with options checked beforehand (by {@link checkVerifyOptions}, or
 * by a client or handler at creation): nothing of them is validated again per message.
 */
export function verifyChecked(message: SignedMessage, options: CheckedVerifyOptions): void {
  const keys = options.verificationKeys
  const maxSkew = options.maxSkewSeconds
  if (message.signatureType !== undefined && message.signatureType !== SIGNATURE_SCHEME) {
    throw new WechatPayError('unsupported_algorithm', `unsupported Wechatpay-Signature-Type ${JSON.stringify(message.signatureType)}`)
  }
  if (!/^\d{1,12}$/.test(message.timestamp)) {
    throw new WechatPayError('timestamp_out_of_range', 'Wechatpay-Timestamp is not a Unix time in seconds')
  }
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000)
  const skew = Math.abs(nowSeconds - Number(message.timestamp))
  // Outside the window a captured notification could be replayed at will.
  if (skew > maxSkew) {
    throw new WechatPayError('timestamp_out_of_range', `Wechatpay-Timestamp is ${skew} s from our clock (at most ${maxSkew} s allowed)`)
  }
  const key = keys.get(message.serial)
  if (key === undefined) {
    throw new WechatPayError('unknown_serial', `Wechatpay-Serial ${message.serial} names none of the configured keys (${keys.serials.join(', ')})`)
  }
  const signed = responseSignatureMessage(message.timestamp, message.nonce, message.body)
  if (!verifyMessage(signed, message.signature, key)) {
    throw new WechatPayError('signature_invalid', `the Wechatpay-Signature does not verify with key ${message.serial}`)
  }
}
