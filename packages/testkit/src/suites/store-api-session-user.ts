/**
 * `LoadQuery.userOfSession`: a session and its user in one load (docs/behaviour.md, B-load-2), as
 * `verifySession` and `consume` read them.
 */
import { describe, expect, it } from 'vitest'
import { NEW_USER, type ChangeSet, type NewAuthorization } from '@scanauth/core/store'
import type { ContractContext } from '../context'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

const user = (openid: string) => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })

const points = (n: number, status: NewAuthorization['status'], createdAt = T0): NewAuthorization => ({
  type: 'points',
  status,
  startAt: createdAt,
  endAt: null,
  remainingPoints: n,
  totalPoints: n,
  source: 'purchase',
  createdAt,
  updatedAt: createdAt,
})

async function commitOk(ctx: ContractContext, changes: ChangeSet) {
  const result = await ctx.store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

/** A user with one active and two pending authorizations, and a session of theirs, expired or not. */
async function userWithSession(ctx: ContractContext, openid: string, token: string, expiresAt = T0 + 3_600_000) {
  const ids = await commitOk(ctx, {
    user: { op: 'insert', user: user(openid), insertAuthorizations: [points(5, 'active'), points(3, 'pending', T0 + 1), points(2, 'pending', T0 + 2)] },
    session: { token, userId: NEW_USER, deviceId: 'tv', sceneId: 1, createdAt: T0, expiresAt },
  })
  return { userId: ids.userId as number, authorizationIds: ids.authorizationIds }
}

export function storeSessionUserApiSuite(get: () => ContractContext): void {
  describe('Store API: a session and its user in one load (userOfSession)', () => {
    it("answers the session and its user, with the active authorizations and the head of the queue", async () => {
      const ctx = get()
      await userWithSession(ctx, 'other', 'tok-other')
      const { userId, authorizationIds } = await userWithSession(ctx, 'alice', 'tok-alice')
      const loaded = await ctx.store.load({ sessionToken: 'tok-alice', userOfSession: true })
      expect(loaded.session).toMatchObject({ token: 'tok-alice', userId })
      expect(loaded.user?.user).toMatchObject({ id: userId, openid: 'alice' })
      expect(loaded.user?.authorizations.map((a) => a.id)).toEqual(authorizationIds.slice(0, 2))
      expect(loaded).toMatchObject({ scene: null, latestSession: null, idempotency: null, authorization: null })
      // Exactly what the two loads it replaces answer.
      expect(loaded.user).toEqual((await ctx.store.load({ userId })).user)
      expect(loaded.session).toEqual((await ctx.store.load({ sessionToken: 'tok-alice' })).session)
    })

    it('reads the whole queue with wholeQueue, and the idempotency record alongside', async () => {
      const ctx = get()
      const { authorizationIds } = await userWithSession(ctx, 'alice', 'tok-alice')
      await commitOk(ctx, { idempotency: { key: 'k-1', fingerprint: 'f', authorizationId: null, result: '{"status":"ok"}', createdAt: T0 } })
      const loaded = await ctx.store.load({ sessionToken: 'tok-alice', userOfSession: true, wholeQueue: true, idempotencyKey: 'k-1' })
      expect(loaded.user?.authorizations.map((a) => a.id)).toEqual(authorizationIds)
      expect(loaded.idempotency).toMatchObject({ key: 'k-1', fingerprint: 'f' })
    })

    it('answers the user of an expired session too (the store knows no clock), and no user without a session', async () => {
      const ctx = get()
      const { userId } = await userWithSession(ctx, 'alice', 'tok-old', T0 + 1)
      await ctx.store.endSessions({ token: 'tok-old' }, T0 + 1)
      expect((await ctx.store.load({ sessionToken: 'tok-old', userOfSession: true })).user?.user.id).toBe(userId)
      expect(await ctx.store.load({ sessionToken: 'tok-none', userOfSession: true })).toEqual({
        scene: null,
        user: null,
        session: null,
        latestSession: null,
        idempotency: null,
        authorization: null,
      })
      // Without the flag, a session load reads no user; without a token, the flag reads nothing.
      expect((await ctx.store.load({ sessionToken: 'tok-old' })).user).toBeNull()
      expect((await ctx.store.load({ userOfSession: true })).user).toBeNull()
    })
  })
}
