/**
 * Granting a time or points authorization (docs/behaviour.md, B-grant-1…3; creation is
 * our decision D-points): create it `pending`, then run the activation step, so it becomes `active` at once when
 * the user has nothing active, and otherwise waits its FIFO turn. With an
 * idempotency key, the key is recorded in the same commit.
 */
import type { UserAggregate } from '../store/records'
import { newPointsAuthorization, newTimeAuthorization, runActivationStep, type AuthorizationDraft } from '../rules/authorizations'
import { SECOND } from '../rules/time'
import { addAuthorization, draftUser, newUser, withAuthorizations } from '../rules/user'
import { ScanAuthError } from '../errors'
import { toAuthorization, type Authorization } from '../service/views'
import { changeSet, userParts, type Plan } from './plan'

/** A validated grant: what to create and for whom. */
export type GrantSpec = ({ userId: number } | { openid: string }) &
  ({ type: 'time'; durationSeconds: number } | { type: 'points'; points: number }) & { source: string }

/** An idempotency key and the fingerprint of the call that carries it. */
export interface IdempotentCall {
  key: string
  fingerprint: string
}

export function planGrant(input: {
  spec: GrantSpec
  user: UserAggregate | null
  now: number
  idempotency: IdempotentCall | null
}): Plan<Authorization> {
  const { spec, now, idempotency } = input
  if (input.user === null && 'userId' in spec) {
    throw new ScanAuthError('user_not_found', `No user with id ${spec.userId}`)
  }
  const created: AuthorizationDraft =
    spec.type === 'time'
      ? newTimeAuthorization({ now, durationMs: spec.durationSeconds * SECOND, source: spec.source })
      : newPointsAuthorization({ now, points: spec.points, source: spec.source })
  const openid = 'openid' in spec ? spec.openid : ''
  let draft = addAuthorization(input.user ? draftUser(input.user) : newUser(openid, now), created)
  draft = withAuthorizations(draft, runActivationStep(draft.authorizations, now))
  // The new authorization is the last one (every rule keeps the list's order), and the only insert.
  const after = draft.authorizations[draft.authorizations.length - 1] as AuthorizationDraft
  const changes = changeSet({
    ...userParts(draft, { now, idempotencyKey: idempotency?.key }),
    idempotency: idempotency
      ? { key: idempotency.key, fingerprint: idempotency.fingerprint, authorizationId: { inserted: 0 }, result: null, createdAt: now }
      : undefined,
  })
  return {
    changes,
    finish: (ids) =>
      toAuthorization(after, {
        id: ids?.authorizationIds[0] as number,
        userId: draft.user.id ?? (ids?.userId as number),
      }),
  }
}
