/**
 * WeChat's request signatures: SHA-1 over the lexicographically sorted parts, joined without a
 * separator, as lowercase hex.
 *
 * - `signature` (every push, GET and POST): parts `token`, `timestamp`, `nonce`.
 * - `msg_signature` (safe mode) and the `MsgSignature` of an encrypted reply: parts `token`,
 *   `timestamp`, `nonce` and the base64 `Encrypt` text.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Computes a WeChat signature: `sha1(sort(parts).join(''))` in lowercase hex.
 *
 * The sort is by UTF-16 code units (JavaScript's default), which equals byte order for the ASCII
 * values WeChat uses; the official samples sort the same way.
 *
 * @example
 * ```ts
 * computeSignature('AAAAA', '1714036504', '1514711492') // 'f464b24fc39322e44b38aa78f5edd27bd1441696'
 * ```
 */
export function computeSignature(...parts: string[]): string {
  return createHash('sha1').update([...parts].sort().join(''), 'utf8').digest('hex')
}

/**
 * Compares a received signature with the expected one in constant time, so the comparison leaks
 * nothing about how many leading characters matched. Case-insensitive, like the hex it compares.
 */
export function signaturesMatch(received: string, expected: string): boolean {
  const a = Buffer.from(received.toLowerCase(), 'utf8')
  const b = Buffer.from(expected.toLowerCase(), 'utf8')
  // timingSafeEqual needs equal lengths; a length mismatch reveals only the (public) length of a SHA-1 hex.
  if (a.length !== b.length) return false
  return timingSafeEqual(a, b)
}

/** Checks the plain `signature` of a push (URL verification and every POST). */
export function verifySignature(input: { token: string; timestamp: string; nonce: string; signature: string }): boolean {
  return signaturesMatch(input.signature, computeSignature(input.token, input.timestamp, input.nonce))
}

/** Checks the `msg_signature` of a safe-mode push, which also covers the `Encrypt` text. */
export function verifyMsgSignature(input: { token: string; timestamp: string; nonce: string; encrypt: string; msgSignature: string }): boolean {
  return signaturesMatch(input.msgSignature, computeSignature(input.token, input.timestamp, input.nonce, input.encrypt))
}
