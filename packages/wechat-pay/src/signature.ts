/**
 * The `WECHATPAY2-SHA256-RSA2048` signatures: the messages both directions sign, RSA-SHA256
 * (PKCS#1 v1.5) over them, and the merchant's `Authorization` header.
 *
 * Messages are built as bytes, never as re-encoded text: a body is signed and checked exactly as it
 * travelled, because a re-serialized JSON body (other key order, spaces, escapes) is a different
 * message and the most common cause of failed verification.
 *
 * @module
 */
import { createSign, createVerify, randomBytes, type KeyObject } from 'node:crypto'
import { isStrictBase64 } from './base64'

/** The signature scheme, as it appears in `Authorization` and `Wechatpay-Signature-Type`. */
export const SIGNATURE_SCHEME = 'WECHATPAY2-SHA256-RSA2048'

const LF = Buffer.from('\n')

/** Bytes of a body or line: strings as UTF-8, bytes untouched. */
function bytesOf(part: Uint8Array | string): Buffer {
  return typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part.buffer, part.byteOffset, part.byteLength)
}

/** Lines each terminated by `\n`, the last one included (WeChat Pay's rule for both directions). */
function joinLines(lines: readonly (Uint8Array | string)[]): Buffer {
  return Buffer.concat(lines.flatMap((line) => [bytesOf(line), LF]))
}

/** What a merchant request signs. */
export interface RequestSignatureInput {
  /** HTTP method; upper-cased here. */
  method: string
  /** Path plus `?` and query exactly as sent, e.g. `/v3/pay/transactions/out-trade-no/SA1?mchid=1230000109`. */
  canonicalUrl: string
  /** Unix seconds, as a string or number. */
  timestamp: string | number
  /** The random `nonce_str`. */
  nonce: string
  /** The exact body bytes sent; empty for GET. */
  body: Uint8Array | string
}

/** `METHOD\nCANONICAL_URL\nTIMESTAMP\nNONCE\nBODY\n`, the message of a merchant request. */
export function requestSignatureMessage(input: RequestSignatureInput): Buffer {
  return joinLines([input.method.toUpperCase(), input.canonicalUrl, String(input.timestamp), input.nonce, input.body])
}

/** `TIMESTAMP\nNONCE\nBODY\n`, the message of an answer or notification (a 204's body line is empty). */
export function responseSignatureMessage(timestamp: string | number, nonce: string, body: Uint8Array | string): Buffer {
  return joinLines([String(timestamp), nonce, body])
}

/** Base64 RSA-SHA256 (PKCS#1 v1.5) signature of `message` with a private key. */
export function signMessage(message: Uint8Array | string, privateKey: KeyObject): string {
  return createSign('RSA-SHA256').update(bytesOf(message)).sign(privateKey, 'base64')
}

/**
 * True when `signature` (base64) is a valid RSA-SHA256 signature of `message`. Anything unreadable
 * (not base64, wrong length, a `WECHATPAY/SIGNTEST/` probe) is simply false, never an exception:
 * a probe is WeChat Pay testing that we refuse it.
 */
export function verifyMessage(message: Uint8Array | string, signature: string, publicKey: KeyObject): boolean {
  if (signature === '' || !isStrictBase64(signature)) return false
  try {
    return createVerify('RSA-SHA256').update(bytesOf(message)).verify(publicKey, Buffer.from(signature, 'base64'))
  } catch {
    // A key of another type (e.g. EC) cannot verify this scheme; that is a failed verification too.
    return false
  }
}

/** A 32-character upper-case hex nonce, as the official SDKs send. */
export function newNonce(): string {
  return randomBytes(16).toString('hex').toUpperCase()
}

/** What the `Authorization` header names. */
export interface AuthorizationInput {
  /** Merchant id. */
  mchid: string
  /** Serial (hex) of the merchant API certificate whose private key signed. */
  serialNo: string
  /** The nonce signed. */
  nonce: string
  /** The timestamp signed, Unix seconds. */
  timestamp: string | number
  /** The base64 signature. */
  signature: string
}

/** `WECHATPAY2-SHA256-RSA2048 mchid="…",nonce_str="…",signature="…",timestamp="…",serial_no="…"`. */
export function authorizationHeader(input: AuthorizationInput): string {
  return `${SIGNATURE_SCHEME} mchid="${input.mchid}",nonce_str="${input.nonce}",signature="${input.signature}",timestamp="${input.timestamp}",serial_no="${input.serialNo}"`
}
