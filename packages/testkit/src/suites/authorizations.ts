/**
 * The authorization transition table (docs/behaviour.md, B-auth-1…7), FIFO activation with ties, the
 * end_at boundary, points exhaustion, and grants.
 */
import { describe, expect, it } from 'vitest'
import { DAY, SECOND, type ContractContext } from '../context'
import { authorizationsOf, expectScanAuthError, freshSession, only, scanNewScene, sceneIn, userIn } from '../steps'

async function sessionOf(dump: ContractContext['dump'], sceneStr: string): Promise<string> {
  const snapshot = await dump()
  return only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, sceneStr).id).token
}

export function authorizationSuite(get: () => ContractContext): void {
  describe('authorization transitions', () => {
    it('(none) → active: first scan with nothing active grants the free time authorization, active', async () => {
      const { auth, clock, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      const free = only(authorizationsOf(await dump(), scan.userId as number))
      expect(free).toMatchObject({
        type: 'time', source: 'free', status: 'active', startAt: clock.now(), endAt: clock.now() + 7 * DAY,
        remainingPoints: 0, totalPoints: 0, createdAt: clock.now(), updatedAt: clock.now(),
      })
    })

    it('(none) → pending: first scan while another authorization is active queues the free one, same 7 days', async () => {
      const { auth, clock, dump } = get()
      const granted = await auth.grant({ openid: 'alice', type: 'points', points: 5, source: 'purchase' })
      expect(granted.status).toBe('active')
      clock.advance(SECOND)
      const { scan } = await scanNewScene(auth, 'alice')
      expect(scan).toEqual({ result: 'authorized', userId: granted.userId })
      const free = only(authorizationsOf(await dump(), granted.userId), (a) => a.source === 'free')
      expect(free).toMatchObject({ status: 'pending', type: 'time', endAt: (free.startAt as number) + 7 * DAY })
      // Once the points run out, the queued trial starts then and still lasts 7 days.
      const token = only((await dump()).sessions).token
      for (let i = 0; i < 5; i++) await auth.consume({ sessionToken: token })
      clock.advance(DAY)
      expect((await auth.verifySession(token))?.authorization).toMatchObject({ source: 'free', status: 'active' })
      expect(only(authorizationsOf(await dump(), granted.userId), (a) => a.source === 'free')).toMatchObject({
        status: 'active', startAt: clock.now(), endAt: clock.now() + 7 * DAY,
      })
    })

    it('active time → expired once end_at is not after now (boundary: still valid one millisecond before)', async () => {
      const { auth, clock, dump } = get()
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      clock.advance(7 * DAY - 1)
      expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
      clock.advance(1)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'need_purchase' })
      expect(only(authorizationsOf(await dump(), scan.userId as number))).toMatchObject({ status: 'expired', updatedAt: clock.now() })
    })

    it('active points → exhausted at 0 points, and the next pending one is activated', async () => {
      const { auth, clock, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      clock.advance(7 * DAY)
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const token = await sessionOf(dump, sceneStr)
      const points = await auth.grant({ userId: scan.userId as number, type: 'points', points: 2 })
      expect(points.status).toBe('active')
      const later = await auth.grant({ userId: scan.userId as number, type: 'time', durationSeconds: 600 })
      expect(later.status).toBe('pending')
      expect(await auth.consume({ sessionToken: token, points: 2 })).toMatchObject({ status: 'ok', authorization: { remainingPoints: 0, status: 'active' } })
      clock.advance(SECOND)
      expect(await auth.getStatus(sceneStr)).toEqual({
        status: 'authorized', sessionToken: token, authorization: { type: 'time', endAt: new Date(clock.now() + 600 * SECOND).toISOString(), remainingPoints: 0 },
      })
      const list = authorizationsOf(await dump(), scan.userId as number)
      expect(only(list, (a) => a.id === points.id)).toMatchObject({ status: 'exhausted', remainingPoints: 0, updatedAt: clock.now() })
      expect(only(list, (a) => a.id === later.id)).toMatchObject({ status: 'active', startAt: clock.now(), endAt: clock.now() + 600 * SECOND })
    })

    it('pending → active keeps a time duration and restarts it now; a points one keeps its times', async () => {
      const { auth, clock, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      const userId = scan.userId as number
      const time = await auth.grant({ userId, type: 'time', durationSeconds: 3600 })
      const points = await auth.grant({ userId, type: 'points', points: 3 })
      const grantedAt = clock.now()
      clock.advance(7 * DAY + 5 * SECOND)
      const token = await freshSession(auth, dump, 'alice')
      expect((await auth.verifySession(token))?.authorization?.id).toBe(time.id)
      let list = authorizationsOf(await dump(), userId)
      expect(only(list, (a) => a.id === time.id)).toMatchObject({ status: 'active', startAt: clock.now(), endAt: clock.now() + 3600 * SECOND, updatedAt: clock.now() })
      clock.advance(3600 * SECOND)
      expect((await auth.verifySession(token))?.authorization?.id).toBe(points.id)
      list = authorizationsOf(await dump(), userId)
      expect(only(list, (a) => a.id === points.id)).toMatchObject({ status: 'active', startAt: grantedAt, endAt: null, updatedAt: clock.now() })
    })

    it('FIFO: pending authorizations activate by created_at, ties broken by lower id', async () => {
      const { auth, clock, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      const userId = scan.userId as number
      const a = await auth.grant({ userId, type: 'points', points: 1 })
      const b = await auth.grant({ userId, type: 'points', points: 1 })
      clock.advance(SECOND)
      const c = await auth.grant({ userId, type: 'points', points: 1 })
      expect(a.createdAt).toBe(b.createdAt)
      expect(b.id).toBeGreaterThan(a.id)
      clock.advance(7 * DAY)
      const token = await freshSession(auth, dump, 'alice')
      const order: number[] = []
      for (let i = 0; i < 3; i++) {
        const used = await auth.consume({ sessionToken: token })
        if (used.status === 'ok') order.push(used.authorization.id)
      }
      expect(order).toEqual([a.id, b.id, c.id])
      expect(await auth.consume({ sessionToken: token })).toEqual({ status: 'need_purchase' })
    })

    it('the current authorization is the one active authorization; at most one is ever active', async () => {
      const { auth, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      for (let i = 0; i < 3; i++) await auth.grant({ userId: scan.userId as number, type: 'time', durationSeconds: 60 })
      expect(authorizationsOf(await dump(), scan.userId as number).filter((a) => a.status === 'active')).toHaveLength(1)
    })
  })

  describe('grants', () => {
    it('grant by openid creates the user without claiming the free trial; the first scan still gets it', async () => {
      const { auth, clock, dump } = get()
      const granted = await auth.grant({ openid: 'bob', type: 'time', durationSeconds: 60, source: 'purchase' })
      expect(granted).toMatchObject({ type: 'time', status: 'active', source: 'purchase', remainingPoints: 0, endAt: new Date(clock.now() + 60 * SECOND).toISOString() })
      expect(userIn(await dump(), 'bob').hasClaimedFree).toBe(false)
      const { scan } = await scanNewScene(auth, 'bob')
      expect(scan.userId).toBe(granted.userId)
      expect(userIn(await dump(), 'bob').hasClaimedFree).toBe(true)
    })

    it('grant by openid accepts userId: undefined beside it (objects built from optional fields)', async () => {
      const { auth, dump } = get()
      const granted = await auth.grant({ openid: 'carol', userId: undefined, type: 'time', durationSeconds: 60 })
      expect(granted.userId).toBe(userIn(await dump(), 'carol').id)
    })

    it('grant returns the stored authorization with its id and ISO timestamps', async () => {
      const { auth, clock, dump } = get()
      const granted = await auth.grant({ openid: 'bob', type: 'points', points: 10 })
      const stored = only((await dump()).authorizations)
      expect(granted).toEqual({
        id: stored.id, userId: stored.userId, type: 'points', status: 'active', startAt: new Date(clock.now()).toISOString(), endAt: null,
        remainingPoints: 10, totalPoints: 10, source: 'admin', createdAt: new Date(clock.now()).toISOString(), updatedAt: new Date(clock.now()).toISOString(),
      })
    })

    it('grant to an unknown user id → user_not_found (404); bad input → invalid_request (400), nothing stored', async () => {
      const { auth, dump } = get()
      await expectScanAuthError(auth.grant({ userId: 999, type: 'points', points: 1 }), 'user_not_found', 404)
      await expectScanAuthError(auth.grant({ openid: 'bob', type: 'points', points: 0 }), 'invalid_request', 400)
      await expectScanAuthError(auth.grant({ openid: 'bob', type: 'time', durationSeconds: -5 }), 'invalid_request', 400)
      await expectScanAuthError(auth.grant({ openid: 'bob', type: 'points', points: 1.5 }), 'invalid_request', 400)
      await expectScanAuthError(auth.grant({ openid: 'bob', type: 'time', durationSeconds: 200 * 365 * 86_400 }), 'invalid_request', 400)
      await expectScanAuthError(auth.grant({ type: 'points', points: 1 } as never), 'invalid_request', 400)
      expect((await dump()).users).toHaveLength(0)
    })
  })
}
