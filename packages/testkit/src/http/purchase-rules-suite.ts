/**
 * `POST purchase` as a framework adapter serves it, for what keeps a purchase to its buyer
 * (docs/behaviour.md, B-order-4, B-order-12, B-order-13, B-rate-10…12): the scene's poll secret read
 * from `X-Scanauth-Poll-Secret`, a scene that no longer serves a buying device answered 409, and the
 * limits per user and per client address answered 429 with `Retry-After`, the address being the one
 * the adapter reports. Registered by {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth, type ScanAuthOptions } from '@scanauth/core'
import { ManualClock } from '../clock'
import { TestPaymentService } from '../payment-service'
import { RecordingQrProvider } from '../qr'
import { TEST_PLANS } from '../suites/orders'
import { postJson } from './fetch-json'
import type { HttpRoutesHost } from './host'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
const SECRET_HEADER = 'x-scanauth-poll-secret'

/** A selling service over a MemoryStore with a clock the test moves, and the steps of its cases. */
function sellingApp(options: Pick<ScanAuthOptions, 'rateLimits' | 'requirePollSecret'> = {}) {
  const clock = new ManualClock()
  const service = new TestPaymentService(clock.now)
  const auth: ScanAuth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, payments: { provider: service, plans: TEST_PLANS }, ...options })
  return {
    clock,
    service,
    auth,
    /** A scene scanned by `openid` after their free trial ran out (it answers need_purchase), with its poll secret if any. */
    async needPurchaseScene(openid: string) {
      const trial = await auth.createScene({ deviceId: 'old-device' })
      await auth.handleScan({ sceneStr: trial.sceneStr, openid })
      clock.advance(8 * DAY)
      const { sceneStr, pollSecret } = await auth.createScene({ deviceId: 'tv' })
      expect(await auth.handleScan({ sceneStr, openid })).toMatchObject({ result: 'need_purchase' })
      return { scene: sceneStr, pollSecret }
    },
    /** The session token of a new scene scanned by `openid` during their free trial. */
    async sessionOf(openid: string) {
      const { sceneStr } = await auth.createScene({ deviceId: `tv-${openid}` })
      await auth.handleScan({ sceneStr, openid })
      const status = await auth.getStatus(sceneStr)
      if (status.status !== 'authorized') throw new Error(`expected the free trial, got ${status.status}`)
      return status.sessionToken
    },
  }
}

/** Registers the cases for one adapter (called by `describeHttpRoutes`). */
export function describePurchaseRuleRoutes(framework: string, host: HttpRoutesHost): void {
  describe(`the ${framework} adapter's purchase rules`, () => {
    it('POST purchase {scene} needs the scene\'s X-Scanauth-Poll-Secret (403 without), and a scene with access 10 minutes after its scan is 409 (B-order-12, B-order-13)', async () => {
      const { auth, service, clock, needPurchaseScene } = sellingApp({ requirePollSecret: true })
      const url = await host(auth, {})
      const { scene, pollSecret } = await needPurchaseScene('buyer')
      const buy = (headers: Record<string, string>, plan = 'days-30') => postJson(`${url}/auth/purchase`, { scene, plan }, headers)
      expect(await buy({})).toMatchObject({ status: 403, body: { detail: expect.stringMatching(/X-Scanauth-Poll-Secret/) } })
      expect(await buy({ [SECRET_HEADER]: 'not-the-secret' })).toMatchObject({ status: 403, body: { detail: expect.any(String) } })
      expect(service.calls).toEqual([])
      const bought = await buy({ [SECRET_HEADER]: pollSecret as string })
      expect(bought).toMatchObject({ status: 200, body: { order_id: expect.stringMatching(/^SA[0-9A-F]{26}$/), amount_fen: 1990 } })
      await auth.applyPayment(service.pay(bought.body.order_id as string))
      // The scene's user has access now, and the scan is 10 minutes old: the device buys with its session.
      clock.advance(10 * MINUTE)
      const calls = service.calls.length
      expect(await buy({ [SECRET_HEADER]: pollSecret as string }, 'points-100')).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/session/) } })
      expect(service.calls).toHaveLength(calls)
    })

    it('POST purchase is limited per user and per client address: 429 {detail} with Retry-After, nothing reaching the payment service (B-rate-10…12)', async () => {
      const { auth, service, clock, needPurchaseScene, sessionOf } = sellingApp({ rateLimits: { purchasesPerAddress: { limit: 12, windowSeconds: 600 } } })
      const url = await host(auth, {})
      const { scene } = await needPurchaseScene('buyer')
      // The default per user: 10 in 10 minutes (the scene's order is reused each time).
      for (let i = 0; i < 10; i++) expect((await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })).status).toBe(200)
      const calls = service.calls.length
      const overUser = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })
      const window = 600_000
      const wait = Math.ceil((Math.floor(clock.now() / window) * window + window - clock.now()) / 1000)
      expect(overUser).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/this user/) } })
      expect(overUser.headers.get('retry-after')).toBe(String(wait))
      expect(service.calls).toHaveLength(calls)
      // Two other buyers from the same client: the 12th purchase from its address passes, the 13th does not.
      const [second, third] = [await sessionOf('second'), await sessionOf('third')]
      expect((await postJson(`${url}/auth/purchase`, { plan: 'points-100' }, { authorization: `Bearer ${second}` })).status).toBe(200)
      const overAddress = await postJson(`${url}/auth/purchase`, { plan: 'points-100' }, { authorization: `Bearer ${third}` })
      expect(overAddress).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/this address/) } })
      expect(Number(overAddress.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(overAddress.headers.get('cache-control')).toBe('no-store')
    })
  })
}
