/**
 * Concurrency (docs/behaviour.md, B-conc-1…3): "one effective processing per scene", "serialize per user" and
 * "concurrent creation of the same user must not fail", plus atomic point consumption. Writers are
 * spread over several connections when the harness can open peers.
 */
import { describe, expect, it } from 'vitest'
import { checkInvariants } from '../invariants'
import type { ContractContext } from '../context'
import { authorizationsOf, freshSession, newSceneStr, only, sceneIn, userIn } from '../steps'

export function concurrencySuite(get: () => ContractContext): void {
  describe('concurrency', () => {
    it('50 concurrent scans of one scene: exactly one is processed', async () => {
      const ctx = get()
      const sceneStr = await newSceneStr(ctx.auth)
      const auths = await ctx.auths(50)
      const results = await Promise.all(auths.map((auth, i) => auth.handleScan({ sceneStr, openid: `user-${i}` })))
      const processed = results.filter((r) => r.result !== 'invalid')
      expect(processed).toHaveLength(1)
      const snapshot = await ctx.dump()
      expect(sceneIn(snapshot, sceneStr).userId).toBe(processed[0]?.userId)
      expect(snapshot.sessions).toHaveLength(1)
      expect(snapshot.users).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('one new openid scanning 20 scenes at once: one user, one free trial, 20 sessions', async () => {
      const ctx = get()
      // Twenty devices: one device may create only 10 scenes a minute (B-rate-4).
      const scenes = await Promise.all(Array.from({ length: 20 }, (_, i) => newSceneStr(ctx.auth, `device-${i}`)))
      const auths = await ctx.auths(20)
      const results = await Promise.all(scenes.map((sceneStr, i) => (auths[i] as typeof ctx.auth).handleScan({ sceneStr, openid: 'newcomer' })))
      expect(results.every((r) => r.result === 'authorized')).toBe(true)
      expect(new Set(results.map((r) => r.userId)).size).toBe(1)
      const snapshot = await ctx.dump()
      const user = userIn(snapshot, 'newcomer')
      expect(authorizationsOf(snapshot, user.id).filter((a) => a.source === 'free')).toHaveLength(1)
      expect(snapshot.sessions).toHaveLength(20)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('concurrent consumes never drive points below 0 and spend each point once', async () => {
      const ctx = get()
      // The points are active before the first scan, so the free trial waits behind them.
      const granted = await ctx.auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const token = await freshSession(ctx.auth, ctx.dump, 'alice')
      const userId = granted.userId
      const auths = await ctx.auths(30)
      const results = await Promise.all(auths.map((auth) => auth.consume({ sessionToken: token })))
      // Ten consumes spend the ten points; once they are gone the queued free trial takes over.
      const types = results.map((r) => (r.status === 'ok' ? r.authorization.type : r.status))
      expect(types.filter((t) => t === 'points')).toHaveLength(10)
      expect(types.filter((t) => t === 'time')).toHaveLength(20)
      const snapshot = await ctx.dump()
      expect(only(authorizationsOf(snapshot, userId), (a) => a.type === 'points').remainingPoints).toBe(0)
      expect(checkInvariants(snapshot)).toEqual([])
    })

    it('concurrent grants to one user keep at most one active and queue the rest', async () => {
      const ctx = get()
      const auths = await ctx.auths(12)
      await Promise.all(auths.map((auth) => auth.grant({ openid: 'bulk', type: 'points', points: 1 })))
      const snapshot = await ctx.dump()
      const user = userIn(snapshot, 'bulk')
      const list = authorizationsOf(snapshot, user.id)
      expect(list).toHaveLength(12)
      expect(list.filter((a) => a.status === 'active')).toHaveLength(1)
      expect(checkInvariants(snapshot)).toEqual([])
    })
  })
}
