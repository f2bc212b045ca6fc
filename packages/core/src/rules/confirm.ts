/**
 * Confirm on the phone (docs/behaviour.md, B-confirm-1…12) and the poll secret (B-secret-1…4), as
 * pure functions: the scene moves `pending → scanned → authorized | denied`, secrets are compared by
 * their digests, and what the phone is shown is made harmless. No I/O, no clock.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { SceneRecord } from '../store/records'
import type { SceneDraft } from '../store/contract'
import { expireScene } from './scene'
import { hasPassed } from './time'

/** The default life of a confirm ticket: 2 minutes (B-confirm-2). */
export const DEFAULT_CONFIRM_TICKET_TTL_SECONDS = 120

/** The digest under which a secret (ticket, CSRF token, poll secret) is stored: SHA-256, base64url. */
export function digestSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url')
}

/** Whether `secret` is the one whose digest is `digest`, compared in constant time. */
export function matchesDigest(secret: string | undefined, digest: string | null): boolean {
  if (secret === undefined || secret === '' || digest === null) return false
  const a = Buffer.from(digestSecret(secret))
  const b = Buffer.from(digest)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The OAuth `state` of a ticket: 32 hex characters derived from it (WeChat allows `[a-zA-Z0-9]`, at
 * most 128 bytes). It ties the answer of WeChat to the link that was opened without storing anything,
 * and says nothing of the ticket (B-confirm-6).
 */
export function oauthStateOf(ticket: string): string {
  return createHash('sha256').update(`scanauth-oauth-state:${ticket}`, 'utf8').digest('hex').slice(0, 32)
}

/** The shape of every secret we mint (32 random bytes, base64url): anything else names nothing. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/

/**
 * A client address masked for the confirm page (B-confirm-5): an IPv4 address keeps its /24
 * (`203.0.113.*`), an IPv6 address its /48 (`2001:db8:1:*`); anything else is unknown (null). Enough
 * for the person to see "not from my network" without the page revealing a whole address.
 */
export function maskAddress(address: string | undefined): string | null {
  if (address === undefined) return null
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  const v4 = mapped?.[1] ?? address
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(v4)) {
    const parts = v4.split('.').map(Number)
    if (parts.some((p) => p > 255)) return null
    return `${parts.slice(0, 3).join('.')}.*`
  }
  if (!/^[0-9a-f:]+$/i.test(address) || !address.includes(':')) return null
  const groups = expandIpv6(address)
  if (groups === null) return null
  return `${groups.slice(0, 3).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}:*`.toLowerCase()
}

/** The eight groups of an IPv6 address, or null when it is not one. */
function expandIpv6(address: string): string[] | null {
  const halves = address.split('::')
  if (halves.length > 2) return null
  const head = halves[0] === '' ? [] : (halves[0] as string).split(':')
  const tail = halves.length === 2 && halves[1] !== '' ? (halves[1] as string).split(':') : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]
  return groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g)) ? groups : null
}

/**
 * Characters that change how text around them is shown without showing themselves: bidirectional
 * controls (U+202E turns `evil\u202Etxt.exe` around), zero-width characters, and every other format
 * character (general category Cf), the line and paragraph separators (U+2028, U+2029: a new line in
 * the chat, where a label could fake a line of its own), plus the C0/C1 controls.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\p{Cf}\p{Zl}\p{Zp}\u0000-\u001f\u007f-\u009f\u115f\u1160\u3164\uffa0]/gu

/**
 * The device label as the confirm page and the reply show it (B-confirm-5): every hidden character
 * replaced by U+FFFD, so that what is shown is what was sent, in the order it was sent. Not HTML-
 * or XML-escaped: escape it where it is written.
 */
export function displayLabel(deviceId: string): string {
  return deviceId.replace(HIDDEN, '\uFFFD')
}

/**
 * A first scan in `confirm: 'link'` mode (B-confirm-1): the scene becomes `scanned`, remembers the
 * scanner and the ticket's digest, and its life is cut to the ticket's (B-confirm-2), so that a
 * decision not made in time ends the scene like any expiry.
 */
export function scanForConfirmation(scene: SceneRecord, input: { openid: string; ticketHash: string; now: number; ttlMs: number }): SceneDraft {
  return {
    ...scene,
    status: 'scanned',
    expiresAt: Math.min(scene.expiresAt, input.now + input.ttlMs),
    confirmation: { scannedBy: input.openid, scannedAt: input.now, ticketHash: input.ticketHash, csrfHash: null },
    version: scene.version + 1,
  }
}

/** Whether `scene` waits for the decision of `openid`: scanned by them, not yet expired. */
export function isWaitingFor(scene: SceneRecord, openid: string, now: number): boolean {
  return scene.status === 'scanned' && scene.confirmation?.scannedBy === openid && !hasPassed(scene.expiresAt, now)
}

/**
 * The scanner scanned again while the decision waits (B-confirm-3): a new ticket replaces the old one
 * (whose link and page stop working), the scanner and the deadline stay.
 */
export function reissueTicket(scene: SceneRecord, ticketHash: string): SceneDraft {
  const confirmation = scene.confirmation as NonNullable<SceneRecord['confirmation']>
  return { ...scene, confirmation: { ...confirmation, ticketHash, csrfHash: null }, version: scene.version + 1 }
}

/** Why a ticket cannot be acted on, when it cannot (B-confirm-4). */
export type TicketState =
  /** The scene waits for the decision: the ticket may be used. */
  | { kind: 'open'; scene: SceneRecord }
  /** No scene carries the ticket. */
  | { kind: 'unknown' }
  /** The decision was made (authorized or denied): the ticket was used. */
  | { kind: 'used' }
  /** The ticket's time ran out; `expire` is the scene to write when that just happened. */
  | { kind: 'expired'; expire: SceneDraft | null }

/** Where a scene found by its ticket stands. */
export function ticketState(scene: SceneRecord | null, now: number): TicketState {
  if (scene === null || scene.confirmation === null) return { kind: 'unknown' }
  if (scene.status === 'authorized' || scene.status === 'denied') return { kind: 'used' }
  if (scene.status === 'expired') return { kind: 'expired', expire: null }
  if (hasPassed(scene.expiresAt, now)) return { kind: 'expired', expire: expireScene(scene) }
  return { kind: 'open', scene }
}

/** The scene with a fresh CSRF digest: the page just shown is the only one whose forms count (B-confirm-7). */
export function withCsrf(scene: SceneRecord, csrfHash: string): SceneDraft {
  const confirmation = scene.confirmation as NonNullable<SceneRecord['confirmation']>
  return { ...scene, confirmation: { ...confirmation, csrfHash }, version: scene.version + 1 }
}

/** The scene after the scanner denied (B-confirm-8): `denied`, final. */
export function denyScene(scene: SceneRecord): SceneDraft {
  return { ...scene, status: 'denied', version: scene.version + 1 }
}
