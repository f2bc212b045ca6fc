/**
 * A purchase by scene is for the device that scene serves (docs/behaviour.md, B-order-4, B-order-12,
 * B-order-13), through `createScanAuth` on the store under test: it replaces only the open orders of
 * its own scene (a session's purchase only the user's session orders), so whoever holds another
 * scene of the user cannot close the code a device shows; it works while the scene answers
 * `need_purchase` or within 10 minutes of its scan; and a scene created with a poll secret buys only
 * with it. Every refusal happens before the payment service hears of anything.
 */
import { describe, expect, it } from 'vitest'
import type { Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { TestPaymentService } from '../payment-service'
import { expectScanAuthError, freshSession, scanNewScene } from '../steps'
import { endTrial, MINUTE, needPurchaseSceneOf, sellingAuthWith } from './selling'

/** The store's open orders of one scene. */
const openOrdersOf = (store: Store, sceneStr: string) => (store.listOpenOrders as NonNullable<Store['listOpenOrders']>).call(store, { sceneStr, limit: 10 })

export function scenePurchaseSuite(get: () => ContractContext): void {
  describe('purchases by scene (B-order-4, B-order-12, B-order-13)', () => {
    it('a purchase closes only the open orders of its own scene, or a session purchase the session orders: the code another device shows stays payable', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuthWith(ctx, service)
      await endTrial(ctx, auth, 'alice')
      const victim = await needPurchaseSceneOf(auth, 'alice', 'victim-tv')
      const other = await needPurchaseSceneOf(auth, 'alice', 'other-tv')
      // A need_purchase scan makes a session too (B-scan-9): a purchase with it is a session purchase.
      const session = await freshSession(auth, ctx.dump, 'alice')
      const shown = await auth.purchase({ sceneStr: victim.sceneStr, plan: 'days-30' })
      const bySession = await auth.purchase({ sessionToken: session, plan: 'days-30' })

      // Whoever holds the other scene alternates plans: each purchase replaces that scene's previous order only.
      const alternated: string[] = []
      for (const plan of ['points-100', 'days-30', 'points-100']) alternated.push((await auth.purchase({ sceneStr: other.sceneStr, plan })).orderId)
      expect(new Set(alternated).size).toBe(3)
      for (const orderId of alternated.slice(0, -1)) expect(await auth.getOrder(orderId)).toMatchObject({ status: 'closed' })
      expect(service.orders.get(alternated[0] as string)?.tradeState).toBe('CLOSED')

      // The victim's code and the session's order were never closed, here or at the service.
      const touched = (orderId: string) => service.calls.filter((c) => c.outTradeNo === orderId && c.method !== 'createNativeOrder')
      expect(touched(shown.orderId)).toEqual([])
      expect(touched(bySession.orderId)).toEqual([])
      expect(await auth.getOrder(shown.orderId)).toMatchObject({ status: 'open', sceneStr: victim.sceneStr })
      expect(await auth.getOrder(bySession.orderId)).toMatchObject({ status: 'open', sceneStr: null })
      expect(await auth.openOrderOfScene(victim.sceneStr)).toMatchObject({ orderId: shown.orderId })
      // The victim's device asks again: its own order with a fresh code, neither refused nor replaced.
      expect(await auth.purchase({ sceneStr: victim.sceneStr, plan: 'days-30' })).toMatchObject({ orderId: shown.orderId, codeUrl: expect.stringMatching(/-2$/) })

      // A session purchase of another plan replaces the session's order, and no scene's.
      const sessionAgain = await auth.purchase({ sessionToken: session, plan: 'points-100' })
      expect(sessionAgain.orderId).not.toBe(bySession.orderId)
      expect(await auth.getOrder(bySession.orderId)).toMatchObject({ status: 'closed' })
      expect((await openOrdersOf(ctx.store, victim.sceneStr)).map((o) => o.outTradeNo)).toEqual([shown.orderId])
      expect((await openOrdersOf(ctx.store, other.sceneStr)).map((o) => o.outTradeNo)).toEqual([alternated[2]])

      // The victim pays the code their device shows, and the device is let in.
      expect(await auth.applyPayment(service.pay(shown.orderId))).toMatchObject({ result: 'granted', orderId: shown.orderId })
      expect(await auth.getStatus(victim.sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
    })

    it('a scene buys while it answers need_purchase or within 10 minutes of its scan; after that, with access, it is refused 409 scene_not_purchasable', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuthWith(ctx, service)
      // A signed-in device's scene: its user has the free trial.
      const { sceneStr: signedIn, scan } = await scanNewScene(auth, 'bob', 'tv')
      expect(scan.result).toBe('authorized')
      ctx.clock.advance(10 * MINUTE - 1)
      const early = await auth.purchase({ sceneStr: signedIn, plan: 'points-100' })
      // At 10 minutes after the scan (B-expiry-1's boundary) the window is over.
      ctx.clock.advance(1)
      const calls = service.calls.length
      await expectScanAuthError(auth.purchase({ sceneStr: signedIn, plan: 'points-100' }), 'scene_not_purchasable', 409)
      await expectScanAuthError(auth.purchase({ sceneStr: signedIn, plan: 'days-30' }), 'scene_not_purchasable', 409)
      expect(service.calls).toHaveLength(calls)
      expect(await auth.getOrder(early.orderId)).toMatchObject({ status: 'open' })
      // The device holds its session: it buys with that, and the scene's order is left alone.
      const status = await auth.getStatus(signedIn)
      if (status.status !== 'authorized') throw new Error(`expected authorized, got ${status.status}`)
      expect(await auth.purchase({ sessionToken: status.sessionToken, plan: 'days-30' })).toMatchObject({ amountFen: 1990 })
      expect(await auth.getOrder(early.orderId)).toMatchObject({ status: 'open' })

      // A need_purchase scene buys for as long as it answers need_purchase, long after its scan.
      await endTrial(ctx, auth, 'carol')
      const { sceneStr } = await needPurchaseSceneOf(auth, 'carol')
      ctx.clock.advance(2 * 60 * MINUTE)
      const bought = await auth.purchase({ sceneStr, plan: 'days-30' })
      await auth.applyPayment(service.pay(bought.orderId))
      // Paid: carol has access and the scan is two hours old, so the scene serves a signed-in device now.
      expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
      await expectScanAuthError(auth.purchase({ sceneStr, plan: 'points-100' }), 'scene_not_purchasable', 409)
      // Once that access is gone, the scene answers need_purchase again, and buys again.
      ctx.clock.advance(31 * 24 * 60 * MINUTE)
      expect((await auth.getStatus(sceneStr)).status).toBe('need_purchase')
      expect(await auth.purchase({ sceneStr, plan: 'points-100' })).toMatchObject({ amountFen: 990 })
    })

    it('a scene created with a poll secret buys only with it, on any instance; a scene without one needs none', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const withSecret = sellingAuthWith(ctx, service, { requirePollSecret: true })
      await endTrial(ctx, withSecret, 'dave')
      const { sceneStr, pollSecret } = await needPurchaseSceneOf(withSecret, 'dave')
      expect(pollSecret).toEqual(expect.any(String))
      await expectScanAuthError(withSecret.purchase({ sceneStr, plan: 'days-30' }), 'poll_secret_required', 403)
      await expectScanAuthError(withSecret.purchase({ sceneStr, plan: 'days-30', pollSecret: 'not-the-secret' }), 'poll_secret_required', 403)
      await expectScanAuthError(withSecret.purchase({ sceneStr, plan: 'days-30', pollSecret: '' }), 'poll_secret_required', 403)
      // The digest is the scene's: an instance without the option asks for it too.
      const without = sellingAuthWith(ctx, service)
      await expectScanAuthError(without.purchase({ sceneStr, plan: 'days-30' }), 'poll_secret_required', 403)
      expect(service.calls).toEqual([])
      expect(await openOrdersOf(ctx.store, sceneStr)).toEqual([])

      const bought = await withSecret.purchase({ sceneStr, pollSecret, plan: 'days-30' })
      expect(await without.purchase({ sceneStr, pollSecret, plan: 'days-30' })).toMatchObject({ orderId: bought.orderId })
      await withSecret.applyPayment(service.pay(bought.orderId))
      expect(await withSecret.getStatus(sceneStr, { pollSecret })).toMatchObject({ status: 'authorized' })
      // Past the window, the secret does not make a scene with access purchasable, and without it the answer is still 403.
      ctx.clock.advance(10 * MINUTE)
      await expectScanAuthError(withSecret.purchase({ sceneStr, plan: 'points-100' }), 'poll_secret_required', 403)
      await expectScanAuthError(withSecret.purchase({ sceneStr, pollSecret, plan: 'points-100' }), 'scene_not_purchasable', 409)

      // A scene created without a secret buys without one (B-secret-4).
      ctx.clock.advance(31 * 24 * 60 * MINUTE)
      const plain = await needPurchaseSceneOf(without, 'dave', 'tv-2')
      expect(plain.pollSecret).toBeUndefined()
      expect(await without.purchase({ sceneStr: plain.sceneStr, plan: 'points-100' })).toMatchObject({ amountFen: 990 })
    })
  })
}
