/**
 * Idempotency keys on `grant`, `consume` and `consumeForRequest` (docs/behaviour.md, B-idem-1…6,
 * B-guard-5): a repeat answers
 * the first call and changes nothing, another call with the same key is refused with 409, keys
 * are global per store, and concurrent repeats (from several connections) apply once.
 */
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '../invariants'
import type { ContractContext } from '../context'
import { expectScanAuthError, freshSession, only } from '../steps'

export function idempotencySuite(get: () => ContractContext): void {
  describe('idempotency keys', () => {
    it('a grant repeated with its key returns the same authorization and changes nothing', async () => {
      const { auth, dump } = get()
      const first = await auth.grant({ openid: 'alice', type: 'points', points: 30, source: 'purchase', idempotencyKey: 'order-1' })
      const before = await dump()
      const again = await auth.grant({ openid: 'alice', type: 'points', points: 30, source: 'purchase', idempotencyKey: 'order-1' })
      expect(again).toEqual(first)
      expect(await dump()).toEqual(before)
      expect(before.authorizations).toHaveLength(1)
      expect(only(before.ledger, (e) => e.kind === 'grant').idempotencyKey).toBe('order-1')
    })

    it('a repeat returns the authorization the first call created as it is now', async () => {
      const { auth, dump } = get()
      const granted = await auth.grant({ openid: 'alice', type: 'points', points: 5, idempotencyKey: 'order-1' })
      const token = await freshSession(auth, dump, 'alice')
      await auth.consume({ sessionToken: token, points: 2 })
      const again = await auth.grant({ openid: 'alice', type: 'points', points: 5, idempotencyKey: 'order-1' })
      expect(again).toMatchObject({ id: granted.id, remainingPoints: 3 })
    })

    it('the same key with other parameters is refused with idempotency_conflict (409), changing nothing', async () => {
      const { auth, dump } = get()
      const { userId } = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 3600, idempotencyKey: 'k' })
      const before = await dump()
      const others = [
        { openid: 'alice', type: 'time', durationSeconds: 7200, idempotencyKey: 'k' },
        { openid: 'alice', type: 'points', points: 3600, idempotencyKey: 'k' },
        { openid: 'bob', type: 'time', durationSeconds: 3600, idempotencyKey: 'k' },
        { userId, type: 'time', durationSeconds: 3600, idempotencyKey: 'k' },
        { openid: 'alice', type: 'time', durationSeconds: 3600, source: 'purchase', idempotencyKey: 'k' },
      ] as const
      for (const input of others) await expectScanAuthError(auth.grant(input), 'idempotency_conflict', 409)
      expect(await dump()).toEqual(before)
    })

    it('keys are global per store: a grant key cannot be used by a consumption, nor the reverse', async () => {
      const { auth, dump } = get()
      await auth.grant({ openid: 'alice', type: 'points', points: 5, idempotencyKey: 'shared' })
      const token = await freshSession(auth, dump, 'alice')
      await expectScanAuthError(auth.consume({ sessionToken: token, idempotencyKey: 'shared' }), 'idempotency_conflict', 409)
      await auth.consume({ sessionToken: token, idempotencyKey: 'use-1' })
      await expectScanAuthError(auth.grant({ openid: 'alice', type: 'points', points: 5, idempotencyKey: 'use-1' }), 'idempotency_conflict', 409)
    })

    it('a consumption repeated with its key returns the first result and spends nothing more', async () => {
      const { auth, dump } = get()
      await auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const token = await freshSession(auth, dump, 'alice')
      const first = await auth.consume({ sessionToken: token, points: 4, idempotencyKey: 'req-1' })
      expect(first).toMatchObject({ status: 'ok', authorization: { remainingPoints: 6 } })
      const before = await dump()
      expect(await auth.consume({ sessionToken: token, points: 4, idempotencyKey: 'req-1' })).toEqual(first)
      expect(await dump()).toEqual(before)
      await expectScanAuthError(auth.consume({ sessionToken: token, points: 5, idempotencyKey: 'req-1' }), 'idempotency_conflict', 409)
      const consumed = before.ledger.filter((e) => e.kind === 'consume')
      expect(consumed.map((e) => [e.points, e.remainingPoints, e.idempotencyKey])).toEqual([[-4, 6, 'req-1']])
    })

    it('a consumption that spent nothing is remembered too: its repeat answers the same', async () => {
      const { auth, dump } = get()
      await auth.grant({ openid: 'alice', type: 'points', points: 2 })
      const token = await freshSession(auth, dump, 'alice')
      const first = await auth.consume({ sessionToken: token, points: 3, idempotencyKey: 'req-1' })
      expect(first).toEqual({ status: 'insufficient_points' })
      expect(await auth.consume({ sessionToken: token, points: 3, idempotencyKey: 'req-1' })).toEqual(first)
    })

    it('a request consumption tells the first request from a replay, and binds its key to the scope (B-guard-5)', async () => {
      const { auth, dump } = get()
      await auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const token = await freshSession(auth, dump, 'alice')
      const request = { sessionToken: token, points: 3, idempotencyKey: 'guard:req-1', scope: 'POST /api/export' }
      const first = await auth.consumeForRequest(request)
      expect(first).toMatchObject({ replayed: false, result: { status: 'ok', authorization: { remainingPoints: 7 } } })
      const before = await dump()
      expect(await auth.consumeForRequest(request)).toEqual({ ...first, replayed: true })
      expect(await dump()).toEqual(before)
      for (const other of [{ scope: 'POST /api/other' }, { scope: 'GET /api/export' }, { points: 4 }]) {
        await expectScanAuthError(auth.consumeForRequest({ ...request, ...other }), 'idempotency_conflict', 409)
      }
      // A plain consumption with the request's key is another call too.
      await expectScanAuthError(auth.consume({ sessionToken: token, points: 3, idempotencyKey: 'guard:req-1' }), 'idempotency_conflict', 409)
      expect(await dump()).toEqual(before)
    })

    it('20 concurrent request consumptions with one key: one spends, the other 19 are replays', async () => {
      const ctx = get()
      await ctx.auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const token = await freshSession(ctx.auth, ctx.dump, 'alice')
      const auths = await ctx.auths(20)
      const results = await Promise.all(
        auths.map((auth) => auth.consumeForRequest({ sessionToken: token, points: 3, idempotencyKey: 'guard:tap', scope: 'POST /api/x' })),
      )
      expect(results.filter((r) => !r.replayed)).toHaveLength(1)
      expect(new Set(results.map((r) => JSON.stringify(r.result))).size).toBe(1)
      const snapshot = await ctx.dump()
      expect(only(snapshot.authorizations, (a) => a.type === 'points').remainingPoints).toBe(7)
      expect(snapshot.ledger.filter((e) => e.kind === 'consume')).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('refuses keys that are empty, longer than 128 characters or not strings (invalid_request)', async () => {
      const { auth, dump } = get()
      for (const idempotencyKey of ['', 'k'.repeat(129), 42 as unknown as string, 'a\u0000b']) {
        await expectScanAuthError(auth.grant({ openid: 'alice', type: 'points', points: 1, idempotencyKey }), 'invalid_request', 400)
      }
      await auth.grant({ openid: 'alice', type: 'points', points: 1, idempotencyKey: 'k'.repeat(128) })
      expect((await dump()).authorizations).toHaveLength(1)
    })

    it('50 concurrent grants with one key: one authorization, every caller gets it', async () => {
      const ctx = get()
      const auths = await ctx.auths(50)
      const results = await Promise.all(
        auths.map((auth) => auth.grant({ openid: 'alice', type: 'time', durationSeconds: 30 * 86400, source: 'purchase', idempotencyKey: 'payment-77' })),
      )
      expect(new Set(results.map((r) => r.id)).size).toBe(1)
      const snapshot = await ctx.dump()
      expect(snapshot.authorizations).toHaveLength(1)
      expect(snapshot.ledger.filter((e) => e.kind === 'grant')).toHaveLength(1)
      expect(snapshot.idempotency).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('30 concurrent consumptions with one key spend once', async () => {
      const ctx = get()
      await ctx.auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const token = await freshSession(ctx.auth, ctx.dump, 'alice')
      const auths = await ctx.auths(30)
      const results = await Promise.all(auths.map((auth) => auth.consume({ sessionToken: token, points: 3, idempotencyKey: 'tap-1' })))
      expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1)
      const snapshot = await ctx.dump()
      expect(only(snapshot.authorizations, (a) => a.type === 'points').remainingPoints).toBe(7)
      expect(snapshot.ledger.filter((e) => e.kind === 'consume')).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })
  })
}
