// need_purchase, then purchase paid through the WeChat Pay emulator (docs/behaviour.md B-order-1…7):
// a free trial of about a minute ends on the server's clock, the next sign-in answers need_purchase,
// and the purchase through its scene (event stream, or long poll behind a refusing proxy) or through
// a session resolves once the emulated phone has paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createScanAuthClient, type OrderCode, type TransportOption } from '../src/index'
import { startExample, type Example } from './support/example'
import { startProxy, type Proxy } from './support/proxy'

/** A free trial of about a minute (0.0007 days), ended by moving the server's clock 61 s ahead. */
const SHORT_TRIAL_DAYS = 0.0007
const AFTER_SHORT_TRIAL = 61_000

let example: Example
let refusing: Proxy
beforeAll(async () => {
  example = await startExample({ freeTrialDays: SHORT_TRIAL_DAYS })
  refusing = await startProxy(example.server.url, { refuse: 404 })
})
afterAll(async () => {
  await refusing?.close()
  await example?.server.close()
})

/** Signs `openid` in once (its free trial), then ends the trial on the server's clock. */
async function trialUsedUp(openid: string): Promise<string> {
  const client = createScanAuthClient({ baseUrl: example.baseUrl })
  example.clock.ahead = 0
  const first = await client.signIn({ deviceId: 'shop', onCode: (c) => void example.scan(c.sceneStr, openid) })
  if (first.status !== 'authorized') throw new Error(`the free trial did not start: ${first.status}`)
  example.clock.ahead = AFTER_SHORT_TRIAL
  return first.sessionToken
}

describe('purchase', () => {
  for (const [transport, behind] of [['auto', 'directly'], ['auto', 'behind a proxy refusing the stream'], ['poll', 'directly']] as Array<[TransportOption, string]>) {
    it(`need_purchase, then a scene purchase paid through the emulator is authorized (${transport}, ${behind})`, async () => {
      const openid = `o_buyer_${transport}_${behind.length}`
      await trialUsedUp(openid)
      const baseUrl = behind === 'directly' ? example.baseUrl : `${refusing.url}/auth`
      const client = createScanAuthClient({ baseUrl })
      const result = await client.signIn({ deviceId: 'shop', onCode: (c) => void example.scan(c.sceneStr, openid) })
      expect(result.status).toBe('need_purchase')
      const plans = await client.listPlans()
      const plan = plans[0]!
      const codes: OrderCode[] = []
      const paid = await client.purchase({
        sceneStr: result.sceneStr,
        plan: plan.id,
        transport,
        pollIntervalMs: 200,
        onCode(code) {
          codes.push(code)
          void example.pay(code.orderId)
        },
      })
      // The example sells on the phone too (payments.phone): the scanner got a link to buy there.
      expect(codes).toEqual([{ orderId: expect.stringMatching(/^SA/), codeUrl: expect.stringMatching(/^weixin:\/\/wxpay\//), amountFen: plan.amountFen, expiresAt: expect.any(String), phoneLink: true }])
      expect(paid).toMatchObject({ status: 'authorized', orderId: codes[0]?.orderId, sceneStr: result.sceneStr, sessionToken: expect.any(String), authorization: { type: plan.grant.type } })
      expect(await client.getSession(paid.sessionToken)).toMatchObject({ authorization: { type: plan.grant.type } })
    })
  }

  it('a session purchase resolves once the session shows the bought authorization', async () => {
    const token = await trialUsedUp('o_session_buyer')
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    expect(await client.getSession(token)).toMatchObject({ authorization: null })
    const [plan] = await client.listPlans()
    const codes: OrderCode[] = []
    const paid = await client.purchase({ sessionToken: token, plan: plan!.id, pollIntervalMs: 200, onCode: (code) => (codes.push(code), void example.pay(code.orderId)) })
    expect(paid).toMatchObject({ status: 'authorized', sceneStr: undefined, sessionToken: token, authorization: { type: plan!.grant.type } })
    // No scan, no link on a phone: a session buys at the device only.
    expect(codes).toMatchObject([{ phoneLink: false }])
  })

  it('onCode says phoneLink when the scanner got a link to buy on the phone; paid there, the scene purchase resolves authorized', async () => {
    const openid = 'o_phone_buyer'
    await trialUsedUp(openid)
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    let reply: Promise<string | null> = Promise.resolve(null)
    const result = await client.signIn({ deviceId: 'shop', onCode: (c) => void (reply = example.scanForReply(c.sceneStr, openid)) })
    expect(result.status).toBe('need_purchase')
    // The account's reply to the scan: "Buy on this phone", a link to the phone pages.
    const payUrl = /<a href="([^"]+)">Buy on this phone<\/a>/.exec((await reply) ?? '')?.[1]
    expect(payUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth\/m\/pay\?ticket=/)
    // A time pass at the device; the points on the phone, so that the result shows which was paid.
    const plans = await client.listPlans()
    const native = plans.find((p) => p.grant.type === 'time')
    const onPhone = plans.find((p) => p.grant.type === 'points')
    const codes: OrderCode[] = []
    let phoneOrder: Promise<string> | undefined
    const paid = await client.purchase({
      sceneStr: result.sceneStr,
      plan: native!.id,
      pollIntervalMs: 200,
      onCode(code) {
        codes.push(code)
        // The device shows its code; the person pays another plan on the phone that scanned instead.
        phoneOrder = example.payOnPhone(payUrl!, openid, onPhone!.id)
      },
    })
    expect(codes).toEqual([expect.objectContaining({ codeUrl: expect.stringMatching(/^weixin:\/\/wxpay\//), amountFen: native!.amountFen, phoneLink: true })])
    const phoneOrderId = await phoneOrder!
    expect(phoneOrderId).not.toBe(codes[0]!.orderId)
    // Authorized by what the phone bought; the device's own order was replaced (closed), never paid.
    expect(paid).toMatchObject({ status: 'authorized', sceneStr: result.sceneStr, sessionToken: expect.any(String), authorization: { type: 'points' } })
    expect((await example.server.wiring.auth.getOrder(phoneOrderId))?.status).toBe('paid')
    expect((await example.server.wiring.auth.getOrder(codes[0]!.orderId))?.status).toBe('closed')
  })

  it('a session purchase of a plan that only queues behind the current authorization resolves once the order is paid', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    example.clock.ahead = 0
    const first = await client.signIn({ deviceId: 'shop', onCode: (c) => void example.scan(c.sceneStr, 'o_queue_buyer') })
    if (first.status !== 'authorized') throw new Error(`the free trial did not start: ${first.status}`)
    const [plan] = await client.listPlans()
    const paid = await client.purchase({ sessionToken: first.sessionToken, plan: plan!.id, pollIntervalMs: 200, onCode: (code) => void example.pay(code.orderId) })
    // The trial is still the current authorization; the bought plan waits its turn behind it.
    expect(paid).toMatchObject({ status: 'authorized', sessionToken: first.sessionToken, authorization: first.authorization })
  })

  it('rejects http 409 for a scene no scan has bound, and a TypeError without a buyer', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    let sceneStr = ''
    const controller = new AbortController()
    await client
      .signIn({ deviceId: 'shop', signal: controller.signal, onCode: (c) => ((sceneStr = c.sceneStr), controller.abort()) })
      .catch(() => {})
    const [plan] = await client.listPlans()
    await expect(client.purchase({ sceneStr, plan: plan!.id, onCode: () => {} })).rejects.toMatchObject({ code: 'http', status: 409 })
    await expect(client.purchase({ plan: plan!.id, onCode: () => {} } as never)).rejects.toThrow(TypeError)
  })
})
