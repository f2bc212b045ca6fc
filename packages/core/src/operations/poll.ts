/**
 * GET status (docs/behaviour.md, the poll's decision order B-poll-1…5). Steps 2–3 need only the scene; step 4
 * needs the scene's user and the scene's latest session.
 */
import type { StatusResult } from '../api'
import type { SceneRecord, SessionRecord, UserAggregate } from '../records'
import { findCurrent, runActivationStep } from '../rules/authorizations'
import { decidePoll } from '../rules/scene'
import { hasPassed } from '../rules/time'
import { draftUser, withAuthorizations } from '../rules/user'
import { toSummary } from '../views'
import { answer, changeSet, userParts, type Plan } from './plan'

/** Steps 2–3 when they decide; otherwise `{ authorizedFor }` to load the user and session for step 4. */
export function planPoll(scene: SceneRecord, now: number): Plan<StatusResult> | { authorizedFor: number } {
  const decision = decidePoll(scene, now)
  if (decision.kind === 'authorized') return { authorizedFor: decision.userId }
  const expire = decision.expire ? { op: 'update' as const, scene: decision.expire, expectedVersion: scene.version } : undefined
  return answer({ status: decision.status }, changeSet({ scene: expire }))
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
