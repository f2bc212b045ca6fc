/**
 * Strict base64 recognition. Node's decoder silently skips characters outside the alphabet, so a
 * lenient decode would check a different string than was sent; both signatures and ciphertexts are
 * tested with this first.
 *
 * @module
 */

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** True when `text` is canonical padded base64 (the standard alphabet, no whitespace). */
export function isStrictBase64(text: unknown): text is string {
  return typeof text === 'string' && STRICT_BASE64.test(text)
}
