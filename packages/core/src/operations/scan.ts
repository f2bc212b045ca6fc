/**
 * The inbound scan event (docs/behaviour.md, B-scan-1…10), planned as one change set: the
 * scene, the user with its authorizations, and the new session commit together or not at all.
 */
import type { ScanResult } from '../service/api'
import type { SceneRecord, UserAggregate } from '../store/records'
import { findCurrent, runActivationStep } from '../rules/authorizations'
import { authorizeScene, decideScan } from '../rules/scene'
import { withPhoneTicket } from '../rules/phone'
import { claimFreeTrial, draftUser, newUser, touch, withAuthorizations } from '../rules/user'
import { NEW_USER } from '../store/contract'
import { answer, changeSet, userParts, type Plan } from './plan'
import type { Lifetimes } from './settings'

export function planScan(input: {
  scene: SceneRecord | null
  /** The user loaded by the scan's openid, or null when there is none yet. */
  user: UserAggregate | null
  openid: string
  sessionToken: string
  now: number
  lifetimes: Lifetimes
  /** With `payments.phone`: the digest of the phone ticket a `need_purchase` answer leaves on the scene (B-phone-2). */
  phoneTicketHash?: string
}): Plan<ScanResult> {
  const { now } = input
  // Steps 1–3.
  const decision = decideScan(input.scene, now)
  if (decision.kind === 'invalid') {
    const expire = decision.expire && input.scene
      ? { op: 'update' as const, scene: decision.expire, expectedVersion: input.scene.version }
      : undefined
    return answer({ result: 'invalid' }, changeSet({ scene: expire }))
  }
  return planScanTransaction({ ...input, scene: decision.scene })
}

/**
 * Steps 4–10 for a scene that takes the scan: by a first scan, or, with `confirm: 'link'`, by the
 * scanner's confirmation of a `scanned` scene (B-confirm-7).
 */
export function planScanTransaction(input: {
  scene: SceneRecord
  user: UserAggregate | null
  openid: string
  sessionToken: string
  now: number
  lifetimes: Lifetimes
  /** With `payments.phone`: the digest of the phone ticket a `need_purchase` answer leaves on the scene (B-phone-2). */
  phoneTicketHash?: string
}): Plan<ScanResult & { result: 'authorized' | 'need_purchase' }> {
  const { now, scene } = input
  // Step 4: find or create the user, seen now. Step 5: the free trial, once. Step 6: activation.
  let draft = touch(input.user ? draftUser(input.user) : newUser(input.openid, now), now)
  draft = claimFreeTrial(draft, now, input.lifetimes.freeTrialMs)
  // Step 7: is there a current authorization?
  const { list, current } = findCurrent(runActivationStep(draft.authorizations, now), now)
  draft = withAuthorizations(draft, list)
  const userRef = draft.user.id ?? NEW_USER
  // Steps 8–9: authorize the scene, create the session (also for need_purchase). A scene that needs
  // a purchase keeps the phone ticket of its scanner, when the service sells on the phone (B-phone-2).
  const authorized = authorizeScene(scene, userRef, now)
  const { phoneTicketHash } = input
  const changes = changeSet({
    scene: {
      op: 'update',
      scene: current === null && phoneTicketHash !== undefined ? withPhoneTicket(authorized, { openid: input.openid, ticketHash: phoneTicketHash, now }) : authorized,
      expectedVersion: scene.version,
    },
    ...userParts(draft, { now }),
    session: {
      token: input.sessionToken,
      userId: userRef,
      deviceId: scene.deviceId,
      sceneId: scene.id,
      createdAt: now,
      expiresAt: now + input.lifetimes.sessionMs,
    },
  })
  // Step 10.
  const result: 'authorized' | 'need_purchase' = current === null ? 'need_purchase' : 'authorized'
  return {
    changes,
    finish: (ids) => ({ result, userId: draft.user.id ?? (ids?.userId as number) }),
  }
}
