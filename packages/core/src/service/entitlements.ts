/**
 * The entitlement operations of a scanauth instance: granting and consuming (both idempotent with
 * a key), the ledger, revocation of authorizations and sessions, and reading a user. Each is the
 * same thin shell as the rest of the service: validate, load, plan with a pure operation, commit.
 *
 * @module
 */
import type { ConsumeResult, RequestConsumeResult, ScanAuth } from './api'
import type { CommitLoop } from './commit-loop'
import { planGrant, type GrantSpec, type IdempotentCall } from '../operations/grant'
import { answer } from '../operations/plan'
import { planRevoke } from '../operations/revoke'
import { isLiveSession, planConsume } from '../operations/session'
import { describeUser } from '../operations/user-info'
import { isRevocable } from '../rules/authorizations'
import { fingerprintOf, isRepeat } from '../rules/idempotency'
import { userOfSessionFallback } from './session-user'
import type { Store } from '../store/contract'
import { consumeInput, grantInput, ledgerPage, parseInput, requestConsumeInput, revokeInput, userSelector } from './validation'
import { ledgerView, recordView } from './views'

/** What the entitlement operations share with the rest of the service. */
export interface EntitlementContext {
  store: Store
  now: () => number
  commitLoop: CommitLoop
}

type EntitlementMethods = Pick<
  ScanAuth,
  'grant' | 'consume' | 'consumeForRequest' | 'listLedger' | 'revokeAuthorization' | 'revokeSession' | 'revokeSessions' | 'getUser'
>

export function entitlementMethods({ store, now, commitLoop }: EntitlementContext): EntitlementMethods {
  /** The id of the user a selector names, or null when there is none (never creates one). */
  async function userIdOf(selector: unknown): Promise<number | null> {
    const { userId, openid } = parseInput(userSelector, selector)
    if (userId !== undefined) return userId
    const { user } = await store.load({ openid: openid as string })
    return user?.user.id ?? null
  }

  /**
   * One consumption: the session, its user and the key's record in one load (B-load-2); a repeat of
   * a keyed call answers the first call's result and says that it is one (B-idem-3).
   */
  async function consumeOnce(sessionToken: string, points: number, call: IdempotentCall | null): Promise<RequestConsumeResult> {
    return commitLoop<RequestConsumeResult>(async () => {
      const at = now()
      const loaded = await store.load({ sessionToken, userOfSession: true, idempotencyKey: call?.key })
      if (call !== null && isRepeat(loaded.idempotency, call.fingerprint)) {
        const first = JSON.parse(loaded.idempotency.result as string) as ConsumeResult
        return { user: null, plan: answer({ result: first, replayed: true }) }
      }
      const session = isLiveSession(loaded.session, at) ? loaded.session : null
      const user = session === null ? null : (loaded.user ?? (await userOfSessionFallback(store, session.userId)))
      const plan = planConsume({ session, user, points, now: at, idempotency: call })
      return { user, plan: { changes: plan.changes, finish: (ids) => ({ result: plan.finish(ids), replayed: false }) } }
    })
  }

  return {
    async grant(input) {
      const { userId, openid, idempotencyKey, ...what } = parseInput(grantInput, input)
      // Exactly one of the two is set (validated); a key present with `undefined` counts as absent.
      const target = userId !== undefined ? { userId } : { openid: openid as string }
      const spec = { ...target, ...what, source: what.source ?? 'admin' } as GrantSpec
      const amount = spec.type === 'time' ? spec.durationSeconds : spec.points
      const call = keyed(idempotencyKey, () => fingerprintOf('grant', [target, spec.type, amount, spec.source]))
      return commitLoop(async () => {
        const loaded = await store.load({ ...target, idempotencyKey: call?.key })
        if (call !== null && isRepeat(loaded.idempotency, call.fingerprint)) {
          // A repeat: the authorization the first call created, as it is now.
          const { authorization } = await store.load({ authorizationId: loaded.idempotency.authorizationId as number })
          if (authorization === null) throw new Error(`idempotency key ${call.key} names a missing authorization`)
          return { user: null, plan: answer(recordView(authorization)) }
        }
        return { user: loaded.user, plan: planGrant({ spec, user: loaded.user, now: now(), idempotency: call }) }
      })
    },

    async consume(input) {
      const { sessionToken, points, idempotencyKey } = parseInput(consumeInput, input)
      const call = keyed(idempotencyKey, () => fingerprintOf('consume', [sessionToken, points]))
      return (await consumeOnce(sessionToken, points, call)).result
    },

    async consumeForRequest(input) {
      const { sessionToken, points, idempotencyKey, scope } = parseInput(requestConsumeInput, input)
      // The scope is part of the call: the same key on another route (or with other points) is a
      // conflict, never a repeat (B-guard-5).
      const call = { key: idempotencyKey, fingerprint: fingerprintOf('consume', [sessionToken, points, scope]) }
      return consumeOnce(sessionToken, points, call)
    },

    async listLedger(selector, page = {}) {
      const { afterId, limit } = parseInput(ledgerPage, page)
      const userId = await userIdOf(selector)
      if (userId === null) return { entries: [], nextAfterId: null }
      // One more than asked tells whether another page follows.
      const rows = await store.listLedger({ userId, afterId, limit: limit + 1 })
      const entries = rows.slice(0, limit).map(ledgerView)
      return { entries, nextAfterId: rows.length > limit ? (entries[entries.length - 1]?.id ?? null) : null }
    },

    async revokeAuthorization(input) {
      const { authorizationId, reason } = parseInput(revokeInput, input)
      return commitLoop(async () => {
        let { authorization } = await store.load({ authorizationId })
        if (authorization === null || !isRevocable(authorization)) {
          return { user: null, plan: planRevoke({ authorizationId, authorization, user: null, reason: reason ?? null, now: now() }) }
        }
        const { user } = await store.load({ userId: authorization.userId, wholeQueue: true })
        // Retired between the two reads (statuses never go back): read the final status again.
        if (!user?.authorizations.some((a) => a.id === authorizationId)) ({ authorization } = await store.load({ authorizationId }))
        return { user, plan: planRevoke({ authorizationId, authorization, user, reason: reason ?? null, now: now() }) }
      })
    },

    async revokeSession(token) {
      if (typeof token !== 'string' || token === '') return false
      return (await store.endSessions({ token }, now())) > 0
    },

    async revokeSessions(selector) {
      const userId = await userIdOf(selector)
      return userId === null ? 0 : store.endSessions({ userId }, now())
    },

    async getUser(selector) {
      const { userId, openid } = parseInput(userSelector, selector)
      const target = userId !== undefined ? { userId } : { openid: openid as string }
      const { user } = await store.load({ ...target, wholeQueue: true })
      return user === null ? null : describeUser(user, now())
    },
  }
}

/** The key and fingerprint of a call made with an idempotency key, or null without one. */
function keyed(key: string | undefined, fingerprint: () => string): IdempotentCall | null {
  return key === undefined ? null : { key, fingerprint: fingerprint() }
}
