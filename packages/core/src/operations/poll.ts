/**
 * GET status (docs/behaviour.md, the poll's decision order B-poll-1…5). Steps 2–3 need only the scene; step 4
 * needs the scene's user and the scene's latest session.
 */
import type { StatusResult } from '../service/api'
import type { SceneRecord, SessionRecord, UserAggregate } from '../store/records'
import { findCurrent, runActivationStep } from '../rules/authorizations'
import { decidePoll, type ConfirmMode } from '../rules/scene'
import { hasPassed } from '../rules/time'
import { draftUser, withAuthorizations } from '../rules/user'
import { toSummary } from '../service/views'
import { answer, changeSet, userParts, type Plan } from './plan'

/** What a poll does with the scene it read: answer from the scene (steps 2–3), or go on to step 4. */
export type PollStep =
  /** Steps 2–3 decided: the plan answers `pending` or `expired` (writing the expiry when it just happened). */
  | { kind: 'answer'; plan: Plan<StatusResult> }
  /** Step 4: load this user and the scene's latest session, then {@link planAuthorizedPoll}. */
  | { kind: 'authorized'; userId: number }

/** Steps 2–3 when they decide; otherwise the user to load for step 4. */
export function planPoll(scene: SceneRecord, now: number, mode: ConfirmMode = 'scan'): PollStep {
  const decision = decidePoll(scene, now, mode)
  if (decision.kind === 'authorized') return { kind: 'authorized', userId: decision.userId }
  const expire = decision.expire ? { op: 'update' as const, scene: decision.expire, expectedVersion: scene.version } : undefined
  return { kind: 'answer', plan: answer({ status: decision.status }, changeSet({ scene: expire })) }
}

/**
 * Step 4: run the activation step for the scene's user, look up the current authorization, then the
 * scene's latest session.
 */
export function planAuthorizedPoll(input: {
  user: UserAggregate | null
  latestSession: SessionRecord | null
  now: number
}): Plan<StatusResult> {
  if (input.user === null) return answer({ status: 'need_purchase' })
  const draft = draftUser(input.user)
  const { list, current } = findCurrent(runActivationStep(draft.authorizations, input.now), input.now)
  const changes = changeSet(userParts(withAuthorizations(draft, list), { now: input.now }))
  if (current === null) return answer({ status: 'need_purchase' }, changes)
  const session = input.latestSession
  if (session === null || hasPassed(session.expiresAt, input.now)) return answer({ status: 'expired' }, changes)
  return answer({ status: 'authorized', sessionToken: session.token, authorization: toSummary(current) }, changes)
}
