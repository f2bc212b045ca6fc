/**
 * The scene transition table (docs/behaviour.md, B-scene-1…8) and the poll decision order (B-poll-1…5),
 * row by row, at the expiry boundaries.
 */
import { describe, expect, it } from 'vitest'
import { SCENE_STR_PATTERN, type SceneRecord } from '@scanauth/core'
import { SCENE_TTL_SECONDS, SECOND, type ContractContext } from '../context'
import { expectScanAuthError, newSceneStr, sceneIn, scanNewScene } from '../steps'

/** Moves a stored scene into `scanned` (no operation enters it today; the table still covers it). */
async function markScanned(ctx: ContractContext, sceneStr: string): Promise<void> {
  const scene = (await ctx.store.load({ sceneStr })).scene as SceneRecord
  const result = await ctx.store.commit({ scene: { op: 'update', scene: { ...scene, status: 'scanned', version: scene.version + 1 }, expectedVersion: scene.version } })
  expect(result.ok).toBe(true)
}

const LIFETIME = SCENE_TTL_SECONDS * SECOND

export function sceneSuite(get: () => ContractContext): void {
  describe('scene transitions', () => {
    it('(none) → pending: create_scene stores a pending scene with its expiry when the platform succeeds', async () => {
      const { auth, clock, qr, dump } = get()
      const created = await auth.createScene({ deviceId: 'tv-1' })
      expect(created.sceneStr).toMatch(SCENE_STR_PATTERN)
      expect(created.sceneStr).toHaveLength(35)
      expect(created).toEqual({ sceneStr: created.sceneStr, qrUrl: `https://qr.example.test/${created.sceneStr}`, expiresIn: SCENE_TTL_SECONDS })
      expect(qr.requests).toEqual([{ sceneStr: created.sceneStr, expiresInSeconds: SCENE_TTL_SECONDS }])
      expect(sceneIn(await dump(), created.sceneStr)).toMatchObject({
        deviceId: 'tv-1', status: 'pending', userId: null, createdAt: clock.now(), expiresAt: clock.now() + LIFETIME, authorizedAt: null,
      })
    })

    it('(none): a failed platform call stores no scene and answers qr_creation_failed (502) with the reason', async () => {
      const { auth, qr, dump } = get()
      qr.failWith = 'errcode 40001: invalid credential'
      const attempt = auth.createScene({ deviceId: 'tv-1' })
      await expectScanAuthError(attempt, 'qr_creation_failed', 502)
      await expect(attempt).rejects.toThrow('QR code creation failed: errcode 40001: invalid credential')
      expect((await dump()).scenes).toHaveLength(0)
    })

    it('every scene gets a fresh scene_str', async () => {
      const { auth } = get()
      const a = await newSceneStr(auth)
      const b = await newSceneStr(auth)
      expect(a).not.toBe(b)
    })

    it('pending + poll, not yet expired → pending, unchanged (one millisecond before expires_at)', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(LIFETIME - 1)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
      expect(sceneIn(await dump(), sceneStr)).toMatchObject({ status: 'pending', version: 1 })
    })

    it('pending + poll, expires_at reached → expired, and the poll answers expired', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(LIFETIME)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect(sceneIn(await dump(), sceneStr).status).toBe('expired')
    })

    it('scanned + poll: not expired → pending; expired → expired', async () => {
      const ctx = get()
      const sceneStr = await newSceneStr(ctx.auth)
      await markScanned(ctx, sceneStr)
      expect(await ctx.auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
      ctx.clock.advance(LIFETIME)
      expect(await ctx.auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect(sceneIn(await ctx.dump(), sceneStr).status).toBe('expired')
    })

    it('expired + poll → expired, unchanged', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(LIFETIME)
      await auth.getStatus(sceneStr)
      const before = sceneIn(await dump(), sceneStr)
      clock.advance(LIFETIME)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect(sceneIn(await dump(), sceneStr)).toEqual(before)
    })

    it('pending + scan, expired → expired, result invalid, no user created', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(LIFETIME)
      expect(await auth.handleScan({ sceneStr, openid: 'late' })).toEqual({ result: 'invalid' })
      const snapshot = await dump()
      expect(sceneIn(snapshot, sceneStr).status).toBe('expired')
      expect(snapshot.users).toHaveLength(0)
      expect(snapshot.sessions).toHaveLength(0)
    })

    it('scanned + scan, expired → expired, result invalid', async () => {
      const ctx = get()
      const sceneStr = await newSceneStr(ctx.auth)
      await markScanned(ctx, sceneStr)
      ctx.clock.advance(LIFETIME)
      expect(await ctx.auth.handleScan({ sceneStr, openid: 'late' })).toEqual({ result: 'invalid' })
      expect(sceneIn(await ctx.dump(), sceneStr).status).toBe('expired')
    })

    it('pending + scan, not expired (one millisecond before expires_at) → authorized with user, authorized_at and a session', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth, 'tv-9')
      clock.advance(LIFETIME - 1)
      const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
      expect(scan).toEqual({ result: 'authorized', userId: expect.any(Number) })
      const snapshot = await dump()
      const scene = sceneIn(snapshot, sceneStr)
      expect(scene).toMatchObject({ status: 'authorized', userId: scan.userId, authorizedAt: clock.now() })
      expect(snapshot.sessions.filter((s) => s.sceneId === scene.id)).toHaveLength(1)
    })

    it('authorized + scan → invalid, nothing changes (only the first scan is processed)', async () => {
      const { auth, clock, dump } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const before = await dump()
      clock.advance(SECOND)
      expect(await auth.handleScan({ sceneStr, openid: 'bob' })).toEqual({ result: 'invalid' })
      expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'invalid' })
      expect(await dump()).toEqual(before)
    })

    it('expired + scan → invalid, unchanged', async () => {
      const { auth, clock, dump } = get()
      const sceneStr = await newSceneStr(auth)
      clock.advance(LIFETIME)
      await auth.getStatus(sceneStr)
      const before = await dump()
      expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'invalid' })
      expect(await dump()).toEqual(before)
    })
  })

  describe('poll decision order', () => {
    it('1. no scene with that scene_str → scene_not_found (404), also for strings that cannot be one', async () => {
      const { auth } = get()
      await expectScanAuthError(auth.getStatus(`pc_${'0'.repeat(32)}`), 'scene_not_found', 404)
      await expectScanAuthError(auth.getStatus('not-a-scene'), 'scene_not_found', 404)
    })

    it('2. pending: expired once expires_at has passed, otherwise pending (see the transition rows)', async () => {
      const { auth, clock } = get()
      const sceneStr = await newSceneStr(auth)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
      clock.advance(LIFETIME)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
    })

    it('4. authorized with a current authorization and a live session → authorized, token and summary', async () => {
      const { auth, clock, dump } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      const session = (await dump()).sessions[0]
      const status = await auth.getStatus(sceneStr)
      expect(status).toEqual({
        status: 'authorized',
        sessionToken: session?.token,
        authorization: { type: 'time', endAt: new Date(clock.now() + 7 * 24 * 3600 * SECOND).toISOString(), remainingPoints: 0 },
      })
    })

    it('4. authorized after the scene itself expired: still answers from the user and session', async () => {
      const { auth, clock } = get()
      const { sceneStr } = await scanNewScene(auth, 'alice')
      clock.advance(LIFETIME * 2)
      expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
    })

    it('4. authorized but no current authorization → need_purchase', async () => {
      const { auth, clock } = get()
      await scanNewScene(auth, 'alice')
      clock.advance(8 * 24 * 3600 * SECOND)
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      expect(scan.result).toBe('need_purchase')
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'need_purchase' })
    })

    it('4. authorized, current authorization, latest session expired → expired', async () => {
      const { auth, clock } = get()
      const { sceneStr, scan } = await scanNewScene(auth, 'alice')
      await auth.grant({ userId: scan.userId as number, type: 'time', durationSeconds: 30 * 24 * 3600 })
      clock.advance(168 * 3600 * SECOND)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
    })
  })
}
