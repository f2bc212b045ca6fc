/**
 * Sessions: verifying, consuming (docs/behaviour.md, B-consume-1…5, B-session-1…3), and sessions that expire while the
 * authorization is still valid.
 */
import { describe, expect, it } from 'vitest'
import { DAY, HOUR, SECOND, SESSION_TTL_HOURS, type ContractContext } from '../context'
import { authorizationsOf, expectScanAuthError, freshSession, only, scanNewScene } from '../steps'

export function sessionSuite(get: () => ContractContext): void {
  describe('sessions', () => {
    it('verifySession returns the user, device, expiry and current authorization of a live session', async () => {
      const { auth, clock, dump } = get()
      const token = await freshSession(auth, dump, 'alice')
      const info = await auth.verifySession(token)
      const userId = only((await dump()).users).id
      expect(info).toEqual({
        userId,
        deviceId: 'device-1',
        expiresAt: new Date(clock.now() + SESSION_TTL_HOURS * HOUR).toISOString(),
        authorization: expect.objectContaining({ userId, type: 'time', status: 'active', source: 'free', remainingPoints: 0 }),
      })
    })

    it('verifySession answers null for an unknown token and for an empty one', async () => {
      const { auth } = get()
      expect(await auth.verifySession('no-such-token')).toBeNull()
      expect(await auth.verifySession('')).toBeNull()
    })

    it('a session expires at its expires_at while the authorization is still valid: poll expired, verify null, consume 401', async () => {
      const { auth, clock, dump } = get()
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      await auth.grant({ userId: scan.userId as number, type: 'time', durationSeconds: 60 * 24 * 3600 })
      const token = only((await dump()).sessions).token
      clock.advance(SESSION_TTL_HOURS * HOUR - 1)
      expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
      expect(await auth.verifySession(token)).not.toBeNull()
      clock.advance(1)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect(await auth.verifySession(token)).toBeNull()
      await expectScanAuthError(auth.consume({ sessionToken: token }), 'unauthorized', 401)
      // The authorization itself is still valid: a new scan authorizes at once.
      expect((await scanNewScene(auth, 'alice')).scan.result).toBe('authorized')
    })

    it('consume with a time authorization is ok and changes nothing', async () => {
      const { auth, dump } = get()
      const token = await freshSession(auth, dump, 'alice')
      const before = await dump()
      const used = await auth.consume({ sessionToken: token, points: 3 })
      expect(used).toMatchObject({ status: 'ok', authorization: { type: 'time', source: 'free', remainingPoints: 0 } })
      expect(await dump()).toEqual(before)
    })

    it('consume decrements points atomically, reports insufficient_points without spending, need_purchase when none', async () => {
      const { auth, clock, dump } = get()
      await freshSession(auth, dump, 'alice')
      const userId = only((await dump()).users).id
      clock.advance(7 * DAY)
      await auth.grant({ userId, type: 'points', points: 3 })
      const token = await freshSession(auth, dump, 'alice')
      expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok', authorization: { type: 'points', remainingPoints: 2, totalPoints: 3 } })
      expect(await auth.consume({ sessionToken: token, points: 5 })).toEqual({ status: 'insufficient_points' })
      expect(only(authorizationsOf(await dump(), userId), (a) => a.type === 'points').remainingPoints).toBe(2)
      expect(await auth.consume({ sessionToken: token, points: 2 })).toMatchObject({ status: 'ok', authorization: { remainingPoints: 0 } })
      expect(await auth.consume({ sessionToken: token })).toEqual({ status: 'need_purchase' })
      expect(only(authorizationsOf(await dump(), userId), (a) => a.type === 'points').status).toBe('exhausted')
    })

    it('consume runs the activation step first (an expired trial is retired, the next pending one used)', async () => {
      const { auth, clock, dump } = get()
      await freshSession(auth, dump, 'alice')
      const userId = only((await dump()).users).id
      const queued = await auth.grant({ userId, type: 'points', points: 4 })
      clock.advance(DAY)
      const token = await freshSession(auth, dump, 'alice')
      clock.advance(6 * DAY)
      expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok', authorization: { id: queued.id, remainingPoints: 3 } })
      expect(only(authorizationsOf(await dump(), userId), (a) => a.source === 'free').status).toBe('expired')
    })

    it('consume rejects an unknown token (401) and bad points (400)', async () => {
      const { auth, dump } = get()
      await expectScanAuthError(auth.consume({ sessionToken: 'nope' }), 'unauthorized', 401)
      const token = await freshSession(auth, dump, 'alice')
      await expectScanAuthError(auth.consume({ sessionToken: token, points: 0 }), 'invalid_request', 400)
      await expectScanAuthError(auth.consume({ sessionToken: token, points: -1 }), 'invalid_request', 400)
      await expectScanAuthError(auth.consume({ sessionToken: token, points: 0.5 }), 'invalid_request', 400)
    })

    it('sessions of need_purchase scans verify, with no authorization', async () => {
      const { auth, clock, dump } = get()
      await scanNewScene(auth, 'alice')
      clock.advance(7 * DAY + SECOND)
      const token = await freshSession(auth, dump, 'alice')
      expect(await auth.verifySession(token)).toMatchObject({ authorization: null })
      expect(await auth.consume({ sessionToken: token })).toEqual({ status: 'need_purchase' })
    })
  })
}
