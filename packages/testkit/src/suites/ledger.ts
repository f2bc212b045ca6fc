/**
 * The ledger (docs/behaviour.md, B-ledger-1…5): every change to a user's entitlements is appended in
 * the commit that makes it, and `listLedger` reads it back by user, oldest first, in pages.
 */
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '../invariants'
import { DAY, FREE_TRIAL_DAYS, type ContractContext } from '../context'
import { expectScanAuthError, freshSession, scanNewScene } from '../steps'

/** The entries of a list as `kind:authorizationId:points:remainingPoints`, for compact comparisons. */
function compact(entries: Array<{ kind: string; authorizationId: number; points: number; remainingPoints: number }>): string[] {
  return entries.map((e) => `${e.kind}:${e.authorizationId}:${e.points}:${e.remainingPoints}`)
}

export function ledgerSuite(get: () => ContractContext): void {
  describe('ledger', () => {
    it('a first scan records the free trial: grant (source free), then activate', async () => {
      const { auth, clock } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      const { entries, nextAfterId } = await auth.listLedger({ openid: 'alice' })
      const free = (await auth.getUser({ openid: 'alice' }))?.current
      expect(nextAfterId).toBeNull()
      expect(entries).toEqual([
        { id: expect.any(Number), userId: scan.userId, authorizationId: free?.id, kind: 'grant', points: 0, remainingPoints: 0, at: new Date(clock.now()).toISOString(), source: 'free' },
        { id: expect.any(Number), userId: scan.userId, authorizationId: free?.id, kind: 'activate', points: 0, remainingPoints: 0, at: new Date(clock.now()).toISOString() },
      ])
      expect((entries[1] as { id: number }).id).toBeGreaterThan((entries[0] as { id: number }).id)
    })

    it('records grants (+points), consumption (−points), expiry, exhaustion and activation in order', async () => {
      const { auth, clock, dump } = get()
      await scanNewScene(auth, 'alice')
      const free = (await auth.getUser({ openid: 'alice' }))?.current?.id as number
      // A second sign-in a day before the trial ends: its session outlives the trial.
      clock.advance((FREE_TRIAL_DAYS - 1) * DAY)
      const token = await freshSession(auth, dump, 'alice')
      const points = await auth.grant({ openid: 'alice', type: 'points', points: 3, source: 'purchase', idempotencyKey: 'order-9' })
      const time = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 3600 })
      clock.advance(DAY)
      // The free trial is over: this consumption expires it, activates the points, then spends them.
      await auth.consume({ sessionToken: token, points: 3, idempotencyKey: 'use-1' })
      // At 0 points the next activation step exhausts them and activates the time pass.
      expect(await auth.verifySession(token)).toMatchObject({ authorization: { id: time.id, status: 'active' } })
      const { entries } = await auth.listLedger({ openid: 'alice' })
      expect(compact(entries)).toEqual([
        `grant:${free}:0:0`,
        `activate:${free}:0:0`,
        `grant:${points.id}:3:3`,
        `grant:${time.id}:0:0`,
        `expire:${free}:0:0`,
        `activate:${points.id}:0:3`,
        `consume:${points.id}:-3:0`,
        `exhaust:${points.id}:0:0`,
        `activate:${time.id}:0:0`,
      ])
      expect(entries.find((e) => e.kind === 'grant' && e.authorizationId === points.id)).toMatchObject({ source: 'purchase', idempotencyKey: 'order-9' })
      expect(entries.find((e) => e.kind === 'consume')).toMatchObject({ idempotencyKey: 'use-1' })
      expect(entries.find((e) => e.kind === 'consume')).not.toHaveProperty('source')
      expect(checkInvariants(await dump())).toEqual([])
    })

    it('pages by afterId: limit (default 100, at most 1000), nextAfterId null at the end', async () => {
      const { auth } = get()
      for (let i = 0; i < 7; i++) await auth.grant({ openid: 'alice', type: 'points', points: i + 1 })
      // 7 grants and the activation of the first one.
      const all = (await auth.listLedger({ openid: 'alice' })).entries
      expect(all).toHaveLength(8)
      const first = await auth.listLedger({ openid: 'alice' }, { limit: 3 })
      expect(first.entries.map((e) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id))
      expect(first.nextAfterId).toBe(all[2]?.id)
      const second = await auth.listLedger({ openid: 'alice' }, { afterId: first.nextAfterId as number, limit: 3 })
      expect(second.entries.map((e) => e.id)).toEqual(all.slice(3, 6).map((e) => e.id))
      const last = await auth.listLedger({ openid: 'alice' }, { afterId: second.nextAfterId as number, limit: 3 })
      expect(last.entries.map((e) => e.id)).toEqual(all.slice(6).map((e) => e.id))
      expect(last.nextAfterId).toBeNull()
      // A page that ends exactly at the last entry says so too.
      expect((await auth.listLedger({ openid: 'alice' }, { limit: 8 })).nextAfterId).toBeNull()
      const byId = await auth.listLedger({ userId: all[0]?.userId as number })
      expect(byId.entries).toEqual(all)
      await expectScanAuthError(auth.listLedger({ openid: 'alice' }, { limit: 1001 }), 'invalid_request', 400)
      await expectScanAuthError(auth.listLedger({ openid: 'alice' }, { limit: 0 }), 'invalid_request', 400)
      await expectScanAuthError(auth.listLedger({ openid: 'alice' }, { afterId: -1 }), 'invalid_request', 400)
      expect((await auth.listLedger({ openid: 'alice' }, { limit: 1000 })).entries).toHaveLength(8)
    })

    it('an unknown user has an empty ledger, and reading it creates nothing', async () => {
      const { auth, dump } = get()
      expect(await auth.listLedger({ openid: 'nobody' })).toEqual({ entries: [], nextAfterId: null })
      expect(await auth.listLedger({ userId: 4242 })).toEqual({ entries: [], nextAfterId: null })
      expect((await dump()).users).toHaveLength(0)
      await expectScanAuthError(auth.listLedger({} as never), 'invalid_request', 400)
    })

    it("each user's ledger holds only its own entries", async () => {
      const { auth } = get()
      await scanNewScene(auth, 'alice')
      await scanNewScene(auth, 'bob')
      await auth.grant({ openid: 'bob', type: 'points', points: 2 })
      const alice = (await auth.listLedger({ openid: 'alice' })).entries
      const bob = (await auth.listLedger({ openid: 'bob' })).entries
      expect(alice).toHaveLength(2)
      expect(bob).toHaveLength(3)
      expect(new Set(alice.map((e) => e.userId)).size).toBe(1)
      expect(alice[0]?.userId).not.toBe(bob[0]?.userId)
    })
  })
}
