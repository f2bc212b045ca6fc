// Paying on the phone that scanned, in a real browser, with both emulators (docs/payments.md, "Paying
// on the phone that scanned"; docs/behaviour.md B-phone-1…10). The Express example runs as a person
// starts it (`npm start`, fully emulated, its own process); a device creates codes over HTTP; a
// Chromium page with WeChat's user agent plays the phone: it opens the code's address (the WeChat
// emulator's page for that code), scans it as a user whose free trial is used up, taps "Buy on this
// phone" in the reply, goes through the emulated WeChat OAuth to the plans page, buys a plan, gets
// the cashier page, whose WeChat Pay emulator's WeixinJSBridge stand-in shows its overlay; Pay lands
// on the order page "Paid" while the device's long poll answers authorized; Cancel goes back to the
// plans with the order still open. Then the demo page: its purchase screen keeps the Native code,
// says the phone got a link, and opens the emulated phone, whose link leads to the phone pages.
// Screenshots go to examples/express/test-output/ (not committed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { fetchJson, postJson } from '@scanauth/testkit'
import { launchChromium, OUTPUT, pageErrors, payCodeLoaded, qrLoaded, skipBrowser, startExample, type StartedExample } from './browser-support'

/** WeChat's in-app browser on a phone: what the phone pages look for (`MicroMessenger`). */
const WECHAT_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.188 Mobile Safari/537.36 XWEB/1260117 MMWEBSDK/20240801 MMWEBID/1234 MicroMessenger/8.0.50.2701(0x28003253) WeChat/arm64 Weixin NetType/WIFI Language/en ABI/arm64'

/** A free trial of 1.7 seconds (SCANAUTH_FREE_TRIAL_DAYS=0.00002): the server runs on the real clock. */
const TRIAL_DAYS = '0.00002'
const PAST_TRIAL_MS = 2_000

/** One order as the WeChat Pay emulator shows it (`GET /emulator/orders`). */
interface EmulatedOrder {
  outTradeNo: string
  tradeType: 'NATIVE' | 'JSAPI'
  tradeState: string
  total: number
  payer: string | null
  prepayId: string | null
}

