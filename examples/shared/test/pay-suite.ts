/**
 * Selling access in the example server, the same for Express and Koa: a scan answers
 * `need_purchase`, the device lists the plans, buys one, the phone pays, and the device's event
 * stream reports `authorized` (docs/behaviour.md B-order-1…10). With the WeChat Pay emulator
 * in-process, and with WeChat Pay "real": an emulator this test starts itself, reached only through
 * the `WECHATPAY_*` variables and key files, as a merchant's WeChat Pay would be. Real sockets, real
 * stores, no stand-ins.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { closedPort, createPendingScene, eventually, fetchJson, openEventStream, postJson, type EventStream } from '@scanauth/testkit'
import { startWechatEmulator, startWechatPayEmulator, type WechatEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { signMessage } from '@scanauth/wechat-pay'
import { configFromEnv, type ExampleConfig } from '../src/config'
import type { RunningServer } from '../src/serve'
import type { StartServer } from './app-suite'
import { buyLinkOf, cashierParameters, cashierPay, csrfOf, phoneGet, phonePost, type Phone } from './phone-support'

/** A free trial of about a minute: the clock is moved past it rather than waited out. */
const SHORT_TRIAL_DAYS = 0.0007
const PAST_TRIAL_MS = 61_000

/** The default catalog as `GET /auth/plans` answers it. */
const DEFAULT_CATALOG = [
  { id: 'days-30', description: '30 days of access', amount_fen: 1990, grant: { type: 'time', days: 30 } },
  { id: 'days-7', description: '7 days of access', amount_fen: 690, grant: { type: 'time', days: 7 } },
  { id: 'points-100', description: '100 points', amount_fen: 990, grant: { type: 'points', points: 100 } },
]

/** The next `status` event of a stream, parsed; heartbeats are skipped. */
async function nextStatus(stream: EventStream): Promise<Record<string, unknown> | undefined> {
  for (;;) {
    const message = await stream.next()
    if (message === undefined) return undefined
    if (message.event === 'status' && message.data !== undefined) return JSON.parse(message.data) as Record<string, unknown>
  }
}

