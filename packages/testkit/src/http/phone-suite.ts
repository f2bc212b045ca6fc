/**
 * Paying on the phone that scanned (`payments.phone`, docs/behaviour.md B-phone-1…10) over a framework
 * adapter's real routes: the phone's browser (WeChat's user agent, redirects not followed) from the
 * link of a `need_purchase` scan through WeChat OAuth to the plans page, its form to the cashier page,
 * the order page that asks WeChat Pay, and the device's poll that ends `authorized`; every refusal a
 * page with its 4xx and its code in `x-scanauth-error`. Part of {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth } from '@scanauth/core'
import { ManualClock } from '../clock'
import { TestPaymentService } from '../payment-service'
import { RecordingQrProvider } from '../qr'
import { TEST_PLANS } from '../suites/orders'
import { TEST_AUTHORIZE_BASE, TestWebOAuth } from '../web-oauth'
import { fetchJson } from './fetch-json'
import type { HttpRoutesHost } from './host'

const DAY = 24 * 3600 * 1000

/** WeChat's in-app browser on an iPhone: the only browser with a cashier (B-phone-3). */
const WECHAT_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.50(0x1800323c) NetType/WIFI Language/en'
/** A desktop browser: told to open the link in WeChat. */
const DESKTOP_UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'

/** An order id no order has. */
const UNKNOWN_ORDER = `SA${'0'.repeat(26)}`

/** A selling service with `payments.phone` on a MemoryStore, served by the host; its phone pages' address is the host's own. */
async function phoneApp(host: HttpRoutesHost) {
  const clock = new ManualClock()
  const service = new TestPaymentService(clock.now)
  const oauth = new TestWebOAuth()
  // The host's address is known only once it listens: the option is a function, asked each time.
  let pages = ''
  const auth: ScanAuth = createScanAuth({
    store: new MemoryStore(),
    qr: new RecordingQrProvider(),
    now: clock.now,
    payments: { provider: service, plans: TEST_PLANS, phone: { url: () => pages, oauth } },
  })
  const url = await host(auth, {})
  pages = `${url}/auth/m/`
  const trialsOver = new Set<string>()

  /** A scene scanned by `openid` once their free trial is over: need_purchase, with the link of the reply. */
  async function needPurchaseScan(openid = 'alice', deviceId = 'tv-livingroom'): Promise<{ scene: string; payUrl: string; ticket: string }> {
    if (!trialsOver.has(openid)) {
      const trial = await auth.createScene({ deviceId: 'trial-device' })
      await auth.handleScan({ sceneStr: trial.sceneStr, openid })
      clock.advance(8 * DAY)
      trialsOver.add(openid)
    }
    const { sceneStr } = await auth.createScene({ deviceId })
    const scan = await auth.handleScan({ sceneStr, openid })
    expect(scan).toMatchObject({ result: 'need_purchase', payUrl: expect.stringMatching(/\/auth\/m\/pay\?ticket=[A-Za-z0-9_-]{43}$/) })
    const payUrl = (scan as { payUrl: string }).payUrl
    expect(payUrl.startsWith(`${url}/auth/m/pay?ticket=`)).toBe(true)
    return { scene: sceneStr, payUrl, ticket: new URL(payUrl).searchParams.get('ticket') as string }
  }

  return { clock, service, oauth, auth, url, needPurchaseScan }
}

type PhoneApp = Awaited<ReturnType<typeof phoneApp>>

/** A GET as the phone's browser sends it: WeChat's user agent (unless told otherwise), redirects not followed. */
function browse(address: string, userAgent = WECHAT_UA, method = 'GET'): Promise<Response> {
  return fetch(address, { method, redirect: 'manual', headers: { 'user-agent': userAgent } })
}

/**
 * The first visit of a page: the 302 to WeChat OAuth. Answers the address WeChat sends the browser
 * back to, without the code: `redirect_uri` with the `state` it was given.
 */
