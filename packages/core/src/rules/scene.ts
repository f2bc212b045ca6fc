/**
 * The scene state machine (docs/behaviour.md, B-scene-1…8), as pure functions: they take the
 * loaded scene and `now` and return a decision plus the scene to write, if any. No I/O, no clock.
 */
import type { SceneRecord } from '../records'
import type { SceneDraft, UserRef } from '../store'
import { hasPassed } from './time'

/** What a status poll does with the scene it loaded (decision order, steps 2–4). */
export type ScenePollDecision =
  /** Steps 2 and 3: the answer is final; `expire` is the scene to write when it just expired. */
  | { kind: 'answer'; status: 'pending' | 'expired'; expire: SceneDraft | null }
  /** Step 4: authorized; the caller runs the activation step for `userId`. */
  | { kind: 'authorized'; userId: number }

/** Decides a status poll of an existing scene. */
export function decidePoll(scene: SceneRecord, now: number): ScenePollDecision {
  switch (scene.status) {
    case 'pending':
    case 'scanned':
      return hasPassed(scene.expiresAt, now)
        ? { kind: 'answer', status: 'expired', expire: expireScene(scene) }
        : { kind: 'answer', status: 'pending', expire: null }
    case 'expired':
      return { kind: 'answer', status: 'expired', expire: null }
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
export function decideScan(scene: SceneRecord | null, now: number): SceneScanDecision {
  if (scene === null) return { kind: 'invalid', expire: null }
  if (scene.status === 'authorized' || scene.status === 'expired') return { kind: 'invalid', expire: null }
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

/** A new pending scene (create_scene, step 3). */
export function newScene(input: { sceneStr: string; deviceId: string; now: number; ttlMs: number }): Omit<SceneRecord, 'id'> {
  return {
    sceneStr: input.sceneStr,
    deviceId: input.deviceId,
    status: 'pending',
    userId: null,
    createdAt: input.now,
    expiresAt: input.now + input.ttlMs,
    authorizedAt: null,
    version: 1,
  }
}
