/**
 * Who buys (docs/behaviour.md, B-order-2, B-order-12, B-order-13): the user of a live session, or
 * the user a scan bound a scene to — for the device that scene serves only, so while it answers
 * `need_purchase` or within minutes of its scan, and with its poll secret when it has one.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import { isLiveSession } from '../operations/session'
import { SCENE_STR_PATTERN } from '../service/random'
import { matchesDigest } from '../rules/confirm'
import { isWithinScenePurchaseWindow, needsPurchase } from '../rules/orders'
import type { Store } from '../store/contract'

/** The buyer of a purchase, and the scene it goes through (null: a purchase with a session). */
export interface Buyer {
  /** The user who buys. */
  userId: number
  /** The scene whose device waits for the payment, or null. */
  sceneStr: string | null
  /** Whether the scene carries the phone ticket of its scan (B-phone-2): its scanner got a link to buy on the phone. */
  phoneTicket?: boolean
}

/** How a purchase names its buyer, as validated. */
export interface BuyerInput {
  /** The scene a purchase by scene names. */
  sceneStr?: string
  /** The poll secret it presented, if any. */
  pollSecret?: string
  /** The session a purchase by session presents. */
  sessionToken?: string
}

/**
 * The buyer of a purchase, or the refusal: `scene_not_found` (404), `scene_not_scanned` (409),
 * `poll_secret_required` (403), `scene_not_purchasable` (409), `unauthorized` (401). Reads only;
 * nothing reaches the payment service before it answers.
 */
export async function findBuyer(store: Store, input: BuyerInput, now: number): Promise<Buyer> {
  if (input.sceneStr !== undefined) return sceneBuyer(store, input.sceneStr, input.pollSecret, now)
  const { session } = await store.load({ sessionToken: input.sessionToken })
  if (!isLiveSession(session, now)) throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  return { userId: session.userId, sceneStr: null }
}

async function sceneBuyer(store: Store, sceneStr: string, pollSecret: string | undefined, now: number): Promise<Buyer> {
  if (!SCENE_STR_PATTERN.test(sceneStr)) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
  const { scene } = await store.load({ sceneStr })
  if (scene === null) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
  if (scene.status !== 'authorized' || scene.userId === null) {
    throw new ScanAuthError('scene_not_scanned', 'No scan has bound this scene to a user yet; scan the code first')
  }
  // The secret first: without it nobody learns more of the scene than a poll tells anyone (B-order-13).
  if (scene.pollSecretHash !== null && !matchesDigest(pollSecret, scene.pollSecretHash)) {
    throw new ScanAuthError('poll_secret_required', 'This scene was created with a poll secret: present it as X-Scanauth-Poll-Secret to buy through it')
  }
  // Within the window no user is read; after it, only a scene that would answer need_purchase buys (B-order-12).
  if (!isWithinScenePurchaseWindow(scene, now)) {
    const { user } = await store.load({ userId: scene.userId })
    if (!needsPurchase(user, now)) {
      throw new ScanAuthError(
        'scene_not_purchasable',
        'This scene no longer serves a purchase: its user has access and its scan was more than 10 minutes ago; buy with the session instead',
      )
    }
  }
  // An authorized scene's confirmation slot holds the phone ticket of its scan (rules/phone.ts).
  return { userId: scene.userId, sceneStr: scene.sceneStr, phoneTicket: scene.confirmation !== null }
}