async function toOAuth(address: string): Promise<URL> {
  const first = await browse(address)
  expect(first.status).toBe(302)
  expect(first.headers.get('cache-control')).toBe('no-store')
  expect(first.headers.get('referrer-policy')).toBe('no-referrer')
  await first.body?.cancel()
  const location = new URL(first.headers.get('location') as string)
  expect(`${location.origin}${location.pathname}`).toBe(TEST_AUTHORIZE_BASE)
  expect(location.searchParams.get('scope')).toBe('snsapi_base')
  const back = new URL(location.searchParams.get('redirect_uri') as string)
  // WeChat comes back to the page itself, its query (ticket, id) kept.
  expect(`${back.origin}${back.pathname}`).toBe(new URL(address).origin + new URL(address).pathname)
  back.searchParams.set('state', location.searchParams.get('state') as string)
  return back
}

/** What the phone does: open `address`, go through WeChat OAuth as `openid`, land on the page. */
async function openAs(app: PhoneApp, address: string, openid: string): Promise<Response> {
  const back = await toOAuth(address)
  back.searchParams.set('code', app.oauth.issueCode(openid))
  return browse(back.toString())
}

/** The plans page's forms: where they post, their CSRF token, and the plan of each button. */
function plansOf(html: string): { actions: string[]; csrf: string; plans: string[] } {
  const actions = [...html.matchAll(/<form class="plan" method="post" action="([^"]*)">/g)].map((m) => m[1] as string)
  const tokens = [...html.matchAll(/<input type="hidden" name="csrf" value="([^"]*)">/g)].map((m) => m[1] as string)
  const plans = [...html.matchAll(/<button type="submit" name="plan" value="([^"]*)"/g)].map((m) => m[1] as string)
  // One token for the whole page: every form carries it.
  expect(new Set(tokens).size).toBe(1)
  return { actions, csrf: tokens[0] as string, plans }
}

/** Posts a plans page's form as the browser would (form-urlencoded). */
function postPlan(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${url}/auth/m/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': WECHAT_UA },
    body: new URLSearchParams(fields).toString(),
  })
}

/** The headers of every phone page (B-phone-9). */
function expectPageHeaders(response: Response): void {
  expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(response.headers.get('cache-control')).toBe('no-store')
  expect(response.headers.get('x-frame-options')).toBe('DENY')
  expect(response.headers.get('referrer-policy')).toBe('no-referrer')
  expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
}

/** A refusal: a page for people, its status, and its code for programs (B-wire-7). */
async function expectRefusal(response: Response, status: number, code: string): Promise<string> {
  expect(response.status).toBe(status)
  expectPageHeaders(response)
  expect(response.headers.get('x-scanauth-error')).toBe(code)
  const html = await response.text()
  expect(html).toContain('Nothing was changed.')
  // No script on a refusal: the CSP allows none.
  expect(html).not.toContain('<script')
  return html
}

/** A page that is shown: 200, the page headers, no error code. */
async function expectPage(response: Response): Promise<string> {
  expect(response.status).toBe(200)
  expectPageHeaders(response)
  expect(response.headers.get('x-scanauth-error')).toBeNull()
  return response.text()
}

/** The cashier page of a plan chosen with `csrf`: its order, parameters, nonce and links. */
async function cashierOf(url: string, csrf: string, plan = 'days-30') {
  const response = await postPlan(url, { csrf, plan })
  const html = await expectPage(response)
  const csp = response.headers.get('content-security-policy') as string
  const json = /<script type="application\/json" id="wechatpay-jsapi">([^<]*)<\/script>/.exec(html)?.[1]
  expect(json, 'the cashier carries its parameters in #wechatpay-jsapi').toBeDefined()
  const orderHref = /<a id="order-link" href="([^"]*)">/.exec(html)?.[1] ?? ''
  const orderUrl = new URL(orderHref.replace(/&amp;/g, '&'), `${url}/auth/m/pay`)
  return {
    html,
    csp,
    parameters: JSON.parse(json as string) as Record<string, string>,
    nonce: /script-src 'nonce-([^']+)'/.exec(csp)?.[1] ?? '',
    orderUrl,
    orderId: orderUrl.searchParams.get('id') as string,
  }
}

