/**
 * The ten steps of processing a scan event (docs/behaviour.md, B-scan-1…10).
 */
import { describe, expect, it } from 'vitest'
import { DAY, HOUR, SECOND, SESSION_TTL_HOURS, type ContractContext } from '../context'
import { authorizationsOf, newSceneStr, only, sceneIn, scanNewScene, userIn } from '../steps'

export function scanSuite(get: () => ContractContext): void {
  describe('scan steps', () => {
    it('1. scene does not exist → invalid, no user is created', async () => {
      const { auth, dump } = get()
      expect(await auth.handleScan({ sceneStr: `pc_${'a'.repeat(32)}`, openid: 'alice' })).toEqual({ result: 'invalid' })
      expect(await auth.handleScan({ sceneStr: 'qrscene_garbage', openid: 'alice' })).toEqual({ result: 'invalid' })
      expect((await dump()).users).toHaveLength(0)
    })

    it('2. scene authorized → invalid, nothing changes', async () => {
      const { auth, dump } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const before = await dump()
      expect(await auth.handleScan({ sceneStr, openid: 'mallory' })).toEqual({ result: 'invalid' })
      expect(await dump()).toEqual(before)
    })

    it('3. scene expired → scene set expired, invalid', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(300 * SECOND)
      expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'invalid' })
      expect(sceneIn(await dump(), sceneStr).status).toBe('expired')
    })

    it('4. a new openid creates the user; a known openid finds it and refreshes last_seen_at', async () => {
      const { auth, clock, dump } = get()
      const first = await scanNewScene(auth, 'alice')
      const created = userIn(await dump(), 'alice')
      expect(created).toMatchObject({ id: first.scan.userId, createdAt: clock.now(), lastSeenAt: clock.now() })
      clock.advance(HOUR)
      const second = await scanNewScene(auth, 'alice')
      expect(second.scan.userId).toBe(first.scan.userId)
      expect(userIn(await dump(), 'alice')).toMatchObject({ createdAt: created.createdAt, lastSeenAt: clock.now() })
      expect((await dump()).users).toHaveLength(1)
    })

    it('5. the free authorization is granted once, when has_claimed_free moves from false to true', async () => {
      const { auth, clock, dump } = get()
      await scanNewScene(auth, 'alice')
      expect(userIn(await dump(), 'alice').hasClaimedFree).toBe(true)
      clock.advance(8 * DAY)
      await scanNewScene(auth, 'alice')
      const snapshot = await dump()
      const user = userIn(snapshot, 'alice')
      expect(authorizationsOf(snapshot, user.id).filter((a) => a.source === 'free')).toHaveLength(1)
    })

    it('6. the activation step runs for the user: an expired active one is retired and the oldest pending one activated', async () => {
      const { auth, clock, dump } = get()
      const { scan } = await scanNewScene(auth, 'alice')
      const granted = await auth.grant({ userId: scan.userId as number, type: 'time', durationSeconds: 3600 })
      clock.advance(7 * DAY)
      expect((await scanNewScene(auth, 'alice')).scan.result).toBe('authorized')
      const list = authorizationsOf(await dump(), scan.userId as number)
      expect(list.map((a) => [a.source, a.status])).toEqual([['free', 'expired'], ['admin', 'active']])
      expect(only(list, (a) => a.id === granted.id)).toMatchObject({ startAt: clock.now(), endAt: clock.now() + 3600 * SECOND })
    })

    it('7 and 10. no current authorization → need_purchase; a current one → authorized', async () => {
      const { auth, clock } = get()
      expect((await scanNewScene(auth, 'alice')).scan.result).toBe('authorized')
      clock.advance(7 * DAY)
      expect((await scanNewScene(auth, 'alice')).scan.result).toBe('need_purchase')
    })

    it('8. the scene becomes authorized with user_id and authorized_at now', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(10 * SECOND)
      const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
      expect(sceneIn(await dump(), sceneStr)).toMatchObject({ status: 'authorized', userId: scan.userId, authorizedAt: clock.now() })
    })

    it('9. a session is created: fresh URL-safe token from 32 bytes, device_id from the scene, scene_id, expiry now plus the session lifetime', async () => {
      const { auth, clock, dump } = get()
      const a = await scanNewScene(auth, 'alice', 'phone-a')
      const b = await scanNewScene(auth, 'alice', 'phone-b')
      const snapshot = await dump()
      const sa = only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, a.sceneStr).id)
      const sb = only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, b.sceneStr).id)
      expect(sa).toMatchObject({ userId: a.scan.userId, deviceId: 'phone-a', createdAt: clock.now(), expiresAt: clock.now() + SESSION_TTL_HOURS * HOUR })
      expect(sb.deviceId).toBe('phone-b')
      expect(sa.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(sa.token).not.toBe(sb.token)
    })

    it('9. need_purchase creates a session too', async () => {
      const { auth, clock, dump } = get()
      await scanNewScene(auth, 'alice')
      clock.advance(7 * DAY)
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      expect(scan.result).toBe('need_purchase')
      const snapshot = await dump()
      only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, sceneStr).id)
    })

    it('rejects an invalid openid before touching anything', async () => {
      const { auth, dump } = get()
      const sceneStr = await newSceneStr(auth)
      await expect(auth.handleScan({ sceneStr, openid: '' })).rejects.toMatchObject({ code: 'invalid_request', status: 400 })
      await expect(auth.handleScan({ sceneStr, openid: 'x'.repeat(129) })).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(auth.handleScan({ sceneStr, openid: 'a\u0000b' })).rejects.toMatchObject({ code: 'invalid_request' })
      expect(sceneIn(await dump(), sceneStr).status).toBe('pending')
    })
  })
}