describe.skipIf(skipBrowser)('the phone that scanned pays in chromium, with both emulators', () => {
  let browser: Browser
  let app: StartedExample

  beforeAll(async () => {
    app = await startExample({ SCANAUTH_FREE_TRIAL_DAYS: TRIAL_DAYS })
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  /** A device asks for a code over HTTP, as a TV would. */
  async function createScene(deviceId: string): Promise<{ scene: string; qrContent: string }> {
    const res = await postJson(`${app.url}/auth/create_scene`, { device_id: deviceId })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return { scene: res.body.scene_str as string, qrContent: res.body.qr_content as string }
  }

  /** `openid` signs a device in once, which starts its free trial, and the trial ends. */
  async function useUpTrial(openid: string): Promise<void> {
    const { scene } = await createScene('tv-trial')
    const scanned = await postJson(`${app.wechatUrl}/emulator/scan`, { scene_str: scene, openid })
    expect(scanned.status, JSON.stringify(scanned.body)).toBe(200)
    expect((await fetchJson(`${app.url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })
    await new Promise((ok) => setTimeout(ok, PAST_TRIAL_MS))
  }

  async function payOrders(): Promise<EmulatedOrder[]> {
    return (await fetchJson(`${app.payUrl}/emulator/orders`)).body as EmulatedOrder[]
  }

  /** The phone: WeChat's browser, 360 px wide. */
  async function phoneContext(): Promise<BrowserContext> {
    return browser.newContext({ userAgent: WECHAT_USER_AGENT, viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
  }

  /**
   * The phone opens the device's code (the WeChat emulator's page for it, as WeChat opens a scanned
   * code), scans it as `openid`, and finds "Buy on this phone" in the reply. The device, told
   * `need_purchase`, buys with its own Native code too; the purchase's answer says the phone got a link.
   */
  async function scanAndBuyOnDevice(phone: Page, openid: string, shot: string): Promise<{ scene: string; nativeOrder: string }> {
    const { scene, qrContent } = await createScene('tv-living-room')
    expect(qrContent.startsWith(`${app.wechatUrl}/`)).toBe(true)
    await phone.goto(qrContent)
    await phone.locator('#openid').fill(openid)
    await phone.locator('#openid').dispatchEvent('change') // the page keeps it as the phone's user (its cookie)
    await phone.getByRole('button', { name: 'Scan', exact: true }).click()
    const link = phone.locator('.bubble a', { hasText: 'Buy on this phone' })
    await link.waitFor()
    await phone.screenshot({ path: `${OUTPUT}${shot}-1-reply.png` })
    const target = new URL(new URL((await link.getAttribute('href'))!, app.wechatUrl).searchParams.get('url')!)
    expect(`${target.origin}${target.pathname}`).toBe(`${app.url}/auth/m/pay`)
    expect(target.searchParams.get('ticket')).toMatch(/^[\w-]{43}$/)

    expect((await fetchJson(`${app.url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })
    const native = await postJson(`${app.url}/auth/purchase`, { scene, plan: 'days-30' })
    expect(native).toMatchObject({ status: 200, body: { code_url: expect.stringMatching(/^weixin:\/\/wxpay\//), amount_fen: 1990, phone_link: true } })

    // The tap: through the emulator (which makes the scanner the phone's user), the app, WeChat OAuth, back.
    await link.click()
    await phone.getByRole('heading', { name: 'Buy time or points' }).waitFor()
    const landed = new URL(phone.url())
    expect(`${landed.origin}${landed.pathname}`).toBe(`${app.url}/auth/m/pay`)
    expect([...landed.searchParams.keys()].sort()).toEqual(['code', 'state', 'ticket'])
    expect(await phone.locator('.device').innerText()).toBe('tv-living-room')
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360)
    await phone.screenshot({ path: `${OUTPUT}${shot}-2-plans.png` })
    return { scene, nativeOrder: native.body.order_id as string }
  }

  /**
   * Buys the 7-day plan on the plans page; resolves once the emulator's cashier overlay is up (the
   * cashier page's script called `getBrandWCPayRequest`). `errors` are the page's uncaught errors,
   * named when the overlay does not come.
   */
  async function openCashier(phone: Page, errors: string[]): Promise<void> {
    await phone.getByRole('button', { name: /^7 days of access · 7 days · ¥6\.90$/ }).click()
    await phone.getByRole('heading', { name: 'Pay ¥6.90' }).waitFor()
    expect(await phone.locator('script#wechatpay-jsapi').count()).toBe(1)
    await cashierOverlay(phone, errors)
    expect(await phone.locator('#wechatpay-emulator-cashier').innerText()).toContain('¥6.90')
  }

  /** Waits for the WeChat Pay emulator's cashier overlay; fails with the page's own errors when it does not come. */
  async function cashierOverlay(phone: Page, errors: string[]): Promise<void> {
    try {
      await phone.getByRole('dialog', { name: 'WeChat Pay (emulator)' }).waitFor({ timeout: 10_000 })
    } catch (error) {
      const status = await phone.locator('#pay-status').innerText().catch(() => '?')
      throw new Error(`the cashier page never opened WeChat's cashier (its status line: "${status}"; its uncaught errors: ${JSON.stringify(errors)})`, { cause: error })
    }
  }

  it('pays: the reply\'s link, WeChat OAuth, the plans, the cashier, Pay, "Paid"; the device\'s long poll answers authorized', async () => {
    const openid = 'o_phone_pays'
    await useUpTrial(openid)
    const context = await phoneContext()
    const phone = await context.newPage()
    const errors = pageErrors(phone)
    try {
      const { scene, nativeOrder } = await scanAndBuyOnDevice(phone, openid, 'phone-pay')
      await openCashier(phone, errors)
      await phone.screenshot({ path: `${OUTPUT}phone-pay-3-cashier.png` })
      const [jsapi] = (await payOrders()).filter((o) => o.tradeType === 'JSAPI' && o.payer === openid)
      expect(jsapi).toMatchObject({ tradeState: 'NOTPAY', total: 690 })
      // The device waits while an order of its scene is open (B-order-7): the phone's, now.
      const longPoll = fetchJson(`${app.url}/auth/status?scene=${scene}&wait=30`)

      await phone.locator('#wechatpay-emulator-pay').click()
      await phone.getByRole('heading', { name: 'Paid' }).waitFor()
      const order = new URL(phone.url())
      expect(`${order.origin}${order.pathname}`).toBe(`${app.url}/auth/m/order`)
      expect(order.searchParams.get('id')).toBe(jsapi!.outTradeNo)
      expect(await phone.locator('body').innerText()).toContain('7 days of access · ¥6.90')
      await phone.screenshot({ path: `${OUTPUT}phone-pay-4-paid.png` })

      const woken = await longPoll
      expect(woken.status).toBe(200)
      expect(woken.body).toMatchObject({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'time', end_at: expect.any(String) } })
      const session = await fetch(`${app.url}/auth/session`, { headers: { authorization: `Bearer ${woken.body.session_token as string}` } })
      expect(session.status).toBe(200)
      await session.arrayBuffer()
      // One device, one payable order: the phone's replaced the device's Native code.
      expect((await payOrders()).filter((o) => [nativeOrder, jsapi!.outTradeNo].includes(o.outTradeNo)).map((o) => [o.tradeType, o.tradeState])).toEqual(
        expect.arrayContaining([
          ['NATIVE', 'CLOSED'],
          ['JSAPI', 'SUCCESS'],
        ]),
      )
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('cancels: back to the plans with the order still open; the same plan again reuses it, and then it is paid', async () => {
    const openid = 'o_phone_cancels'
    await useUpTrial(openid)
    const context = await phoneContext()
    const phone = await context.newPage()
    const errors = pageErrors(phone)
    try {
      const { scene } = await scanAndBuyOnDevice(phone, openid, 'phone-cancel')
      await openCashier(phone, errors)
      const prepay = JSON.parse((await phone.locator('script#wechatpay-jsapi').textContent())!) as { package: string }

      await phone.locator('#wechatpay-emulator-cancel').click()
      await phone.getByRole('heading', { name: 'Buy time or points' }).waitFor()
      expect(new URL(phone.url()).pathname).toBe('/auth/m/pay')
      await phone.screenshot({ path: `${OUTPUT}phone-cancel-3-plans-again.png` })
      const [open] = (await payOrders()).filter((o) => o.tradeType === 'JSAPI' && o.payer === openid)
      expect(open).toMatchObject({ tradeState: 'NOTPAY', prepayId: prepay.package.slice('prepay_id='.length) })
      expect((await fetchJson(`${app.url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })

      // The same plan again: the same order and prepay_id (WeChat Pay's re-entry), paid this time.
      await openCashier(phone, errors)
      expect(JSON.parse((await phone.locator('script#wechatpay-jsapi').textContent())!)).toMatchObject({ package: prepay.package })
      await phone.locator('#wechatpay-emulator-pay').click()
      await phone.getByRole('heading', { name: 'Paid' }).waitFor()
      expect(new URL(phone.url()).searchParams.get('id')).toBe(open!.outTradeNo)
      expect((await payOrders()).filter((o) => o.tradeType === 'JSAPI' && o.payer === openid).map((o) => o.tradeState)).toEqual(['SUCCESS'])
      expect((await fetchJson(`${app.url}/auth/status?scene=${scene}&wait=5`)).body).toMatchObject({ status: 'authorized' })
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('the demo page keeps its pay code, says the phone got a link, and its emulated phone opens the phone pages in a tab; paid there, the page is authorized', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 900 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(app.url)
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      await new Promise((ok) => setTimeout(ok, PAST_TRIAL_MS))
      await page.getByRole('button', { name: 'Sign out' }).click()
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
      await page.getByRole('button', { name: /30 days of access/ }).click()
      await payCodeLoaded(page)
      // The Native code stays (a second phone may pay it), and the page says where else to buy.
      expect(await page.getByRole('img', { name: 'WeChat Pay code: ¥19.90 for 30 days of access' }).isVisible()).toBe(true)
      expect(await page.locator('#pay-phone').innerText()).toBe('The phone that scanned got a link to buy there.')
      expect(await page.locator('#status-text').innerText()).toBe('Waiting for the payment… Scan the code with WeChat, or buy on the phone that scanned, or press the button below.')
      await page.screenshot({ path: `${OUTPUT}phone-demo-1-pay-code.png` })

      const tab = context.waitForEvent('page')
      await page.getByRole('link', { name: 'Open the emulated phone to buy there' }).click()
      const phone = await tab
      await phone.waitForLoadState()
      expect(phone.url()).toBe(`${app.wechatUrl}/`)
      await phone.locator('.bubble a', { hasText: 'Buy on this phone' }).first().click()
      await phone.getByRole('heading', { name: 'Buy time or points' }).waitFor()
      const landed = new URL(phone.url())
      expect(`${landed.origin}${landed.pathname}`).toBe(`${app.url}/auth/m/pay`)
      const phoneErrors = pageErrors(phone)
      await phone.getByRole('button', { name: /^100 points/ }).click()
      await phone.getByRole('heading', { name: 'Pay ¥9.90' }).waitFor()
      await cashierOverlay(phone, phoneErrors)
      await phone.locator('#wechatpay-emulator-pay').click()
      await phone.getByRole('heading', { name: 'Paid' }).waitFor()
      // The device's wait on its scene (client.purchase) hears of the phone's payment.
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(await page.locator('#facts').innerText()).toContain('Points')
      await page.screenshot({ path: `${OUTPUT}phone-demo-2-authorized.png` })
      expect(errors).toEqual([])
      expect(phoneErrors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
