/**
 * The purchase routes as a framework adapter serves them (docs/behaviour.md, B-order-1…7): `GET
 * plans`, `POST purchase` by scene and by session with every refusal answered `{detail}` before
 * the payment service is asked, and the event stream and long poll that carry a `need_purchase`
 * device to `authorized` once its order is paid. Registered by {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth } from '@scanauth/core'
import { ManualClock } from '../clock'
import { TestPaymentService } from '../payment-service'
import { RecordingQrProvider } from '../qr'
import { TEST_PLANS } from '../suites/orders'
import { fetchJson, postJson } from './fetch-json'
import type { HttpRoutesHost } from './host'
import { openEventStream } from './sse'

const DAY = 24 * 3600 * 1000

/** A selling service over a MemoryStore, with a clock the test moves past the free trial. */
function sellingApp() {
  const clock = new ManualClock()
  const service = new TestPaymentService(clock.now)
  const auth: ScanAuth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, payments: { provider: service, plans: TEST_PLANS } })
  /** A scene scanned by a user whose free trial is over: it answers need_purchase. */
  async function needPurchaseScene(openid = 'buyer'): Promise<string> {
    const trial = await auth.createScene({ deviceId: 'old-device' })
    await auth.handleScan({ sceneStr: trial.sceneStr, openid })
    clock.advance(8 * DAY)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect(await auth.handleScan({ sceneStr, openid })).toMatchObject({ result: 'need_purchase' })
    return sceneStr
  }
  return { clock, service, auth, needPurchaseScene }
}

