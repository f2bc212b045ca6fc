/**
 * Reading a user without side effects (`getUser`, docs/behaviour.md "Reading a user") and the
 * decisions taken where the rules were read two ways (docs/behaviour.md, "Our decisions").
 */
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '../invariants'
import { DAY, FREE_TRIAL_DAYS, HOUR, type ContractContext } from '../context'
import { authorizationsOf, expectScanAuthError, scanNewScene, userIn } from '../steps'

export function userSuite(get: () => ContractContext): void {
  describe('getUser', () => {
    it('answers null for an unknown user and creates none', async () => {
      const { auth, dump } = get()
      expect(await auth.getUser({ openid: 'nobody' })).toBeNull()
      expect(await auth.getUser({ userId: 77 })).toBeNull()
      expect((await dump()).users).toHaveLength(0)
      await expectScanAuthError(auth.getUser({ openid: '' }), 'invalid_request', 400)
    })

    it('shows the user, its current authorization and its queue in activation order', async () => {
      const { auth, clock } = get()
      const t0 = new Date(clock.now()).toISOString()
      const { scan } = await scanNewScene(auth, 'alice')
      clock.advance(HOUR)
      const later = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 60 })
      const points = await auth.grant({ openid: 'alice', type: 'points', points: 4, source: 'purchase' })
      const user = await auth.getUser({ userId: scan.userId as number })
      expect(user).toEqual({
        id: scan.userId,
        openid: 'alice',
        createdAt: t0,
        lastSeenAt: t0,
        hasClaimedFree: true,
        current: expect.objectContaining({ type: 'time', source: 'free', status: 'active', startAt: t0 }),
        queue: [later, points],
      })
      expect(await auth.getUser({ openid: 'alice' })).toEqual(user)
    })

    it('reads without writing: an expired current one is reported as none, and stays stored as it was', async () => {
      const { auth, clock, dump } = get()
      await scanNewScene(auth, 'alice')
      const queued = await auth.grant({ openid: 'alice', type: 'points', points: 1 })
      clock.advance(FREE_TRIAL_DAYS * DAY)
      const before = await dump()
      const user = await auth.getUser({ openid: 'alice' })
      expect(user?.current).toBeNull()
      expect(user?.queue.map((a) => a.id)).toEqual([queued.id])
      expect(await dump()).toEqual(before)
    })
  })

  describe('decisions where the rules were read two ways', () => {
    it('a first scan whose stored active authorization is no longer valid starts the free trial active, expiring the stale one in the same commit', async () => {
      const { auth, clock, dump } = get()
      const stale = await auth.grant({ openid: 'alice', type: 'time', durationSeconds: 3600 })
      clock.advance(2 * HOUR)
      const { scan } = await scanNewScene(auth, 'alice')
      expect(scan.result).toBe('authorized')
      const snapshot = await dump()
      const mine = authorizationsOf(snapshot, userIn(snapshot, 'alice').id)
      expect(mine.map((a) => [a.source, a.status])).toEqual([
        ['admin', 'expired'],
        ['free', 'active'],
      ])
      const { entries } = await auth.listLedger({ openid: 'alice' })
      expect(entries.slice(-3).map((e) => [e.kind, e.authorizationId === stale.id ? 'stale' : 'free'])).toEqual([
        ['expire', 'stale'],
        ['grant', 'free'],
        ['activate', 'free'],
      ])
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it("a first scan while a valid authorization is active queues the free trial, which keeps its full length", async () => {
      const { auth, dump } = get()
      await auth.grant({ openid: 'alice', type: 'points', points: 3 })
      await scanNewScene(auth, 'alice')
      const user = await auth.getUser({ openid: 'alice' })
      expect(user?.current?.type).toBe('points')
      expect(user?.queue.map((a) => a.source)).toEqual(['free'])
      expect(checkInvariants(await dump())).toEqual([])
    })

    it("grant refuses source 'free' (invalid_request): the free trial comes only from a first scan", async () => {
      const { auth, dump } = get()
      await expectScanAuthError(auth.grant({ openid: 'alice', type: 'time', durationSeconds: 60, source: 'free' }), 'invalid_request', 400)
      expect((await dump()).users).toHaveLength(0)
    })

    it('handleScan answers invalid for any scene string that cannot be a scene, over-long ones included', async () => {
      const { auth, dump } = get()
      for (const sceneStr of ['', 'pc_nothex', 'x'.repeat(5000), `pc_${'0'.repeat(32)}`, `${'pc_'.repeat(400)}`]) {
        expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'invalid' })
      }
      expect((await dump()).users).toHaveLength(0)
    })
  })
}
