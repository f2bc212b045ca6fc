/**
 * Revocation (docs/behaviour.md, B-revoke-1…4): authorizations withdrawn with the activation step
 * in the same commit, and sessions ended one at a time or all of a user's at once.
 */
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '../invariants'
import { DAY, FREE_TRIAL_DAYS, type ContractContext } from '../context'
import { expectScanAuthError, freshSession, only, scanNewScene } from '../steps'

export function revocationSuite(get: () => ContractContext): void {
  describe('revoking authorizations', () => {
    it('revoking the active one makes the next queued one active in the same commit', async () => {
      const { auth, clock, dump } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const free = (await auth.getUser({ openid: 'alice' }))?.current
      const next = await auth.grant({ openid: 'alice', type: 'points', points: 5 })
      clock.advance(1000)
      const revoked = await auth.revokeAuthorization({ authorizationId: free?.id as number, reason: 'refund #12' })
      expect(revoked).toMatchObject({ id: free?.id, status: 'revoked', updatedAt: new Date(clock.now()).toISOString() })
      const user = await auth.getUser({ openid: 'alice' })
      expect(user?.current).toMatchObject({ id: next.id, status: 'active' })
      expect(user?.queue).toEqual([])
      expect(await auth.getStatus(sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'points', remainingPoints: 5 } })
      const { entries } = await auth.listLedger({ openid: 'alice' })
      expect(entries.slice(-2).map((e) => [e.kind, e.authorizationId])).toEqual([
        ['revoke', free?.id],
        ['activate', next.id],
      ])
      expect(entries.at(-2)).toMatchObject({ reason: 'refund #12', points: 0 })
      expect(checkInvariants(await dump())).toEqual([])
    })

    it('revoking a queued one takes it out of the queue and leaves the active one alone', async () => {
      const { auth, dump } = get()
      await scanNewScene(auth, 'alice')
      const first = await auth.grant({ openid: 'alice', type: 'points', points: 1 })
      const second = await auth.grant({ openid: 'alice', type: 'points', points: 2 })
      const third = await auth.grant({ openid: 'alice', type: 'points', points: 3 })
      expect(await auth.revokeAuthorization({ authorizationId: second.id })).toMatchObject({ status: 'revoked', remainingPoints: 2 })
      const user = await auth.getUser({ openid: 'alice' })
      expect(user?.current?.source).toBe('free')
      expect(user?.queue.map((a) => a.id)).toEqual([first.id, third.id])
      expect(only((await auth.listLedger({ openid: 'alice' })).entries, (e) => e.kind === 'revoke')).not.toHaveProperty('reason')
      expect(checkInvariants(await dump())).toEqual([])
    })

    it('revoking a revoked authorization returns it unchanged and writes nothing', async () => {
      const { auth, clock, dump } = get()
      const granted = await auth.grant({ openid: 'alice', type: 'points', points: 3 })
      const revoked = await auth.revokeAuthorization({ authorizationId: granted.id })
      const before = await dump()
      clock.advance(5000)
      expect(await auth.revokeAuthorization({ authorizationId: granted.id, reason: 'again' })).toEqual(revoked)
      expect(await dump()).toEqual(before)
    })

    it('refuses an unknown id (authorization_not_found, 404) and an expired or exhausted one (invalid_request)', async () => {
      const { auth, clock } = get()
      await expectScanAuthError(auth.revokeAuthorization({ authorizationId: 999 }), 'authorization_not_found', 404)
      await scanNewScene(auth, 'alice')
      const free = (await auth.getUser({ openid: 'alice' }))?.current?.id as number
      clock.advance(FREE_TRIAL_DAYS * DAY)
      await auth.grant({ openid: 'alice', type: 'points', points: 1 }) // its activation step expires the trial
      await expectScanAuthError(auth.revokeAuthorization({ authorizationId: free }), 'invalid_request', 400)
      await expectScanAuthError(auth.revokeAuthorization({ authorizationId: 0 }), 'invalid_request', 400)
      await expectScanAuthError(auth.revokeAuthorization({ authorizationId: 1, reason: 'x'.repeat(501) }), 'invalid_request', 400)
    })

    it('revocation racing consumption: every point spent is in the ledger, and the invariants hold', async () => {
      const ctx = get()
      // 30 points outlast the 11 consumptions of 2, so the revocation always finds them revocable.
      const granted = await ctx.auth.grant({ openid: 'alice', type: 'points', points: 30 })
      const token = await freshSession(ctx.auth, ctx.dump, 'alice')
      const auths = await ctx.auths(12)
      const outcomes = await Promise.all(
        auths.map((auth, i) => (i === 5 ? auth.revokeAuthorization({ authorizationId: granted.id }) : auth.consume({ sessionToken: token, points: 2 }))),
      )
      const snapshot = await ctx.dump()
      expect(checkInvariants(snapshot)).toEqual([])
      const points = only(snapshot.authorizations, (a) => a.id === granted.id)
      expect(points.status).toBe('revoked')
      const spentOnPoints = outcomes.filter((o) => 'status' in o && o.status === 'ok' && o.authorization.id === granted.id).length * 2
      expect(30 - points.remainingPoints).toBe(spentOnPoints)
      const consumed = snapshot.ledger.filter((e) => e.kind === 'consume' && e.authorizationId === granted.id)
      expect(-consumed.reduce((sum, e) => sum + e.points, 0)).toBe(spentOnPoints)
    })
  })

  describe('ending sessions', () => {
    it('revokeSession ends a live session: verify null, consume 401, the poll answers expired', async () => {
      const { auth, dump } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const token = only((await dump()).sessions).token
      expect(await auth.revokeSession(token)).toBe(true)
      expect(await auth.revokeSession(token)).toBe(false)
      expect(await auth.verifySession(token)).toBeNull()
      await expectScanAuthError(auth.consume({ sessionToken: token }), 'unauthorized', 401)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect(await auth.revokeSession('no-such-token')).toBe(false)
      expect(await auth.revokeSession('')).toBe(false)
      // The entitlements are untouched: a new scan signs in again.
      expect((await scanNewScene(auth, 'alice')).scan.result).toBe('authorized')
    })

    it('revokeSessions ends every live session of one user, by id or openid, and counts them', async () => {
      const { auth, dump } = get()
      const a1 = await freshSession(auth, dump, 'alice')
      const a2 = await freshSession(auth, dump, 'alice')
      const b = await freshSession(auth, dump, 'bob')
      expect(await auth.revokeSession(a1)).toBe(true)
      expect(await auth.revokeSessions({ openid: 'alice' })).toBe(1)
      expect(await auth.verifySession(a2)).toBeNull()
      expect(await auth.verifySession(b)).not.toBeNull()
      const bob = (await auth.getUser({ openid: 'bob' }))?.id as number
      expect(await auth.revokeSessions({ userId: bob })).toBe(1)
      expect(await auth.revokeSessions({ userId: bob })).toBe(0)
      expect(await auth.revokeSessions({ openid: 'nobody' })).toBe(0)
      expect((await dump()).users).toHaveLength(2)
    })
  })
}