/** Registers the purchase route cases for one adapter. */
export function describePurchaseRoutes(framework: string, host: HttpRoutesHost): void {
  describe(`the ${framework} adapter's purchase routes`, () => {
    it('GET plans lists the catalog in fen; without payments it is empty and purchase answers 404', async () => {
      const { auth } = sellingApp()
      const url = await host(auth, {})
      const plans = await fetchJson(`${url}/auth/plans`)
      expect(plans.status).toBe(200)
      expect(plans.body).toEqual([
        { id: 'days-30', description: '30 days', amount_fen: 1990, grant: { type: 'time', days: 30 } },
        { id: 'points-100', description: '100 points', amount_fen: 990, grant: { type: 'points', points: 100 } },
      ])
      const plain = await host(createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() }), {})
      expect((await fetchJson(`${plain}/auth/plans`)).body).toEqual([])
      expect(await postJson(`${plain}/auth/purchase`, { scene: `pc_${'0'.repeat(32)}`, plan: 'days-30' })).toMatchObject({ status: 404, body: { detail: expect.stringMatching(/not configured/) } })
    })

    it('POST purchase {scene, plan} answers the order, and the event stream carries the device to authorized once paid', async () => {
      const { auth, service, needPurchaseScene } = sellingApp()
      const url = await host(auth, {})
      const scene = await needPurchaseScene()
      const bought = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })
      expect(bought).toMatchObject({ status: 200, body: { order_id: expect.stringMatching(/^SA[0-9A-F]{26}$/), code_url: expect.stringMatching(/^weixin:\/\//), amount_fen: 1990, expires_at: expect.any(String) } })
      const stream = await openEventStream(`${url}/auth/events?scene=${scene}`)
      expect(await stream.next()).toMatchObject({ event: 'status', data: '{"status":"need_purchase"}' })
      await auth.applyPayment(service.pay(bought.body.order_id as string))
      const paid = await stream.next()
      expect(JSON.parse(paid?.data ?? 'null')).toMatchObject({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'time' } })
      expect(await stream.next()).toBeUndefined()
    })

    it('a reconnect (Last-Event-ID) to need_purchase is 204 while no order is open, and streams while one is (B-wait-5)', async () => {
      const { auth, needPurchaseScene } = sellingApp()
      const url = await host(auth, {})
      const scene = await needPurchaseScene()
      const lastEventId = { headers: { 'last-event-id': 'need_purchase' } }
      const ended = await fetch(`${url}/auth/events?scene=${scene}`, lastEventId)
      expect(ended.status).toBe(204)
      expect(await ended.text()).toBe('')
      expect((await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })).status).toBe(200)
      // Now the device waits for the payment: the reconnect is served the current status again.
      const stream = await openEventStream(`${url}/auth/events?scene=${scene}`, lastEventId)
      expect(stream.response.status).toBe(200)
      expect(await stream.next()).toEqual({ retry: 3000, id: 'need_purchase', event: 'status', data: '{"status":"need_purchase"}', comments: [] })
      stream.abort()
    })

    it('the long poll of a need_purchase scene with an open order waits for the payment', async () => {
      const { auth, service, needPurchaseScene } = sellingApp()
      const url = await host(auth, {})
      const scene = await needPurchaseScene()
      // No order yet: a final answer at once.
      expect((await fetchJson(`${url}/auth/status?scene=${scene}&wait=20`)).body).toEqual({ status: 'need_purchase' })
      const { body } = await postJson(`${url}/auth/purchase`, { scene, plan: 'points-100' })
      const waiting = fetchJson(`${url}/auth/status?scene=${scene}&wait=20`)
      await new Promise((resolve) => setTimeout(resolve, 100))
      await auth.applyPayment(service.pay(body.order_id as string))
      expect((await waiting).body).toMatchObject({ status: 'authorized', authorization: { type: 'points', remaining_points: 100 } })
    })

    it('POST purchase {plan} with a Bearer session buys for the session user (more time during the trial)', async () => {
      const { auth } = sellingApp()
      const url = await host(auth, {})
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      await auth.handleScan({ sceneStr, openid: 'buyer' })
      const status = await auth.getStatus(sceneStr)
      if (status.status !== 'authorized') throw new Error(`expected the free trial, got ${status.status}`)
      const bought = await postJson(`${url}/auth/purchase`, { plan: 'points-100' }, { authorization: `Bearer ${status.sessionToken}` })
      expect(bought).toMatchObject({ status: 200, body: { amount_fen: 990 } })
      expect(await auth.getOrder(bought.body.order_id as string)).toMatchObject({ sceneStr: null, planId: 'points-100', status: 'open' })
    })

    it('GET order answers the buyer where its order stands, and no one else (B-order-11)', async () => {
      const { auth, service, needPurchaseScene } = sellingApp()
      const url = await host(auth, {})
      const tokenOf = async (openid: string) => {
        const { sceneStr } = await auth.createScene({ deviceId: `tv-${openid}` })
        await auth.handleScan({ sceneStr, openid })
        const status = await auth.getStatus(sceneStr)
        if (status.status !== 'authorized') throw new Error(`expected the free trial, got ${status.status}`)
        return status.sessionToken
      }
      await needPurchaseScene('someone-else')
      const buyer = await tokenOf('buyer')
      const stranger = await tokenOf('stranger')
      const bought = await postJson(`${url}/auth/purchase`, { plan: 'points-100' }, { authorization: `Bearer ${buyer}` })
      const orderId = bought.body.order_id as string
      const read = (token?: string, id: string = orderId) => fetchJson(`${url}/auth/order?id=${encodeURIComponent(id)}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
      expect(await read(buyer)).toMatchObject({ status: 200, body: { order_id: orderId, status: 'open', plan: 'points-100', amount_fen: 990, expires_at: bought.body.expires_at, paid_at: null } })
      await auth.applyPayment(service.pay(orderId))
      // The plan only queues behind the free trial: the session shows no change, the order does.
      expect((await read(buyer)).body).toMatchObject({ status: 'paid', paid_at: expect.any(String) })
      expect(await read(stranger)).toMatchObject({ status: 404, body: { detail: expect.any(String) } })
      expect(await read(buyer, 'SA00000000000000000000000000')).toMatchObject({ status: 404 })
      expect(await read()).toMatchObject({ status: 401 })
      expect(await read(buyer, '')).toMatchObject({ status: 400 })
    })

    it('refuses malformed and unknown purchases with {error, detail} before the payment service hears of them (B-wire-7)', async () => {
      const { auth, service } = sellingApp()
      const url = await host(auth, {})
      const pending = (await auth.createScene({ deviceId: 'tv' })).sceneStr
      const cases: Array<[unknown, Record<string, string>, number, string]> = [
        [{}, {}, 400, 'invalid_request'],
        [{ scene: pending }, {}, 400, 'invalid_request'],
        [{ scene: pending, plan: 7 }, {}, 400, 'invalid_request'],
        [{ scene: 12, plan: 'days-30' }, {}, 400, 'invalid_request'],
        [{ scene: pending, plan: 'gold' }, {}, 404, 'plan_not_found'],
        [{ scene: `pc_${'0'.repeat(32)}`, plan: 'days-30' }, {}, 404, 'scene_not_found'],
        [{ scene: pending, plan: 'days-30' }, {}, 409, 'scene_not_scanned'],
        [{ plan: 'days-30' }, {}, 401, 'unauthorized'],
        [{ plan: 'days-30' }, { authorization: 'Bearer nope' }, 401, 'unauthorized'],
        [[1, 2], {}, 400, 'invalid_request'],
      ]
      for (const [body, headers, status, error] of cases) {
        const answer = await postJson(`${url}/auth/purchase`, body, headers)
        expect({ body, status: answer.status }).toEqual({ body, status })
        expect(answer.body).toEqual({ error, detail: expect.any(String) })
      }
      expect((await fetchJson(`${url}/auth/purchase`)).status).toBe(405)
      expect(service.calls).toEqual([])
    })

    it("answers 502 {detail} in its own words when the payment service fails (its text to onError only), and opens nothing chargeable twice", async () => {
      const { auth, service, needPurchaseScene } = sellingApp()
      const reported: unknown[] = []
      const url = await host(auth, { onError: (e) => reported.push(e) })
      const scene = await needPurchaseScene()
      service.failWith = 'SYSTEM_ERROR connect ECONNREFUSED 10.0.3.17:443'
      const failed = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })
      expect(failed).toMatchObject({ status: 502, body: { detail: expect.stringMatching(/^The payment service/) } })
      expect(JSON.stringify(failed.body)).not.toMatch(/SYSTEM_ERROR|10\.0\.3\.17|ECONNREFUSED/)
      expect(reported).toEqual([expect.objectContaining({ code: 'payment_provider_failed', message: expect.stringContaining('10.0.3.17') })])
      service.failWith = null
      const retried = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })
      expect(retried.status).toBe(200)
      // The retry reused the order the failed call stored: one order, never two.
      expect(new Set(service.calls.map((c) => c.outTradeNo)).size).toBe(1)
    })
  })
}
