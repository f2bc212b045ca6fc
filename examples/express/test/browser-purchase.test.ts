// The demo page in a real browser, buying access and staying current: when a scan answers "Purchase
// needed", the plan cards, the pay code, the emulated phone paying through the WeChat Pay emulator,
// and "Authorized" from @scanauth/client's wait (the scene's event stream); signing out; a session
// resumed after its trial ended buying points at 320 px; a purchase the payment service fails; and a
// card that follows the server while the page stays open: the trial ends ("Purchase needed"), the
// session ends elsewhere (a new code). Screenshots go to examples/express/test-output/.
import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { EMULATED_PHONE_OPENID } from '@scanauth/example-shared'
import { closedPort } from '@scanauth/testkit'
import {
  AFTER_SHORT_TRIAL,
  clockedServer,
  expectNoClippedButton,
  launchChromium,
  OUTPUT,
  pageErrors,
  payCodeLoaded,
  planCards,
  purchaseAnswers,
  qrLoaded,
  reachPurchaseNeeded,
  savedToken,
  sessionStatus,
  SHORT_TRIAL_DAYS,
  skipBrowser,
  transportOf,
} from './browser-support'

describe.skipIf(skipBrowser)('the demo page in chromium: buying access', () => {
  let browser: Browser

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  it('buys a plan when a purchase is needed: plan cards, the pay code, the emulated phone pays, "Authorized"; then signs out', async () => {
    const { running: shop, clock } = await clockedServer({ freeTrialDays: SHORT_TRIAL_DAYS })
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    const purchases = purchaseAnswers(page)
    try {
      await page.goto(shop.url)
      await reachPurchaseNeeded(page, clock)
      const openid = EMULATED_PHONE_OPENID // the emulated phone's user, who scanned
      expect(await planCards(page)).toEqual(['30 days of access Time pass · 30 days ¥19.90', '7 days of access Time pass · 7 days ¥6.90', '100 points Points · 100 points ¥9.90'])
      expect(await page.getByRole('button', { name: 'Buy 30 days (demo)' }).count()).toBe(0) // the old shortcut is gone
      await page.screenshot({ path: `${OUTPUT}6-plans.png` })

      // A plan, then "choose another plan": the first order is closed when the second is opened (B-order-4).
      await page.getByRole('button', { name: /7 days of access/ }).click()
      await payCodeLoaded(page)
      expect(await page.locator('#pay-title').innerText()).toBe('Scan to pay ¥6.90')
      await page.getByRole('button', { name: 'Choose another plan' }).click()
      await page.getByRole('heading', { name: 'Choose a plan' }).waitFor()
      await page.getByRole('button', { name: /30 days of access/ }).click()
      await payCodeLoaded(page)
      const [first, second] = await Promise.all(purchases)
      expect([first!.status, second!.status]).toEqual([200, 200])
      expect(second!.body).toMatchObject({ amount_fen: 1990, code_url: expect.stringMatching(/^weixin:\/\/wxpay\//) })
      expect(await page.locator('#pay-title').innerText()).toBe('Scan to pay ¥19.90')
      expect(await page.locator('#pay-plan').innerText()).toBe('30 days of access')
      expect(await page.locator('#pay-deadline').innerText()).toMatch(/^Pay by \S.* \(.+\)$/)
      expect(await page.getByRole('img', { name: 'WeChat Pay code: ¥19.90 for 30 days of access' }).isVisible()).toBe(true)
      expect(await page.locator('#pay-qr').getAttribute('src')).toBe(`/demo/qr.svg?text=${encodeURIComponent(second!.body.code_url as string)}`)
      expect(await page.locator('#status-text').innerText()).toMatch(/^Waiting for the payment/)
      expect(await transportOf(page)).toBe('events')
      await page.screenshot({ path: `${OUTPUT}7-pay-code.png` })
      expect((await shop.wiring.auth.getOrder(first!.body.order_id as string))?.status).toBe('closed')

      await page.getByRole('button', { name: 'Pay with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      const facts = await page.locator('#facts').innerText()
      expect(facts).toContain('Time pass')
      expect(facts).toContain('Valid until')
      await page.screenshot({ path: `${OUTPUT}8-paid.png` })
      const order = await shop.wiring.auth.getOrder(second!.body.order_id as string)
      expect(order).toMatchObject({ status: 'paid', planId: 'days-30' })
      const user = await shop.wiring.auth.getUser({ openid })
      expect(user?.current).toMatchObject({ id: order!.authorizationId, source: 'purchase', status: 'active' })
      // The session the page keeps is the one the scan of the paid scene made, and it is signed in.
      const token = (await savedToken(page)) as string
      expect(await sessionStatus(shop.url, token)).toBe(200)

      // Sign out: a new code, the token forgotten here and refused by the server.
      await page.getByRole('button', { name: 'Sign out' }).click()
      await qrLoaded(page)
      await page.screenshot({ path: `${OUTPUT}9-signed-out.png` })
      expect(await savedToken(page)).toBeNull()
      expect(await sessionStatus(shop.url, token)).toBe(401)
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await shop.close()
    }
  })

  it('clips no button at 320 px, and buys points for a session resumed after the trial ended', async () => {
    const { running: shop, clock } = await clockedServer({ freeTrialDays: SHORT_TRIAL_DAYS })
    const context = await browser.newContext({ viewport: { width: 320, height: 640 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(shop.url)
      await qrLoaded(page)
      await expectNoClippedButton(page, 320)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).tap()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      await expectNoClippedButton(page, 320)

      // The trial ends while the page is closed: reopened, the saved session has no authorization,
      // and no scene: it buys with its session, and learns of the payment by asking with it.
      clock.ahead += AFTER_SHORT_TRIAL
      await page.reload()
      await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
      expect(await planCards(page)).toHaveLength(3)
      await expectNoClippedButton(page, 320)
      await page.screenshot({ path: `${OUTPUT}10-narrow-plans.png`, fullPage: true })
      await page.getByRole('button', { name: /100 points/ }).tap()
      await payCodeLoaded(page)
      expect(await page.locator('#pay-title').innerText()).toBe('Scan to pay ¥9.90')
      await expectNoClippedButton(page, 320)
      await page.screenshot({ path: `${OUTPUT}11-narrow-pay-code.png`, fullPage: true })
      await page.getByRole('button', { name: 'Pay with the emulated phone' }).tap()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(await page.locator('#facts').innerText()).toMatch(/Points left\s+100/)
      await expectNoClippedButton(page, 320)
      await page.screenshot({ path: `${OUTPUT}12-narrow-paid.png`, fullPage: true })

      // Signing out when no code can be created: the overlay's button fits too, and brings a code.
      shop.wiring.emulator!.failNext('qrcode/create', { errcode: 45009, errmsg: 'api freq out of limit' })
      await page.getByRole('button', { name: 'Sign out' }).tap()
      await page.getByText('No code could be created.').waitFor()
      expect(await savedToken(page)).toBeNull()
      await expectNoClippedButton(page, 320)
      await page.getByRole('button', { name: 'Try again' }).tap()
      await qrLoaded(page)
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await shop.close()
    }
  })

  it("shows the payment service's {detail} when a purchase fails, and offers the plans again", async () => {
    // A merchant whose WeChat Pay cannot be reached: the purchase fails for real, with core's 502.
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
    const { running: shop, clock } = await clockedServer({
      freeTrialDays: SHORT_TRIAL_DAYS,
      demo: true, // beside real WeChat Pay, "Scan with the emulated phone" needs SCANAUTH_DEMO=1
      wechatPay: {
        kind: 'merchant',
        mchid: '1230000109',
        appid: 'wx_unreachable_pay',
        apiV3Key: 'k'.repeat(32),
        merchantPrivateKeyPem: keys.privateKey,
        merchantCertSerial: 'ABCDEF0123456789',
        publicKeyId: 'PUB_KEY_ID_0100000000000000000000000000000000',
        publicKeyPem: keys.publicKey,
        apiBaseUrl: `http://127.0.0.1:${await closedPort()}`,
      },
    })
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(shop.url)
      await reachPurchaseNeeded(page, clock)
      await page.getByRole('button', { name: /30 days of access/ }).click()
      await expect.poll(() => page.locator('#status-text').innerText()).toMatch(/^The payment service refused the request or could not be reached/)
      expect(await page.locator('#status').getAttribute('data-tone')).toBe('error')
      expect(await page.locator('#card').getAttribute('data-state')).toBe('need_purchase')
      // No emulated payment without the WeChat Pay emulator, and the plans can be tried again.
      expect(await page.getByRole('button', { name: 'Pay with the emulated phone' }).count()).toBe(0)
      expect(await page.getByRole('button', { name: /7 days of access/ }).isEnabled()).toBe(true)
      await page.screenshot({ path: `${OUTPUT}13-purchase-failed.png` })
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await shop.close()
    }
  })

  it('keeps the card current while the page is open: the trial ends, then the session ends elsewhere', async () => {
    const { running: shop, clock } = await clockedServer({ freeTrialDays: SHORT_TRIAL_DAYS })
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    let loads = 0
    page.on('load', () => loads++)
    // The page's timers run on a clock the test can move, as the server's.
    await page.clock.install()
    try {
      await page.goto(shop.url)
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      const token = (await savedToken(page)) as string

      // The free trial ends while "Authorized" is shown: both clocks pass its end_at, and the card
      // turns to "Purchase needed" for the session, without a reload.
      clock.ahead += AFTER_SHORT_TRIAL
      await page.clock.fastForward(AFTER_SHORT_TRIAL)
      await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
      expect(await page.locator('#status-text').innerText()).toBe('The time pass has ended. Choose a plan to go on.')
      expect(await planCards(page)).toHaveLength(3)
      expect(await savedToken(page)).toBe(token) // still signed in: it buys with its session
      await page.screenshot({ path: `${OUTPUT}15-trial-ended.png` })

      // It buys with the session, and is authorized again.
      await page.getByRole('button', { name: /7 days of access/ }).click()
      await payCodeLoaded(page)
      await page.getByRole('button', { name: 'Pay with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(await page.locator('#facts').innerText()).toContain('Valid until')

      // The session is signed out elsewhere: at the page's next look (every minute) the card turns
      // to a new code, and the token is forgotten.
      const logout = await fetch(`${shop.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      expect(logout.status).toBe(204)
      await page.clock.fastForward(60_000)
      await qrLoaded(page)
      expect(await page.locator('#lead').innerText()).toBe('Your session has ended. Scan the code with WeChat to sign in again.')
      expect(await savedToken(page)).toBeNull()
      await page.screenshot({ path: `${OUTPUT}16-session-ended.png` })
      expect(loads).toBe(1)
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await shop.close()
    }
  })
})
