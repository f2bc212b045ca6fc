/**
 * Random identifiers, from the platform CSPRNG.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'

/** The scene_str format (docs/behaviour.md, B-res-1): `pc_` and 32 lowercase hexadecimal characters. */
export const SCENE_STR_PATTERN = /^pc_[0-9a-f]{32}$/

/** A new scene_str: `pc_` followed by 16 random bytes in lowercase hex (35 characters). */
export function newSceneStr(): string {
  return `pc_${randomBytes(16).toString('hex')}`
}

/** A new session token: 32 random bytes, base64url without padding (43 URL-safe characters). */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url')
}

/** The order id format (B-order-2): `SA` and 26 uppercase hexadecimal characters, inside WeChat Pay's 6–32 of `[0-9A-Za-z_\-*]`. */
export const ORDER_ID_PATTERN = /^SA[0-9A-F]{26}$/

/** A new order id (`out_trade_no`): `SA` followed by 13 random bytes in uppercase hex (28 characters). */
export function newOrderId(): string {
  return `SA${randomBytes(13).toString('hex').toUpperCase()}`
}

/** A new secret (confirm ticket, CSRF token, poll secret): 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}