/** Registers the purchase suite for `framework`, run against its `startServer`. */
export function describeExamplePayments(framework: 'express' | 'koa', startServer: StartServer): void {
  const running: RunningServer[] = []
  const emulators: WechatPayEmulator[] = []
  const streams: EventStream[] = []
  const temp: string[] = []
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.abort()
    await Promise.all(running.splice(0).map((r) => r.close()))
    await Promise.all(emulators.splice(0).map((e) => e.close()))
    for (const dir of temp.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** A server with the short trial on a clock the test moves (`clock.ahead` ms ahead of real time). */
  async function start(overrides: Partial<ExampleConfig> = {}) {
    const lines: string[] = []
    const clock = { ahead: 0 }
    const server = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      wechat: { kind: 'emulator' },
      freeTrialDays: SHORT_TRIAL_DAYS,
      now: () => Date.now() + clock.ahead,
      log: (line) => lines.push(line),
      ...overrides,
    })
    running.push(server)
    return { server, url: server.url, lines, log: () => lines.join('\n'), clock }
  }

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), `scanauth-pay-${framework}-`))
    temp.push(dir)
    return dir
  }

  /**
   * The free trial used up, then a new code scanned by the same phone: `need_purchase`, which ends
   * the scene's event stream while no order is open. Answers that scene and the text of the reply to
   * its scan. `wechat` is who scans: the server's in-process emulator, or a "real" account's.
   */
  async function needPurchase(
    started: { url: string; clock: { ahead: number }; server: RunningServer },
    openid: string,
    wechat: Pick<WechatEmulator, 'scan'> = started.server.wiring.emulator!,
  ): Promise<{ scene: string; reply: string | null }> {
    const { url, clock } = started
    const first = (await createPendingScene(url, `${framework}-buyer`)).scene_str as string
    expect((await wechat.scan({ sceneStr: first, openid })).status).toBe(200)
    expect((await fetchJson(`${url}/auth/status?scene=${first}`)).body).toMatchObject({ status: 'authorized' })
    clock.ahead += PAST_TRIAL_MS
    const scene = (await createPendingScene(url, `${framework}-buyer`)).scene_str as string
    const push = await wechat.scan({ sceneStr: scene, openid })
    expect(push.status).toBe(200)
    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })
    const before = await events(url, scene)
    expect(await nextStatus(before)).toEqual({ status: 'need_purchase' })
    expect(await before.next()).toBeUndefined()
    return { scene, reply: push.reply?.Content ?? null }
  }

  /** The scene's event stream, opened. */
  async function events(url: string, scene: string): Promise<EventStream> {
    const stream = await openEventStream(`${url}/auth/events?scene=${scene}`)
    streams.push(stream)
    expect(stream.response.status).toBe(200)
    return stream
  }

  /**
   * `POST /auth/purchase {scene, plan}`, expected to open an order; `phoneLink`: the scanner got a
   * link to buy on the phone (the example sells there whenever both WeChat and WeChat Pay are emulated).
   */
  async function purchase(url: string, scene: string, plan: string, phoneLink = true) {
    const res = await postJson(`${url}/auth/purchase`, { scene, plan })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const expected = { order_id: expect.stringMatching(/^SA[0-9A-F]{26}$/), code_url: expect.stringMatching(/^weixin:\/\/wxpay\//), amount_fen: expect.any(Number), expires_at: expect.any(String) }
    expect(res.body).toStrictEqual(phoneLink ? { ...expected, phone_link: true } : expected)
    return res.body as { order_id: string; code_url: string; amount_fen: number; expires_at: string }
  }

  describe(`the ${framework} example selling access`, () => {
    it('with the WeChat Pay emulator: plans, purchase, the pay code, /demo/pay, and the event stream reports authorized', async () => {
      const started = await start()
      const { server, url, log } = started
      expect(log()).toMatch(/WeChat Pay emulator at http:\/\/127\.0\.0\.1:\d+ \(merchant 1900000001\): 3 plans \(days-30, days-7, points-100\), reconcile every 1 min/)
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'memory', emulator: true, demo_openid: 'o_emulator_demo_user', pay_emulator: true, phone_pay: true, confirm: 'scan', reminders: false })
      expect((await fetchJson(`${url}/auth/plans`)).body).toEqual(DEFAULT_CATALOG)

      const { scene } = await needPurchase(started, 'phone-buyer')
      const order = await purchase(url, scene, 'days-30')
      // With the order open, the stream goes on past need_purchase, waiting for the payment (B-order-7).
      const stream = await events(url, scene)
      expect(await nextStatus(stream)).toEqual({ status: 'need_purchase' })
      expect(order.amount_fen).toBe(1990)
      // The deadline is core's default window, 15 minutes on the service's clock.
      expect(Date.parse(order.expires_at) - (Date.now() + started.clock.ahead)).toBeGreaterThan(14 * 60_000)
      expect(log()).toContain(`order ${order.order_id} for scene ${scene}: plan days-30, 1990 fen`)

      // The pay code as the page draws it.
      const image = await fetch(`${url}/demo/qr.svg?text=${encodeURIComponent(order.code_url)}`)
      expect(image.status).toBe(200)
      expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
      expect(image.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await image.text()).toMatch(/^<svg[^>]*viewBox="0 0 \d+ \d+"[\s\S]*<path[\s\S]*<\/svg>\s*$/)

      const paid = await postJson(`${url}/demo/pay`, { order_id: order.order_id })
      expect(paid).toMatchObject({ status: 200, body: { order_id: order.order_id, trade_state: 'SUCCESS', transaction_id: expect.any(String) } })
      const authorized = await nextStatus(stream)
      expect(authorized).toMatchObject({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'time', end_at: expect.any(String) } })
      expect(await stream.next()).toBeUndefined() // final: the stream ends
      const endAt = Date.parse((authorized!.authorization as { end_at: string }).end_at)
      expect(endAt - (Date.now() + started.clock.ahead)).toBeGreaterThan(30 * 86_400_000 - 60_000)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized', session_token: authorized!.session_token })

      const stored = await server.wiring.auth.getOrder(order.order_id)
      expect(stored).toMatchObject({ status: 'paid', planId: 'days-30', sceneStr: scene, transactionId: paid.body.transaction_id })
      await eventually('the paid order in the log', () => log().includes(`order ${order.order_id} paid (transaction ${paid.body.transaction_id}): plan days-30`))
      await server.wiring.payEmulator!.settled()
      expect(server.wiring.payEmulator!.notifications().filter((n) => n.kind === 'real').map((n) => [n.state, n.url])).toEqual([['accepted', `${url}/wechatpay/notify`]])

      // Paid once: a second payment is refused with the emulator's reason, nothing granted twice.
      expect(await postJson(`${url}/demo/pay`, { order_id: order.order_id })).toMatchObject({ status: 409, body: { code: 'order_paid', detail: expect.any(String) } })
      const grants = (await server.wiring.auth.listLedger({ openid: 'phone-buyer' })).entries.filter((e) => e.kind === 'grant' && e.source === 'purchase')
      expect(grants).toHaveLength(1)
    })

    it('answers /demo/pay and /demo/qr.svg mistakes with {detail}, and a purchase the core refuses with its {detail}', async () => {
      const started = await start()
      const { url } = started
      for (const body of [{}, { order_id: 42 }, { order_id: 'short' }, { order_id: 'has space in it' }, ['SA0123456789']]) {
        expect(await postJson(`${url}/demo/pay`, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { detail: expect.any(String) } })
      }
      expect(await postJson(`${url}/demo/pay`, { order_id: `SA${'0'.repeat(26)}` })).toMatchObject({ status: 404, body: { code: 'unknown_order' } })
      for (const text of ['', 'https://example.com/', 'weixin://wxpay/', `weixin://wxpay/${'a'.repeat(241)}`, 'weixin://wxpay/a b']) {
        const res = await fetchJson(`${url}/demo/qr.svg?text=${encodeURIComponent(text)}`)
        expect(res, text).toMatchObject({ status: 400, body: { detail: expect.any(String) } })
      }
      expect((await fetchJson(`${url}/demo/qr.svg`)).status).toBe(400)

      // A scene no scan has bound, an unknown plan: core's answers, with nothing opened.
      const pending = (await createPendingScene(url, 'not-scanned')).scene_str as string
      expect(await postJson(`${url}/auth/purchase`, { scene: pending, plan: 'days-30' })).toMatchObject({ status: 409, body: { detail: expect.any(String) } })
      const { scene } = await needPurchase(started, 'phone-mistakes')
      expect(await postJson(`${url}/auth/purchase`, { scene, plan: 'days-999' })).toMatchObject({ status: 404, body: { detail: expect.any(String) } })
      expect(await started.server.wiring.auth.openOrderOfScene(scene)).toBeNull()

      // An order the deadline has passed can no longer be paid: 410 with the emulator's reason.
      const order = await purchase(url, scene, 'days-7')
      started.clock.ahead += 16 * 60_000
      expect(await postJson(`${url}/demo/pay`, { order_id: order.order_id })).toMatchObject({ status: 410, body: { code: 'order_expired' } })
    })

    it('refuses a notification that is not signed by WeChat Pay, with 4xx, and changes nothing', async () => {
      const started = await start()
      const { server, url, log } = started
      const { scene } = await needPurchase(started, 'phone-forged')
      const order = await purchase(url, scene, 'days-30')
      const emulator = server.wiring.payEmulator!
      const [serial] = Object.keys(emulator.verificationKeys)
      // What a forger would send: a plausible body claiming the order is paid.
      const body = JSON.stringify({
        id: 'EV-forged',
        create_time: new Date().toISOString(),
        resource_type: 'encrypt-resource',
        event_type: 'TRANSACTION.SUCCESS',
        summary: '支付成功',
        resource: { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext: randomBytes(64).toString('base64'), associated_data: 'transaction', nonce: 'abcdefabcdef' },
      })
      const timestamp = String(Math.floor((Date.now() + started.clock.ahead) / 1000))
      const nonce = randomBytes(16).toString('hex')
      const { privateKey: forgersKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
      const signedByForger = signMessage(`${timestamp}\n${nonce}\n${body}\n`, forgersKey)
      const attempts: Array<[string, Record<string, string>]> = [
        ['unsigned', {}],
        ['a made-up signature', { 'wechatpay-timestamp': timestamp, 'wechatpay-nonce': nonce, 'wechatpay-serial': serial!, 'wechatpay-signature': randomBytes(256).toString('base64') }],
        ["signed with another key under WeChat Pay's serial", { 'wechatpay-timestamp': timestamp, 'wechatpay-nonce': nonce, 'wechatpay-serial': serial!, 'wechatpay-signature': signedByForger }],
        ['signed under an unknown serial', { 'wechatpay-timestamp': timestamp, 'wechatpay-nonce': nonce, 'wechatpay-serial': 'PUB_KEY_ID_0000', 'wechatpay-signature': signedByForger }],
      ]
      for (const [what, headers] of attempts) {
        const res = await fetch(`${url}/wechatpay/notify`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
        expect(res.status, what).toBeGreaterThanOrEqual(400)
        expect(res.status, what).toBeLessThan(500)
        expect(await res.json(), what).toMatchObject({ code: 'FAIL' })
      }
      const wrongMethod = await fetch(`${url}/wechatpay/notify`)
      expect(wrongMethod.status).toBe(405)
      await wrongMethod.arrayBuffer()

      expect(await server.wiring.auth.getOrder(order.order_id)).toMatchObject({ status: 'open', transactionId: null })
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })
      expect((await server.wiring.auth.listLedger({ openid: 'phone-forged' })).entries.filter((e) => e.source === 'purchase')).toEqual([])
      expect(log()).toMatch(/WeChat Pay notification answered 401: /)
      // The order can still be paid for real.
      expect((await postJson(`${url}/demo/pay`, { order_id: order.order_id })).status).toBe(200)
      await eventually('the real payment applied', async () => (await server.wiring.auth.getOrder(order.order_id))?.status === 'paid')
    })

    it('with WeChat Pay "real" (WECHATPAY_* pointing at an emulator of its own) and SQLite: purchase, pay, authorized', async () => {
      const clock = { ahead: 0 }
      const now = () => Date.now() + clock.ahead
      const pay = await startWechatPayEmulator({ mchid: '1230000109', appid: 'wxd678efh567hg6787', now })
      emulators.push(pay)
      const dir = tempDir()
      writeFileSync(join(dir, 'apiclient_key.pem'), pay.merchantKey!.privateKeyPem)
      writeFileSync(join(dir, 'pub_key.pem'), pay.verificationKeys[pay.platformSerial]!)
      const config = configFromEnv({
        PORT: '0',
        SCANAUTH_STORE: 'sqlite',
        SCANAUTH_SQLITE_FILE: join(dir, 'scanauth.sqlite'),
        SCANAUTH_FREE_TRIAL_DAYS: String(SHORT_TRIAL_DAYS),
        WECHATPAY_MCHID: '1230000109',
        WECHATPAY_APPID: 'wxd678efh567hg6787',
        WECHATPAY_API_V3_KEY: pay.apiV3Key,
        WECHATPAY_PRIVATE_KEY_FILE: join(dir, 'apiclient_key.pem'),
        WECHATPAY_CERT_SERIAL: pay.merchantKey!.serial,
        WECHATPAY_PUBLIC_KEY_FILE: join(dir, 'pub_key.pem'),
        WECHATPAY_PUBLIC_KEY_ID: pay.platformSerial,
        WECHATPAY_API_BASE: pay.url,
        SCANAUTH_PLANS: JSON.stringify([{ id: 'month', description: '一个月', amount_fen: 2500, grant: { type: 'time', days: 31 } }]),
      })
      const lines: string[] = []
      const server = await startServer({ ...config, now, log: (line) => lines.push(line) })
      running.push(server)
      const url = server.url
      const log = () => lines.join('\n')
      expect(log()).toContain(`WeChat Pay merchant 1230000109 (AppID wxd678efh567hg6787) via ${pay.url}: 1 plans (month), reconcile every 1 min`)
      expect(log()).toContain(`WeChat Pay notifications to ${url}/wechatpay/notify (real WeChat Pay needs a public https URL: set WECHATPAY_NOTIFY_URL)`)
      expect(log()).toContain('store sqlite')
      expect(server.wiring.payEmulator).toBeNull()
      // Real WeChat Pay: no demo routes (demo-routes-suite.ts), so the test's phone is the emulator's own.
      expect((await fetchJson(`${url}/demo/config`)).status).toBe(404)
      expect((await fetchJson(`${url}/auth/plans`)).body).toEqual([{ id: 'month', description: '一个月', amount_fen: 2500, grant: { type: 'time', days: 31 } }])

      const { scene, reply } = await needPurchase({ server, url, clock }, 'phone-real')
      // Half emulated, no paying on the phone: the emulated account's openids are no users of the merchant's AppID.
      expect(log()).toContain('no paying on the phone (WeChat and WeChat Pay must both be real, or both emulated)')
      expect(buyLinkOf(reply)).toBeUndefined()
      const order = await purchase(url, scene, 'month', false)
      const stream = await events(url, scene)
      expect(await nextStatus(stream)).toEqual({ status: 'need_purchase' })
      expect(order.amount_fen).toBe(2500)
      // The merchant's WeChat Pay holds the order, with our notify URL; the demo cannot pay it.
      expect(pay.orders().map((o) => [o.outTradeNo, o.total, o.notifyUrl, o.codeUrl])).toEqual([[order.order_id, 2500, `${url}/wechatpay/notify`, order.code_url]])
      expect((await postJson(`${url}/demo/pay`, { order_id: order.order_id })).status).toBe(404)

      await pay.pay({ codeUrl: order.code_url, openid: 'o_real_payer' })
      expect(await nextStatus(stream)).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
      await pay.settled()
      expect(pay.notifications().map((n) => [n.kind, n.state])).toEqual([['real', 'accepted']])
      expect(await server.wiring.auth.getOrder(order.order_id)).toMatchObject({ status: 'paid', planId: 'month' })
    })

    it('grants a payment whose notification was lost through its reconciler', async () => {
      const clock = { ahead: 0 }
      const now = () => Date.now() + clock.ahead
      const pay = await startWechatPayEmulator({ mchid: '1230000109', appid: 'wx_reconcile_app', now })
      emulators.push(pay)
      const dir = tempDir()
      writeFileSync(join(dir, 'key.pem'), pay.merchantKey!.privateKeyPem)
      writeFileSync(join(dir, 'pub.pem'), pay.verificationKeys[pay.platformSerial]!)
      // Notifications go to a port nobody listens on: only asking WeChat Pay finds the payment.
      const lost = `http://127.0.0.1:${await closedPort()}/wechatpay/notify`
      const config = configFromEnv({
        WECHATPAY_MCHID: '1230000109',
        WECHATPAY_APPID: 'wx_reconcile_app',
        WECHATPAY_API_V3_KEY: pay.apiV3Key,
        WECHATPAY_PRIVATE_KEY_FILE: join(dir, 'key.pem'),
        WECHATPAY_CERT_SERIAL: pay.merchantKey!.serial,
        WECHATPAY_PUBLIC_KEY_FILE: join(dir, 'pub.pem'),
        WECHATPAY_PUBLIC_KEY_ID: pay.platformSerial,
        WECHATPAY_API_BASE: pay.url,
        WECHATPAY_NOTIFY_URL: lost,
      })
      // The server on the emulator's clock (not the one `start` would make), so both move together.
      const started = await start({ wechatPay: config.wechatPay, reconcileEveryMs: 25, now })
      const moveOn = (ms: number) => {
        clock.ahead += ms
      }
      expect(started.log()).toContain(`WeChat Pay notifications to ${lost} (real WeChat Pay needs a public https URL: set WECHATPAY_NOTIFY_URL to one)`)
      const { server, url } = started
      const first = (await createPendingScene(url, 'reconcile')).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: first, openid: 'phone-reconcile' })).status).toBe(200)
      moveOn(PAST_TRIAL_MS)
      const scene = (await createPendingScene(url, 'reconcile')).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'phone-reconcile' })).status).toBe(200)
      const order = await purchase(url, scene, 'days-30', false)
      await pay.pay({ outTradeNo: order.order_id })
      // The reconciler leaves orders younger than a minute alone (a payment may be in flight).
      moveOn(61_000)
      await eventually('the reconciler granting the order', async () => (await server.wiring.auth.getOrder(order.order_id))?.status === 'paid')
      await eventually('the reconciliation in the log', () => /reconcile: \d+ orders checked, 1 granted/.test(started.log()))
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })
      expect(pay.notifications().every((n) => n.state !== 'accepted')).toBe(true)
    })

    it('fully emulated, sells on the phone that scanned: the reply links to /auth/m/pay, the cashier loads the emulator\'s bridge, and the device wakes', async () => {
      const started = await start()
      const { server, url, log } = started
      const payEmulator = server.wiring.payEmulator!
      expect(log()).toMatch(/3 plans \(days-30, days-7, points-100\), reconcile every 1 min, paying on the phone \(the emulator's WeixinJSBridge stand-in\)/)
      const { scene, reply } = await needPurchase(started, 'phone-jsapi')
      const link = buyLinkOf(reply)
      expect(link).toMatch(new RegExp(`^${url.replaceAll('.', '\\.')}/auth/m/pay\\?ticket=[\\w-]{43}$`))
      // The device keeps its Native code, and learns that the phone got a link.
      const native = await purchase(url, scene, 'days-30')

      const phone: Phone = { openid: 'phone-jsapi', wechatUrl: server.wiring.emulator!.url, serverUrl: url }
      const plans = await phoneGet(phone, link!)
      expect(plans.status, plans.text).toBe(200)
      expect(plans.url).toMatch(/\/auth\/m\/pay\?ticket=.*&code=.*&state=/) // back from the emulated OAuth
      expect(plans.text).toContain('<h1>Buy time or points</h1>')
      for (const id of ['days-30', 'days-7', 'points-100']) expect(plans.text).toContain(`name="plan" value="${id}"`)
      const cashier = await phonePost(phone, plans, 'pay', { csrf: csrfOf(plans), plan: 'points-100' })
      expect(cashier.status, cashier.text).toBe(200)
      // Only with the emulators: the WeixinJSBridge stand-in, allowed by the page's CSP.
      expect(cashier.text).toContain(`<script src="${payEmulator.jsapiBridgeUrl}"></script>`)
      expect(cashier.headers.get('content-security-policy')).toContain(`connect-src ${new URL(payEmulator.url).origin}`)
      const parameters = cashierParameters(cashier)
      expect(parameters).toMatchObject({ appId: payEmulator.appid, signType: 'RSA', package: expect.stringMatching(/^prepay_id=/) })

      const stream = await events(url, scene)
      expect(await nextStatus(stream)).toEqual({ status: 'need_purchase' })
      expect(await cashierPay(payEmulator.url, 'phone-jsapi', parameters)).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
      expect(await nextStatus(stream)).toMatchObject({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'points', remaining_points: 100 } })
      const jsapi = payEmulator.orders().find((o) => o.tradeType === 'JSAPI')!
      const order = await phoneGet(phone, new URL(`order?id=${jsapi.outTradeNo}`, cashier.url).href)
      expect(order.status, order.text).toBe(200)
      expect(order.text).toContain('<h1>Paid</h1>')
      // One device, one payable order: the phone's replaced the device's code.
      expect(await server.wiring.auth.getOrder(native.order_id)).toMatchObject({ status: 'closed' })
      expect(await server.wiring.auth.getOrder(jsapi.outTradeNo)).toMatchObject({ status: 'paid', planId: 'points-100', sceneStr: scene })
      expect(log()).toContain(`order ${jsapi.outTradeNo} on the phone for device ${framework}-buyer: 100 points, 990 fen`)
    })

    it('real WeChat and WeChat Pay sell on the phone once SCANAUTH_PUBLIC_URL is set, without the emulator\'s bridge; without it, not at all', async () => {
      const clock = { ahead: 0 }
      const now = () => Date.now() + clock.ahead
      const account = await startWechatEmulator({ port: 0, host: '127.0.0.1', appId: 'wx_phone_pay_app', appSecret: 'real-secret', token: 'real-token', now })
      const pay = await startWechatPayEmulator({ mchid: '1230000109', appid: 'wx_phone_pay_app', now })
      emulators.push(pay)
      const dir = tempDir()
      writeFileSync(join(dir, 'apiclient_key.pem'), pay.merchantKey!.privateKeyPem)
      writeFileSync(join(dir, 'pub_key.pem'), pay.verificationKeys[pay.platformSerial]!)
      const env = {
        PORT: '0',
        SCANAUTH_STORE: 'memory',
        SCANAUTH_FREE_TRIAL_DAYS: String(SHORT_TRIAL_DAYS),
        WECHAT_APP_ID: 'wx_phone_pay_app',
        WECHAT_APP_SECRET: 'real-secret',
        WECHAT_TOKEN: 'real-token',
        WECHAT_API_BASE: account.url,
        WECHATPAY_MCHID: '1230000109',
        WECHATPAY_API_V3_KEY: pay.apiV3Key,
        WECHATPAY_PRIVATE_KEY_FILE: join(dir, 'apiclient_key.pem'),
        WECHATPAY_CERT_SERIAL: pay.merchantKey!.serial,
        WECHATPAY_PUBLIC_KEY_FILE: join(dir, 'pub_key.pem'),
        WECHATPAY_PUBLIC_KEY_ID: pay.platformSerial,
        WECHATPAY_API_BASE: pay.url,
      }
      const serve = async (more: Record<string, string>) => {
        const lines: string[] = []
        const server = await startServer({ ...configFromEnv({ ...env, ...more }), now, log: (line) => lines.push(line) })
        running.push(server)
        await account.setCallbackUrl(`${server.url}/wechat/callback`)
        return { server, url: server.url, clock, log: () => lines.join('\n') }
      }
      try {
        // No public address: the scanner gets no link (a phone cannot open 127.0.0.1), and the log says what to set.
        const hidden = await serve({})
        expect(hidden.log()).toContain('no paying on the phone (set SCANAUTH_PUBLIC_URL, the public https address, to link the scanner to it)')
        const plain = await needPurchase(hidden, 'o_real_no_link', account)
        expect(buyLinkOf(plain.reply)).toBeUndefined()
        await purchase(hidden.url, plain.scene, 'days-30', false)
        await hidden.server.close()

        // Behind a proxy at https://pay.example.com: the link names it; WeChat's OAuth (open.weixin.qq.com) and WeChat Pay are real.
        const publicUrl = 'https://pay.example.com'
        const shop = await serve({ SCANAUTH_PUBLIC_URL: publicUrl })
        expect(shop.log()).toContain(`paying on the phone at ${publicUrl}/auth/m/`)
        expect(shop.server.wiring.payEmulator).toBeNull()
        const { scene, reply } = await needPurchase(shop, 'o_real_buyer', account)
        const link = buyLinkOf(reply)
        expect(link).toMatch(/^https:\/\/pay\.example\.com\/auth\/m\/pay\?ticket=[\w-]{43}$/)
        await purchase(shop.url, scene, 'days-30')
        const phone: Phone = { openid: 'o_real_buyer', wechatUrl: account.url, serverUrl: shop.url, publicUrl }
        const first = await fetch(`${shop.url}${link!.slice(publicUrl.length)}`, { redirect: 'manual', headers: { 'user-agent': 'MicroMessenger/8.0.50' } })
        await first.arrayBuffer()
        expect(first.headers.get('location')).toMatch(/^https:\/\/open\.weixin\.qq\.com\/connect\/oauth2\/authorize\?appid=wx_phone_pay_app&redirect_uri=https%3A%2F%2Fpay\.example\.com%2Fauth%2Fm%2Fpay/)
        const plans = await phoneGet(phone, link!)
        expect(plans.status, plans.text).toBe(200)
        const cashier = await phonePost(phone, plans, 'pay', { csrf: csrfOf(plans), plan: 'days-7' })
        expect(cashier.status, cashier.text).toBe(200)
        // Real WeChat's browser has its own WeixinJSBridge: no stand-in, nothing to connect to.
        expect(cashier.text).not.toContain('jsapi-bridge.js')
        expect(cashier.headers.get('content-security-policy')).toContain("connect-src 'none'")
        const parameters = cashierParameters(cashier)
        expect(parameters.appId).toBe('wx_phone_pay_app')
        expect(pay.orders().filter((o) => o.tradeType === 'JSAPI').map((o) => [o.payer, o.total, o.notifyUrl])).toEqual([['o_real_buyer', 690, `${shop.url}/wechatpay/notify`]])
        expect(await cashierPay(pay.url, 'o_real_buyer', parameters)).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
        const jsapi = pay.orders().find((o) => o.tradeType === 'JSAPI')!
        const order = await phoneGet(phone, new URL(`order?id=${jsapi.outTradeNo}`, cashier.url).href)
        expect(order.status, order.text).toBe(200)
        expect(order.text).toContain('<h1>Paid</h1>')
        expect((await fetchJson(`${shop.url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
      } finally {
        await account.close()
      }
    })
  })
}
