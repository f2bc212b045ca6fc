import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, ScanAuthError, type ActivationEvent, type ScanEvent, type Store } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'

describe('createScanAuth options', () => {
  it('rejects a missing store or qr provider and bad lifetimes with ScanAuthError invalid_options naming the option', () => {
    const qr = new RecordingQrProvider()
    const thrown = (() => {
      try {
        createScanAuth({ store: new MemoryStore(), qr, sceneTtlSeconds: -5 })
      } catch (error) {
        return error
      }
      return undefined
    })()
    expect(thrown).toBeInstanceOf(ScanAuthError)
    expect(thrown).toMatchObject({ code: 'invalid_options', status: 500, message: expect.stringMatching(/^createScanAuth: sceneTtlSeconds/) })
    expect(() => createScanAuth({ store: {} as Store, qr })).toThrow(/store/)
    expect(() => createScanAuth({ store: new MemoryStore(), qr: {} as never })).toThrow(/qr/)
    expect(() => createScanAuth({ store: new MemoryStore(), qr, sceneTtlSeconds: 0 })).toThrow(/sceneTtlSeconds/)
    expect(() => createScanAuth({ store: new MemoryStore(), qr, sessionTtlHours: -1 })).toThrow(/sessionTtlHours/)
    expect(() => createScanAuth({ store: new MemoryStore(), qr, sessionTtlHours: 1e12 })).toThrow(/sessionTtlHours/)
    expect(() => createScanAuth({ store: new MemoryStore(), qr, freeTrialDays: 1e9 })).toThrow(/freeTrialDays/)
  })

  it('applies configured lifetimes', async () => {
    const clock = new ManualClock()
    const store = new MemoryStore()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, sceneTtlSeconds: 60, sessionTtlHours: 1, freeTrialDays: 2 })
    const { sceneStr, expiresIn } = await auth.createScene({ deviceId: 'd' })
    expect(expiresIn).toBe(60)
    await auth.handleScan({ sceneStr, openid: 'o' })
    const snap = store.snapshot()
    expect(snap.scenes[0]?.expiresAt).toBe(clock.now() + 60_000)
    expect(snap.sessions[0]?.expiresAt).toBe(clock.now() + 3_600_000)
    expect(snap.authorizations[0]?.endAt).toBe(clock.now() + 2 * 86_400_000)
  })

  it('uses Date.now by default', async () => {
    const store = new MemoryStore()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider() })
    const before = Date.now()
    await auth.createScene({ deviceId: 'd' })
    expect(store.snapshot().scenes[0]?.createdAt).toBeGreaterThanOrEqual(before)
  })
})

describe('hooks', () => {
  it('reports scans and activations after they commit; a throwing hook does not fail the call', async () => {
    const clock = new ManualClock()
    const scans: ScanEvent[] = []
    const activations: ActivationEvent[] = []
    const errors: unknown[] = []
    const auth = createScanAuth({
      store: new MemoryStore(),
      qr: new RecordingQrProvider(),
      now: clock.now,
      hooks: {
        onScan: (e) => {
          scans.push(e)
          throw new Error('hook broke')
        },
        onActivate: (e) => activations.push(e),
        onHookError: (e) => errors.push(e),
      },
    })
    const { sceneStr } = await auth.createScene({ deviceId: 'd' })
    expect(await auth.handleScan({ sceneStr, openid: 'o' })).toEqual({ result: 'authorized', userId: 1 })
    expect(scans).toEqual([{ sceneStr, openid: 'o', result: 'authorized', userId: 1 }])
    expect(activations.map((a) => a.authorization.source)).toEqual(['free'])
    expect(errors).toHaveLength(1)
    await auth.grant({ userId: 1, type: 'points', points: 1 })
    expect(activations).toHaveLength(1)
    clock.advance(7 * 86_400_000)
    await auth.getStatus(sceneStr)
    expect(activations.map((a) => a.authorization.type)).toEqual(['time', 'points'])
  })
})

describe('the pending poll', () => {
  it('is one load and no commit', async () => {
    const inner = new MemoryStore()
    const calls: string[] = []
    // The real MemoryStore, with every call counted.
    const counted: Store = {
      load: (q) => (calls.push(`load ${Object.keys(q).join(',')}`), inner.load(q)),
      commit: (c) => (calls.push('commit'), inner.commit(c)),
      listLedger: (q) => inner.listLedger(q),
      endSessions: (s, at) => inner.endSessions(s, at),
      watchScenes: (listener) => inner.watchScenes(listener),
      incrementCounter: (key, expiresAt, now) => inner.incrementCounter(key, expiresAt, now),
      deleteCounter: (key) => inner.deleteCounter(key),
    }
    const auth = createScanAuth({ store: counted, qr: new RecordingQrProvider() })
    const { sceneStr } = await auth.createScene({ deviceId: 'd' })
    calls.length = 0
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
    expect(calls).toEqual(['load sceneStr'])
  })
})

describe('conflicts', () => {
  it('gives up with conflict (503) when every commit loses, having changed nothing', async () => {
    const inner = new MemoryStore()
    let refused = 0
    // A store whose commits always lose a race, as under a pathological storm of writers.
    const alwaysLosing: Store = {
      load: (q) => inner.load(q),
      commit: async (c) => (c.scene?.op === 'insert' ? inner.commit(c) : (refused++, { ok: false, conflict: 'scene' })),
      listLedger: (q) => inner.listLedger(q),
      endSessions: (s, at) => inner.endSessions(s, at),
      watchScenes: (listener) => inner.watchScenes(listener),
      incrementCounter: (key, expiresAt, now) => inner.incrementCounter(key, expiresAt, now),
      deleteCounter: (key) => inner.deleteCounter(key),
    }
    const auth = createScanAuth({ store: alwaysLosing, qr: new RecordingQrProvider() })
    const { sceneStr } = await auth.createScene({ deviceId: 'd' })
    await expect(auth.handleScan({ sceneStr, openid: 'o' })).rejects.toMatchObject({ code: 'conflict', status: 503 })
    expect(refused).toBe(100)
    expect(inner.snapshot().users).toHaveLength(0)
  })
})

describe('MemoryStore.purgeExpired', () => {
  it('removes expired scenes and sessions past the retention window, never users or authorizations', async () => {
    const clock = new ManualClock()
    const store = new MemoryStore()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
    const open = await auth.createScene({ deviceId: 'd' })
    const scanned = await auth.createScene({ deviceId: 'd' })
    await auth.handleScan({ sceneStr: scanned.sceneStr, openid: 'o' })
    clock.advance(3600_000)
    expect(await store.purgeExpired({ now: clock.now() })).toMatchObject({ scenes: 1, sessions: 0 })
    await expect(auth.getStatus(open.sceneStr)).rejects.toMatchObject({ code: 'scene_not_found' })
    expect((await auth.getStatus(scanned.sceneStr)).status).toBe('authorized')
    clock.advance(168 * 3600_000)
    expect(await store.purgeExpired({ now: clock.now(), retentionMs: 7200_000 })).toMatchObject({ scenes: 0, sessions: 0 })
    expect(await store.purgeExpired({ now: clock.now() + 3600_000, retentionMs: 7200_000 })).toMatchObject({ scenes: 1, sessions: 1 })
    expect(store.snapshot()).toMatchObject({ users: [expect.any(Object)], authorizations: [expect.any(Object)] })
  })
})
