import { describe, expect, it } from 'vitest'
import { createScanAuth, createHttpHandler, MemoryStore } from '@scanauth/core'

describe('smoke', () => {
  it('runs the whole flow', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z')
    const auth = createScanAuth({ store: new MemoryStore(), qr: { createQr: async ({ sceneStr }) => ({ url: `u/${sceneStr}` }) }, now: () => t })
    const s = await auth.createScene({ deviceId: 'd1' })
    expect(await auth.getStatus(s.sceneStr)).toEqual({ status: 'pending' })
    expect(await auth.handleScan({ sceneStr: s.sceneStr, openid: 'o1' })).toEqual({ result: 'authorized', userId: 1 })
    const st = await auth.getStatus(s.sceneStr)
    expect(st.status).toBe('authorized')
    const h = createHttpHandler(auth)
    const r = await h({ method: 'GET', path: '/auth/status', query: { scene: s.sceneStr } })
    expect(r?.status).toBe(200)
    t += 1000
    const g = await auth.grant({ userId: 1, type: 'points', points: 3 })
    expect(g.status).toBe('pending')
  })
})
