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
