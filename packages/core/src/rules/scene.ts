/**
 * The scene state machine (docs/behaviour.md, B-scene-1…8), as pure functions: they take the
 * loaded scene and `now` and return a decision plus the scene to write, if any. No I/O, no clock.
 */
import type { SceneRecord } from '../store/records'
import type { SceneDraft, UserRef } from '../store/contract'
import { hasPassed } from './time'

/** What a status poll does with the scene it loaded (decision order, steps 2–4). */
export type ScenePollDecision =
  /**
   * Steps 2 and 3: the answer comes from the scene; `expire` is the scene to write when it just
   * expired. `scanned` and `denied` only ever happen with `confirm: 'link'` (B-confirm-9).
   */
  | { kind: 'answer'; status: 'pending' | 'expired' | 'scanned' | 'denied'; expire: SceneDraft | null }
  /** Step 4: authorized; the caller runs the activation step for `userId`. */
  | { kind: 'authorized'; userId: number }

/**
 * What a scan means: `scan` (the default, docs/behaviour.md) or `link` (confirm on the phone,
 * B-confirm-1…12). By default a `scanned` scene is treated like a `pending` one (B-scene-8).
 */
export type ConfirmMode = 'scan' | 'link'

/** Decides a status poll of an existing scene. */
export function decidePoll(scene: SceneRecord, now: number, mode: ConfirmMode = 'scan'): ScenePollDecision {
  switch (scene.status) {
    case 'pending':
    case 'scanned':
      if (hasPassed(scene.expiresAt, now)) return { kind: 'answer', status: 'expired', expire: expireScene(scene) }
      // Only confirm mode tells a device `scanned` (B-confirm-9); by default it is `pending` (B-scene-3).
      return { kind: 'answer', status: mode === 'link' ? scene.status : 'pending', expire: null }
    case 'expired':
      return { kind: 'answer', status: 'expired', expire: null }
    case 'denied':
      // Final either way; without confirm mode (switched off since) the answer stays a final one of the specification.
      return { kind: 'answer', status: mode === 'link' ? 'denied' : 'expired', expire: null }
    case 'authorized':
      // An authorized scene always has a user (set in the same commit that authorized it).
      return { kind: 'authorized', userId: scene.userId as number }
  }
}

/** What a scan does with the scene it loaded (scan steps 1–3). */
export type SceneScanDecision =
  /** Steps 1–3: result `invalid`; `expire` is the scene to write when the scan found it just expired. */
  | { kind: 'invalid'; expire: SceneDraft | null }
  /** Steps 4–10 follow: the scene is open for its first scan. */
  | { kind: 'process'; scene: SceneRecord }

/** Decides whether a scan is the scene's first valid one. */
export function decideScan(scene: SceneRecord | null, now: number, mode: ConfirmMode = 'scan'): SceneScanDecision {
  if (scene === null) return { kind: 'invalid', expire: null }
  if (scene.status === 'authorized' || scene.status === 'expired' || scene.status === 'denied') return { kind: 'invalid', expire: null }
  // With `confirm: 'link'` a scanned scene waits for its decision: a second scan changes nothing (B-confirm-3).
  if (scene.status === 'scanned' && mode === 'link') return { kind: 'invalid', expire: null }
  if (hasPassed(scene.expiresAt, now)) return { kind: 'invalid', expire: expireScene(scene) }
  return { kind: 'process', scene }
}

/** The scene after it expired. */
export function expireScene(scene: SceneRecord): SceneDraft {
  return { ...scene, status: 'expired', version: scene.version + 1 }
}

/** The scene after its first valid scan (step 8): bound to the user, authorized now. */
export function authorizeScene(scene: SceneRecord, userId: UserRef, now: number): SceneDraft {
  return { ...scene, status: 'authorized', userId, authorizedAt: now, version: scene.version + 1 }
}

/** A new pending scene (create_scene, step 3), with its masked address and poll secret digest when there are. */
export function newScene(input: {
  sceneStr: string
  deviceId: string
  now: number
  ttlMs: number
  requestedFrom?: string | null
  pollSecretHash?: string | null
}): Omit<SceneRecord, 'id'> {
  return {
    sceneStr: input.sceneStr,
    deviceId: input.deviceId,
    status: 'pending',
    userId: null,
    createdAt: input.now,
    expiresAt: input.now + input.ttlMs,
    authorizedAt: null,
    requestedFrom: input.requestedFrom ?? null,
    pollSecretHash: input.pollSecretHash ?? null,
    confirmation: null,
    version: 1,
  }
}