/** Registers the phone payment cases for one adapter. */
export function describePhoneRoutes(framework: string, host: HttpRoutesHost): void {
  describe(`the ${framework} adapter's phone payment pages (B-phone-1…10)`, () => {
    it('scan → link → WeChat OAuth → plans → cashier → order page (409 before the payment, Paid after) → the device is authorized', async () => {
      const app = await phoneApp(host)
      const { url, service } = app
      const { scene, payUrl } = await app.needPurchaseScan()
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })

      // The link of the reply, opened in WeChat: to OAuth first, then the plans for the waiting device.
      const plansResponse = await openAs(app, payUrl, 'alice')
      const plansHtml = await expectPage(plansResponse)
      expect(plansResponse.headers.get('content-security-policy')).not.toContain('script-src')
      expect(plansHtml).not.toContain('<script')
      expect(plansHtml).toContain('tv-livingroom')
      const page = plansOf(plansHtml)
      expect(page.plans).toEqual(['days-30', 'points-100'])
      // Each form posts to POST m/pay, the page's own address.
      for (const action of page.actions) expect(new URL(action, payUrl).toString()).toBe(`${url}/auth/m/pay`)
      expect(page.csrf).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
      expect(service.calls).toEqual([])

      // The plan's button: the cashier page.
      const cashier = await cashierOf(url, page.csrf)
      expect(cashier.orderId).toMatch(/^SA[0-9A-F]{26}$/)
      expect(Object.keys(cashier.parameters).sort()).toEqual(['appId', 'nonceStr', 'package', 'paySign', 'signType', 'timeStamp'])
      expect(cashier.parameters).toMatchObject({ appId: service.merchant.appid, package: `prepay_id=wx${cashier.orderId}`, signType: 'RSA', paySign: `test:${cashier.orderId}:alice` })
      expect(service.orders.get(cashier.orderId)).toMatchObject({ tradeType: 'JSAPI', request: { payerOpenid: 'alice', amountFen: 1990 } })
      expect(cashier.html).toContain('¥19.90')
      expect(cashier.html).toContain('tv-livingroom')
      // Its one script runs by the nonce of its CSP, which allows nothing else.
      expect(cashier.nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/)
      expect(cashier.csp).toContain(`script-src 'nonce-${cashier.nonce}'`)
      expect(cashier.csp).toContain("connect-src 'none'")
      expect(cashier.csp).toContain("frame-ancestors 'none'")
      expect(cashier.csp).toContain("default-src 'none'")
      const scripts = [...cashier.html.matchAll(/<script([^>]*)>/g)].map((m) => m[1] as string)
      expect(scripts).toEqual([' type="application/json" id="wechatpay-jsapi"', ` nonce="${cashier.nonce}"`])
      expect(cashier.orderUrl.toString()).toBe(`${url}/auth/m/order?id=${cashier.orderId}`)

      // The cashier's `ok` before any payment: the order page asks WeChat Pay and grants nothing (B-phone-7).
      await expectRefusal(await openAs(app, cashier.orderUrl.toString(), 'alice'), 409, 'order_not_paid')
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })

      // Paid, with no notification yet: the order page finds it paid, grants, and the device is signed in.
      service.pay(cashier.orderId)
      const paid = await expectPage(await openAs(app, cashier.orderUrl.toString(), 'alice'))
      expect(paid).toContain('<h1>Paid</h1>')
      expect(paid).toContain('tv-livingroom')
      expect(paid).toContain('¥19.90')
      const status = await fetchJson(`${url}/auth/status?scene=${scene}`)
      expect(status).toMatchObject({ status: 200, body: { status: 'authorized', session_token: expect.any(String), authorization: { type: 'time' } } })
      expect(await app.auth.getOrder(cashier.orderId)).toMatchObject({ status: 'paid', channel: 'jsapi', sceneStr: scene })
      // The order page again: the same page, nothing granted twice.
      expect(await expectPage(await openAs(app, cashier.orderUrl.toString(), 'alice'))).toContain('<h1>Paid</h1>')
      expect((await app.auth.getUser({ openid: 'alice' }))?.queue).toEqual([])
    })

    it('outside WeChat, both pages say to open the link in WeChat, and neither OAuth nor the ticket is used (B-phone-3)', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      for (const address of [payUrl, `${app.url}/auth/m/pay`, `${app.url}/auth/m/order?id=${UNKNOWN_ORDER}`]) {
        const answer = await browse(address, DESKTOP_UA)
        const html = await expectPage(answer)
        expect(html).toContain('Open this link in WeChat')
        expect(html).not.toContain('<script')
      }
      // Without any user agent too.
      const bare = await fetch(payUrl, { redirect: 'manual' })
      expect(await expectPage(bare)).toContain('Open this link in WeChat')
      expect(app.oauth.exchanges).toBe(0)
      // The link still works in WeChat.
      expect(plansOf(await expectPage(await openAs(app, payUrl, 'alice'))).plans).toEqual(['days-30', 'points-100'])
    })

    it('a HEAD of m/pay (a link preview) answers the page headers and spends neither the code nor the ticket', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      const back = await toOAuth(payUrl)
      back.searchParams.set('code', app.oauth.issueCode('alice'))
      const head = await browse(back.toString(), WECHAT_UA, 'HEAD')
      expect(head.status).toBe(200)
      expectPageHeaders(head)
      expect(await head.text()).toBe('')
      expect(app.oauth.exchanges).toBe(0)
      // The same code and ticket then open the page.
      const page = await expectPage(await browse(back.toString()))
      expect(plansOf(page).plans).toEqual(['days-30', 'points-100'])
      expect(app.oauth.exchanges).toBe(1)
      // And a HEAD of the order page asks nothing of WeChat Pay.
      const orderHead = await browse(`${app.url}/auth/m/order?id=${UNKNOWN_ORDER}`, WECHAT_UA, 'HEAD')
      expect(orderHead.status).toBe(200)
      expect(await orderHead.text()).toBe('')
      expect(app.service.calls).toEqual([])
    })

    it('POST m/pay without a plan (the cashier\'s cancel) shows the plans again, with the same token; a double tap is one order', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      const { csrf } = plansOf(await expectPage(await openAs(app, payUrl, 'alice')))
      const first = await cashierOf(app.url, csrf)
      const again = await cashierOf(app.url, csrf)
      expect(again.orderId).toBe(first.orderId)
      // A fresh nonce for every cashier page.
      expect(again.nonce).not.toBe(first.nonce)
      // The cashier's back-to-plans form posts the token without a plan.
      expect(first.html).toContain(`<form id="back-to-plans" method="post" action="pay"><input type="hidden" name="csrf" value="${csrf}">`)
      for (const fields of [{ csrf }, { csrf, plan: '' }] as Array<Record<string, string>>) {
        const plans = await expectPage(await postPlan(app.url, fields))
        expect(plansOf(plans)).toMatchObject({ csrf, plans: ['days-30', 'points-100'] })
        expect(plans).toContain('tv-livingroom')
      }
      // The page still buys, the same order.
      expect((await cashierOf(app.url, csrf)).orderId).toBe(first.orderId)
      expect(app.service.orders.size).toBe(1)
    })

    it('refuses a missing, stale or made-up token (403) and an unknown plan (404), as pages that change nothing (B-phone-5)', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      const older = plansOf(await expectPage(await openAs(app, payUrl, 'alice'))).csrf
      // A later page (the person's own, without a ticket) replaces it.
      const newer = plansOf(await expectPage(await openAs(app, `${app.url}/auth/m/pay`, 'alice'))).csrf
      expect(newer).not.toBe(older)
      await expectRefusal(await postPlan(app.url, { csrf: older, plan: 'days-30' }), 403, 'phone_csrf_invalid')
      await expectRefusal(await postPlan(app.url, { plan: 'days-30' }), 403, 'phone_csrf_invalid')
      await expectRefusal(await postPlan(app.url, { csrf: `${newer.split('.')[0] as string}.${'A'.repeat(43)}`, plan: 'days-30' }), 403, 'phone_csrf_invalid')
      await expectRefusal(await postPlan(app.url, { csrf: older }), 403, 'phone_csrf_invalid')
      await expectRefusal(await postPlan(app.url, { csrf: newer, plan: 'no-such-plan' }), 404, 'plan_not_found')
      expect(app.service.calls).toEqual([])
      // The page shown last buys.
      expect((await cashierOf(app.url, newer)).orderId).toMatch(/^SA/)
    })

    it('the link opens one page, for the scanner only: another person 403 without using it, then 410 once used; a made-up one 404', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      // A forwarded link: the person who opened it is not the one who scanned.
      await expectRefusal(await openAs(app, payUrl, 'mallory'), 403, 'phone_wrong_user')
      expect(plansOf(await expectPage(await openAs(app, payUrl, 'alice'))).plans).toHaveLength(2)
      await expectRefusal(await openAs(app, payUrl, 'alice'), 410, 'phone_ticket_used')
      // A ticket no scan left.
      await expectRefusal(await browse(`${app.url}/auth/m/pay?ticket=${'A'.repeat(43)}`), 404, 'phone_ticket_invalid')
      // A state that is not the one sent.
      const back = await toOAuth(`${app.url}/auth/m/pay`)
      back.searchParams.set('state', 'not-the-state')
      back.searchParams.set('code', app.oauth.issueCode('alice'))
      await expectRefusal(await browse(back.toString()), 400, 'invalid_request')
    })

    it('the order page shows only the person\'s own order: another person 403, an unknown order 404', async () => {
      const app = await phoneApp(host)
      const { payUrl } = await app.needPurchaseScan()
      const { csrf } = plansOf(await expectPage(await openAs(app, payUrl, 'alice')))
      const { orderUrl, orderId } = await cashierOf(app.url, csrf, 'points-100')
      app.service.pay(orderId)
      await expectRefusal(await openAs(app, orderUrl.toString(), 'mallory'), 403, 'phone_wrong_user')
      await expectRefusal(await openAs(app, `${app.url}/auth/m/order?id=${UNKNOWN_ORDER}`, 'alice'), 404, 'order_not_found')
      // Neither look granted anything; Alice's does.
      expect(await app.auth.getOrder(orderId)).toMatchObject({ status: 'open' })
      expect(await expectPage(await openAs(app, orderUrl.toString(), 'alice'))).toContain('<h1>Paid</h1>')
      expect(await app.auth.getOrder(orderId)).toMatchObject({ status: 'paid' })
    })

    it('without payments.phone, m/pay and m/order are not ours: the app\'s own 404 answers', async () => {
      const clock = new ManualClock()
      const selling = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, payments: { provider: new TestPaymentService(clock.now), plans: TEST_PLANS } })
      const plain = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
      for (const auth of [selling, plain]) {
        expect(auth.phonePay).toBe(false)
        const url = await host(auth, {})
        const answers = [
          await browse(`${url}/auth/m/pay?ticket=${'A'.repeat(43)}`),
          await browse(`${url}/auth/m/pay`, DESKTOP_UA),
          await postPlan(url, { csrf: 'x', plan: 'days-30' }),
          await browse(`${url}/auth/m/order?id=${UNKNOWN_ORDER}`),
        ]
        for (const answer of answers) {
          // The framework's own 404, not one of our pages nor a redirect to WeChat.
          expect(answer.status).toBe(404)
          expect(answer.headers.get('x-scanauth-error')).toBeNull()
          expect(answer.headers.get('x-frame-options')).toBeNull()
          expect(await answer.text()).not.toContain('Nothing was changed.')
        }
      }
    })
  })
}
