/**
 * Revoking an authorization (docs/behaviour.md, B-revoke-1…4): a `pending` or `active` one becomes
 * `revoked`, and the activation step runs in the same commit so that the next queued one takes
 * the place of a revoked active one. Revoking a revoked one answers it unchanged.
 */
import type { AuthorizationRecord, UserAggregate } from '../store/records'
import { isRevocable, revoke, runActivationStep } from '../rules/authorizations'
import { draftUser, withAuthorizations } from '../rules/user'
import { ScanAuthError } from '../errors'
import { recordView, toAuthorization, type Authorization } from '../service/views'
import { answer, changeSet, userParts, type Plan } from './plan'

export function planRevoke(input: {
  authorizationId: number
  /** The authorization as loaded by id, whatever its status. */
  authorization: AuthorizationRecord | null
  /** Its owner with the whole queue (the authorization is in it when it is pending or active). */
  user: UserAggregate | null
  reason: string | null
  now: number
}): Plan<Authorization> {
  const { authorization, user, now } = input
  if (authorization === null) {
    throw new ScanAuthError('authorization_not_found', `No authorization with id ${input.authorizationId}`)
  }
  if (authorization.status === 'revoked') return answer(recordView(authorization))
  if (!isRevocable(authorization)) {
    throw new ScanAuthError('invalid_request', `Authorization ${authorization.id} is ${authorization.status}; only pending or active ones can be revoked`)
  }
  const draft = user === null ? null : draftUser(user)
  const target = draft?.authorizations.find((a) => a.id === authorization.id)
  // The service reads the owner after the authorization and reads the authorization again when
  // the owner's queue no longer holds it, so a revocable authorization is always found here.
  if (draft === null || target === undefined) throw new Error(`authorization ${authorization.id} is not in its user's queue`)
  const list = runActivationStep(
    draft.authorizations.map((a) => (a === target ? revoke(a, now) : a)),
    now,
  )
  const after = list.find((a) => a.id === authorization.id) ?? target
  const changes = changeSet(userParts(withAuthorizations(draft, list), { now, reason: input.reason }))
  return answer(toAuthorization(after, { id: authorization.id, userId: authorization.userId }), changes)
}
