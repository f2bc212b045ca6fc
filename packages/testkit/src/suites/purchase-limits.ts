/**
 * The purchase limits (docs/behaviour.md, B-rate-10…12), through `createScanAuth` on the store under
 * test: purchases per user (by scene and by session together) and per client address, counted in the
 * store's counters (so instances over other connections share them), refused with 429
 * `rate_limited` and `retryAfterSeconds` before the payment service hears of anything, counted only
 * once the buyer may buy, and off with `rateLimits: false`.
 */
import { describe, expect, it } from 'vitest'
import { ScanAuthError, type ScanAuth, type Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { TestPaymentService } from '../payment-service'
import { expectScanAuthError, freshSession } from '../steps'
import { endTrial, needPurchaseSceneOf, secondsToWindowEnd, sellingAuthWith } from './selling'

/** The error a promise rejects with (it must reject with a ScanAuthError). */
async function refusal(promise: Promise<unknown>): Promise<ScanAuthError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ScanAuthError)
  return error as ScanAuthError
}

export function purchaseLimitSuite(get: () => ContractContext): void {
  describe('purchase limits (B-rate-10…12)', () => {
    it('the 11th purchase of a user in 10 minutes, by scene or by session, is refused 429 with retryAfterSeconds, reaching nothing', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuthWith(ctx, service, { requirePollSecret: true })
      await endTrial(ctx, auth, 'erin')
      const { sceneStr, pollSecret } = await needPurchaseSceneOf(auth, 'erin')
      const session = await freshSession(auth, ctx.dump, 'erin')
      // Refused before the count: a stranger without the scene's secret spends none of erin's purchases.
      for (let i = 0; i < 12; i++) await expectScanAuthError(auth.purchase({ sceneStr, plan: 'days-30' }), 'poll_secret_required', 403)
      // Ten purchases (the scene's order reused each time) pass.
      for (let i = 0; i < 6; i++) await auth.purchase({ sceneStr, pollSecret, plan: 'days-30' })
      for (let i = 0; i < 4; i++) await auth.purchase({ sessionToken: session, plan: 'points-100' })
      const calls = service.calls.length
      const before = await ctx.dump()

      const refused = await refusal(auth.purchase({ sceneStr, pollSecret, plan: 'points-100' }))
      const wait = secondsToWindowEnd(ctx.clock.now(), 600)
      expect(refused).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: wait })
      expect(refused.message).toBe(`Too many purchases for this user; try again in ${wait} s`)
      await expectScanAuthError(auth.purchase({ sessionToken: session, plan: 'days-30' }), 'rate_limited', 429)
      // Nothing reached the service, and no order was opened or closed.
      expect(service.calls).toHaveLength(calls)
      expect((await ctx.dump()).orders).toEqual(before.orders)
      // Another user is not held back.
      const frank = await freshSession(auth, ctx.dump, 'frank')
      expect(await auth.purchase({ sessionToken: frank, plan: 'days-30' })).toMatchObject({ amountFen: 1990 })
      // The next window counts from zero.
      ctx.clock.advance(wait * 1000)
      expect(await auth.purchase({ sceneStr, pollSecret, plan: 'points-100' })).toMatchObject({ amountFen: 990 })
    })

    it('purchases per client address count every buyer from it (an IPv6 address as its /64); a call without an address is not counted there', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const auth = sellingAuthWith(ctx, service, { rateLimits: { purchasesPerAddress: { limit: 3, windowSeconds: 600 } } })
      const buyers = []
      for (const openid of ['gus', 'hana', 'ivan', 'jo']) buyers.push(await freshSession(auth, ctx.dump, openid))
      const [gus, hana, ivan, jo] = buyers as [string, string, string, string]
      await auth.purchase({ sessionToken: gus, plan: 'days-30', clientAddress: '2001:db8:1:2::1' })
      await auth.purchase({ sessionToken: hana, plan: 'days-30', clientAddress: '2001:db8:1:2:ffff::9' })
      await auth.purchase({ sessionToken: ivan, plan: 'days-30', clientAddress: '2001:DB8:1:2::77' })
      const calls = service.calls.length
      const refused = await refusal(auth.purchase({ sessionToken: jo, plan: 'days-30', clientAddress: '2001:db8:1:2::abcd' }))
      expect(refused).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: secondsToWindowEnd(ctx.clock.now(), 600) })
      expect(refused.message).toMatch(/^Too many purchases from this address; try again in \d+ s$/)
      expect(service.calls).toHaveLength(calls)
      // Another network, or no address at all (a library call), is not held back by it.
      expect(await auth.purchase({ sessionToken: jo, plan: 'days-30', clientAddress: '2001:db8:1:3::1' })).toMatchObject({ amountFen: 1990 })
      expect(await auth.purchase({ sessionToken: jo, plan: 'days-30' })).toMatchObject({ amountFen: 1990 })
      await expectScanAuthError(auth.purchase({ sessionToken: jo, plan: 'days-30', clientAddress: 'bad\naddress' }), 'invalid_request', 400)
    })

    it('is counted in the store: instances over other connections share the count; rateLimits: false, or false for a limit, turns it off', async () => {
      const ctx = get()
      const service = new TestPaymentService(ctx.clock.now)
      const stores: Store[] = [ctx.store]
      if (ctx.harness.openPeer) stores.push(await ctx.harness.openPeer(), await ctx.harness.openPeer())
      const limited = stores.map((store) => sellingAuthWith(ctx, service, { store, rateLimits: { purchasesPerUser: { limit: 4, windowSeconds: 600 } } }))
      const session = await freshSession(ctx.auth, ctx.dump, 'kim')
      // Four purchases, taking turns over the connections; then every one of them refuses the fifth.
      const turns = Array.from({ length: 4 }, (_, i) => limited[i % limited.length] as ScanAuth)
      for (const auth of turns) await auth.purchase({ sessionToken: session, plan: 'days-30' })
      for (const auth of limited) await expectScanAuthError(auth.purchase({ sessionToken: session, plan: 'days-30' }), 'rate_limited', 429)

      const off = sellingAuthWith(ctx, service, { rateLimits: false })
      for (let i = 0; i < 12; i++) await off.purchase({ sessionToken: session, plan: i % 2 === 0 ? 'points-100' : 'days-30', clientAddress: '192.0.2.7' })
      const perUserOff = sellingAuthWith(ctx, service, { rateLimits: { purchasesPerUser: false, purchasesPerAddress: false } })
      for (let i = 0; i < 12; i++) await perUserOff.purchase({ sessionToken: session, plan: 'days-30', clientAddress: '192.0.2.7' })
    })
  })
}
