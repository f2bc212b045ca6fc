/**
 * Operations a session token authorizes: consuming (docs/behaviour.md, B-consume-1…5: decrement atomically,
 * never below zero) and verifying. Both run the activation step first, as B-consume-2 and B-current-2
 * ask of a consumption and of any read of the active authorization.
 */
import type { ConsumeResult, SessionInfo } from '../api'
import type { SessionRecord, UserAggregate } from '../records'
import { findCurrent, runActivationStep, spend, type AuthorizationDraft } from '../rules/authorizations'
import { hasPassed } from '../rules/time'
import { draftUser, toUserWrite, withAuthorizations, type UserDraft } from '../rules/user'
import { ScanAuthError } from '../errors'
import { iso, toAuthorization } from '../views'
import { answer, changeSet, type Plan } from './plan'

/** Whether a loaded session is live now. */
export function isLiveSession(session: SessionRecord | null, now: number): session is SessionRecord {
  return session !== null && !hasPassed(session.expiresAt, now)
}

/** The user's authorizations after the activation step, and the current one. */
function activated(user: UserAggregate, now: number): { draft: UserDraft; current: AuthorizationDraft | null } {
  const draft = draftUser(user)
  const { list, current } = findCurrent(runActivationStep(draft.authorizations, now), now)
  return { draft: withAuthorizations(draft, list), current }
}

export function planConsume(input: {
  session: SessionRecord | null
  user: UserAggregate | null
  points: number
  now: number
}): Plan<ConsumeResult> {
  const { session, user, now } = input
  if (!isLiveSession(session, now) || user === null) {
    throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  }
  const { draft, current } = activated(user, now)
  const outcome = spend(draft.authorizations, current, input.points, now)
  if (outcome.status !== 'ok') {
    // Nothing is spent; the activation step's own changes are still written.
    return answer({ status: outcome.status }, changeSet({ user: toUserWrite(draft) ?? undefined }))
  }
  const changes = changeSet({ user: toUserWrite(withAuthorizations(draft, outcome.list)) ?? undefined })
  const authorization = toAuthorization(outcome.used, { id: outcome.used.id as number, userId: user.user.id })
  return answer({ status: 'ok', authorization }, changes)
}

export function planVerifySession(input: {
  session: SessionRecord | null
  user: UserAggregate | null
  now: number
}): Plan<SessionInfo | null> {
  const { session, user, now } = input
  if (!isLiveSession(session, now) || user === null) return answer(null)
  const { draft, current } = activated(user, now)
  return answer(
    {
      userId: session.userId,
      deviceId: session.deviceId,
      expiresAt: iso(session.expiresAt),
      authorization: current === null ? null : toAuthorization(current, { id: current.id as number, userId: session.userId }),
    },
    changeSet({ user: toUserWrite(draft) ?? undefined }),
  )
}
