/**
 * Operations a session token authorizes: consuming (docs/behaviour.md, B-consume-1…5: decrement atomically,
 * never below zero) and verifying. Both run the activation step first, as B-consume-2 and B-current-2
 * ask of a consumption and of any read of the active authorization.
 */
import type { ConsumeResult, SessionInfo } from '../service/api'
import type { SessionRecord, UserAggregate } from '../store/records'
import { findCurrent, runActivationStep, spend, type AuthorizationDraft } from '../rules/authorizations'
import { hasPassed } from '../rules/time'
import { draftUser, withAuthorizations, type UserDraft } from '../rules/user'
import { ScanAuthError } from '../errors'
import { iso, toAuthorization } from '../service/views'
import type { IdempotentCall } from './grant'
import { answer, changeSet, userParts, type Plan } from './plan'

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
  idempotency: IdempotentCall | null
}): Plan<ConsumeResult> {
  const { session, user, now, idempotency } = input
  if (!isLiveSession(session, now) || user === null) {
    throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  }
  const { draft, current } = activated(user, now)
  const outcome = spend(draft.authorizations, current, input.points, now)
  // Nothing is spent unless the outcome is ok; the activation step's own changes are written anyway.
  const after = outcome.status === 'ok' ? withAuthorizations(draft, outcome.list) : draft
  const result: ConsumeResult =
    outcome.status === 'ok'
      ? { status: 'ok', authorization: toAuthorization(outcome.used, { id: outcome.used.id as number, userId: user.user.id }) }
      : { status: outcome.status }
  const changes = changeSet({
    ...userParts(after, { now, idempotencyKey: idempotency?.key }),
    // The whole answer is known now, so a repeat of the call can be answered from the record alone.
    idempotency: idempotency
      ? { key: idempotency.key, fingerprint: idempotency.fingerprint, authorizationId: null, result: JSON.stringify(result), createdAt: now }
      : undefined,
  })
  return answer(result, changes)
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
    changeSet(userParts(draft, { now })),
  )
}
