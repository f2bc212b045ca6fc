/**
 * Paying on the phone that scanned (docs/behaviour.md, B-phone-1…10), as pure functions: which
 * browser may use the phone pages, the one-time ticket a `need_purchase` scan leaves on its scene,
 * and what a ticket found in the store still allows. No I/O, no clock.
 *
 * @module
 */
import type { SceneDraft } from '../store/contract'
import type { SceneRecord } from '../store/records'
import { hasPassed, SECOND } from './time'

/** The default life of a phone ticket: 30 minutes from the scan (B-phone-2). */
export const DEFAULT_PHONE_TICKET_TTL_MINUTES = 30

/**
 * How long a page shown by `{base}/m/pay` can still buy: 30 minutes. Its CSRF token names the page;
 * a later page of the same person replaces it (B-phone-5).
 */
export const PHONE_PAGE_TTL_MS = 30 * 60 * SECOND

/**
 * Whether a `User-Agent` is WeChat's in-app browser, the only place WeChat's cashier exists
 * (`MicroMessenger/<version>`, also on WeChat for Windows and Mac). Anything else is told to open
 * the link in WeChat (B-phone-3).
 */
export function isWeChatBrowser(userAgent: string | undefined): boolean {
  return userAgent !== undefined && /micromessenger/i.test(userAgent)
}

/**
 * The scene of a `need_purchase` scan with the phone ticket on it (B-phone-2): the scene's
 * confirmation slot, which confirm on the phone already uses for its ticket, names the scanner and
 * the ticket's digest. Stores find a scene by that digest (`LoadQuery.confirmTicketHash`), so the
 * ticket needs nothing a store does not have already. In `confirm: 'link'` mode the slot holds the
 * confirm ticket, which then serves as the phone ticket: this leaves such a scene as it is.
 */
export function withPhoneTicket(scene: SceneDraft, input: { openid: string; ticketHash: string; now: number }): SceneDraft {
  if (scene.confirmation !== null) return scene
  return { ...scene, confirmation: { scannedBy: input.openid, scannedAt: input.now, ticketHash: input.ticketHash, csrfHash: null } }
}

/** What a phone ticket found in the store allows (B-phone-2, B-phone-4). */
export type PhoneTicketState =
  | {
      /** The ticket names this scene, which a scan bound to `scannedBy`; it may open the page. */
      kind: 'open'
      /** The scene. */
      scene: SceneRecord & { userId: number }
      /** The scanner's openid: the only person the ticket serves. */
      scannedBy: string
      /** When the ticket expires (epoch ms): its one-time use is remembered until then. */
      expiresAt: number
    }
  | {
      /** No scene carries it, or its scene still waits for a confirmation (that link is the confirm page's). */
      kind: 'unknown'
    }
  | {
      /** Past its time. */
      kind: 'expired'
    }

/** The state of the ticket whose digest is `ticketHash`, given the scene a load found by it. */
export function phoneTicketState(scene: SceneRecord | null, ticketHash: string, ttlMs: number, now: number): PhoneTicketState {
  const confirmation = scene?.confirmation ?? null
  // Only an authorized scene's ticket is a phone ticket: a `scanned` one still waits on the confirm page.
  if (scene === null || confirmation === null || confirmation.ticketHash !== ticketHash) return { kind: 'unknown' }
  if (scene.status !== 'authorized' || scene.userId === null) return { kind: 'unknown' }
  const expiresAt = confirmation.scannedAt + ttlMs
  if (hasPassed(expiresAt, now)) return { kind: 'expired' }
  return { kind: 'open', scene: scene as SceneRecord & { userId: number }, scannedBy: confirmation.scannedBy, expiresAt }
}
