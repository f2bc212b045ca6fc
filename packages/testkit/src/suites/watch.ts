/**
 * Change notification (`Store.watchScenes`, docs/behaviour.md B-wait-4): a listener is told the
 * scene_str of a scene that a commit wrote, through this store and through a peer (another
 * connection to the same backing data); a stopped listener is told nothing more; and a waiter on
 * `waitForStatus` is woken by a scan committed through a peer.
 */
import { describe, expect, it } from 'vitest'
import { MAX_WAIT_MS, type ScanAuth } from '@scanauth/core'
import type { ContractContext } from '../context'
import { newSceneStr } from '../steps'
import { told, within } from '../waiting'

export function watchSuite(get: () => ContractContext): void {
  describe('change notification', () => {
    it('tells a listener of a scan committed through the same store, until it stops', async () => {
      const { auth, store } = get()
      const sceneStr = await newSceneStr(auth)
      const heard: string[] = []
      const stop = store.watchScenes((s) => heard.push(s))
      try {
        await auth.handleScan({ sceneStr, openid: 'alice' })
        await told(heard, sceneStr)
      } finally {
        stop()
      }
      const later = await newSceneStr(auth)
      await auth.handleScan({ sceneStr: later, openid: 'bob' })
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(heard).not.toContain(later)
    })

    it('tells a listener of a commit made through another connection to the same data (another instance on MemoryStore)', async () => {
      const ctx = get()
      const [, peerAuth] = (await ctx.auths(2)) as [ScanAuth, ScanAuth]
      const sceneStr = await newSceneStr(ctx.auth)
      const heard: string[] = []
      const stop = ctx.store.watchScenes((s) => heard.push(s))
      try {
        // As waitForStatus does: register, then read through the store. A subscription to another
        // server is a round trip (Redis), and the store's reads wait for it; a commit made through
        // another connection before then may go unheard (the read sees it instead).
        await ctx.store.load({ sceneStr })
        await peerAuth.handleScan({ sceneStr, openid: 'alice' })
        await told(heard, sceneStr)
      } finally {
        stop()
      }
    })

    it('wakes waitForStatus with the scan, committed through this store or a peer', async () => {
      const ctx = get()
      const auths = await ctx.auths(2)
      const scanner = auths[auths.length - 1] as ScanAuth
      const sceneStr = await newSceneStr(ctx.auth)
      // A wait far longer than the test: only the notification can end it in time (at its timeout a
      // wait would read the scene again and pass without one).
      const waiting = ctx.auth.waitForStatus(sceneStr, { timeoutMs: MAX_WAIT_MS })
      setTimeout(() => void scanner.handleScan({ sceneStr, openid: 'alice' }), 30)
      expect(await within(waiting, 'the scan to wake the wait')).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
    })

    it('two listeners are two registrations; stopping one leaves the other', async () => {
      const { auth, store } = get()
      const first: string[] = []
      const second: string[] = []
      const stopFirst = store.watchScenes((s) => first.push(s))
      const stopSecond = store.watchScenes((s) => second.push(s))
      try {
        const a = await newSceneStr(auth)
        await auth.handleScan({ sceneStr: a, openid: 'alice' })
        await told(first, a)
        await told(second, a)
        stopFirst()
        const b = await newSceneStr(auth)
        await auth.handleScan({ sceneStr: b, openid: 'bob' })
        await told(second, b)
        expect(first).not.toContain(b)
      } finally {
        stopFirst()
        stopSecond()
      }
    })
  })
}
