/**
 * The encryption of notification resources: AES-256-GCM under the merchant's APIv3 key, the way
 * WeChat Pay seals `resource.ciphertext` (key = the key's 32 ASCII bytes, IV = a 12-character nonce
 * as bytes, base64 of ciphertext followed by the 16-byte tag).
 *
 * @module
 */
import { createCipheriv, randomInt } from 'node:crypto'

const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A random string of `length` letters and digits (GCM nonces, generated APIv3 keys). */
export function randomAlphanumeric(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += NONCE_ALPHABET[randomInt(0, NONCE_ALPHABET.length)]
  return out
}

/** Whether `key` can be an APIv3 key: exactly 32 printable ASCII characters (so 32 bytes). */
export function isApiV3Key(key: unknown): key is string {
  return typeof key === 'string' && /^[\x21-\x7e]{32}$/.test(key)
}

/** `plaintext` sealed for a notification's `resource`: base64 ciphertext‖tag, and the fresh nonce used. */
export function sealResource(apiV3Key: string, plaintext: string, associatedData: string): { ciphertext: string; nonce: string } {
  // A new 12-character nonce per encryption: GCM must never reuse one under the same key.
  const nonce = randomAlphanumeric(12)
  return { ciphertext: sealWithNonce(apiV3Key, nonce, plaintext, associatedData), nonce }
}

/** The base64 ciphertext‖tag of `plaintext` under `apiV3Key` with a given `nonce` (for known-answer tests; use {@link sealResource}). */
export function sealWithNonce(apiV3Key: string, nonce: string, plaintext: string, associatedData: string): string {
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'ascii'), Buffer.from(nonce, 'utf8'))
  cipher.setAAD(Buffer.from(associatedData, 'utf8'))
  return Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64')
}
