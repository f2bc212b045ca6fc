// The demo page in a real browser (Debian's chromium through playwright-core; never a download):
// the QR image loads, the emulated phone scans, "Authorized" appears; the page waits for the scan on
// an event stream (docs/behaviour.md B-wait-3), and on the long poll (B-wait-2) in a browser without
// EventSource; then the purchase-needed and expired states; buying a plan (the plan cards, the pay
// code, the emulated phone paying through the WeChat Pay emulator, "Authorized" from the event stream)
// and signing out; a purchase the payment service fails; the narrowest phone (320 px); the emulator's
// own page. Screenshots of each state go to examples/express/test-output/ (not committed).
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser, type Page } from 'playwright-core'
import { closedPort } from '@scanauth/testkit'
import { startServer } from '../src/app'
import type { ExampleConfig, RunningServer } from '@scanauth/example-shared'

const CHROMIUM = '/usr/bin/chromium'
const OUTPUT = fileURLToPath(new URL('../test-output/', import.meta.url))
const DAY = 24 * 3600 * 1000
/** A free trial of about a minute (SCANAUTH_FREE_TRIAL_DAYS=0.0007), so "Purchase needed" comes quickly. */
const SHORT_TRIAL_DAYS = 0.0007
const AFTER_SHORT_TRIAL = 61_000

// Without chromium (apt-get install -y chromium) the test is skipped on a workstation, but fails in CI.
const missing = !existsSync(CHROMIUM)
if (missing && !process.env.CI) console.warn(`browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

describe.skipIf(missing && !process.env.CI)('the demo page in chromium', () => {
  let browser: Browser
  let server: RunningServer
  let offset = 0 // the server's clock runs ahead by this much, to show expiry

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true })
    server = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      wechat: { kind: 'emulator' },
      now: () => Date.now() + offset,
      log: () => {},
    })
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  function sceneOf(page: Page): Promise<string | undefined> {
    return page.locator('#card').getAttribute('data-scene').then((v) => v ?? undefined)
  }

  /** Waits until the QR image of the current scene has loaded, and returns that scene. */
  async function qrLoaded(page: Page): Promise<string | undefined> {
    // (Page-side code is given as strings: this project's TypeScript has no DOM types.)
    await page.waitForFunction(`(() => {
      const img = document.getElementById('qr')
      return document.getElementById('card').dataset.state === 'pending' && !img.hidden && img.complete && img.naturalWidth > 0
    })()`)
    return sceneOf(page)
  }

  /** A server of its own with the short free trial, and a clock the test moves (`ahead` ms). */
  async function shortTrialServer(overrides: Partial<ExampleConfig> = {}) {
    const clock = { ahead: 0 }
    const running = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      wechat: { kind: 'emulator' },
      freeTrialDays: SHORT_TRIAL_DAYS,
      now: () => Date.now() + clock.ahead,
      log: () => {},
      ...overrides,
    })
    return { running, clock }
  }

  /** Signs in with the emulated phone, then moves past the trial and scans again: "Purchase needed". */
  async function reachPurchaseNeeded(page: Page, clock: { ahead: number }, tap = false) {
    const press = (name: string) => (tap ? page.getByRole('button', { name }).tap() : page.getByRole('button', { name }).click())
    await qrLoaded(page)
    await press('Scan with the emulated phone')
    await page.getByRole('heading', { name: 'Authorized' }).waitFor()
    clock.ahead += AFTER_SHORT_TRIAL
    await press('Sign out')
    await qrLoaded(page)
    await press('Scan with the emulated phone')
    await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
  }

  /** The plan cards shown, as their visible text on one line each. */
  async function planCards(page: Page): Promise<string[]> {
    await page.locator('#plans button.plan').first().waitFor()
    return (await page.locator('#plans button.plan').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())
  }

  /** Waits until the pay code's image has loaded. */
  async function payCodeLoaded(page: Page) {
    await page.waitForFunction(`(() => {
      const img = document.getElementById('pay-qr')
      return document.getElementById('card').dataset.state === 'paying' && img.complete && img.naturalWidth > 0
    })()`)
  }

  /** The answers of POST /auth/purchase the page received, in order. */
  function purchaseAnswers(page: Page): Array<Promise<{ status: number; body: Record<string, unknown> }>> {
    const answers: Array<Promise<{ status: number; body: Record<string, unknown> }>> = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/auth/purchase') answers.push(response.json().then((body: Record<string, unknown>) => ({ status: response.status(), body })))
    })
    return answers
  }

  /** The status of `GET /auth/session` for `token`. */
  async function sessionStatus(url: string, token: string): Promise<number> {
    const res = await fetch(`${url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })
    await res.arrayBuffer()
    return res.status
  }

  /** The scanauth requests the page makes (`/auth/...`, path and query), in order. */
  function authRequests(page: Page): string[] {
    const seen: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname.startsWith('/auth/')) seen.push(`${url.pathname}${url.search}`)
    })
    return seen
  }

  /** How the page waits for the scan of its current scene (`sse`, `long-poll` or `poll`). */
  const transportOf = (page: Page) => page.locator('#card').getAttribute('data-transport')

  const savedToken = (page: Page) => page.evaluate(`localStorage.getItem('scanauth.session')`) as Promise<string | null>

  /**
   * Every visible button lies inside the viewport with its whole label (nothing cut off at either
   * side or below), and the page does not scroll sideways.
   */
  async function expectNoClippedButton(page: Page, width: number) {
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width)
    const clipped = await page.evaluate(`[...document.querySelectorAll('button')]
      .filter((b) => b.offsetParent !== null)
      .map((b) => ({ label: b.textContent, box: b.getBoundingClientRect(), sw: b.scrollWidth, cw: b.clientWidth, sh: b.scrollHeight, ch: b.clientHeight }))
      .filter((b) => b.box.left < 0 || b.box.right > ${width} || b.sw > b.cw || b.sh > b.ch)
      .map((b) => b.label)`)
    expect(clipped).toEqual([])
  }

  it('fits a phone screen', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    try {
      await page.goto(server.url)
      await qrLoaded(page)
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
      await page.screenshot({ path: `${OUTPUT}0-phone-pending.png` })
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).tap()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      await page.screenshot({ path: `${OUTPUT}0-phone-authorized.png` })
    } finally {
      await context.close()
    }
  })

  it('shows the code, is scanned by the emulated phone, and shows "Authorized"', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    try {
      await page.goto(server.url)
      const scene = await qrLoaded(page)
      expect(scene).toMatch(/^pc_[0-9a-f]{32}$/)
      expect(await page.evaluate(`document.getElementById('qr').naturalWidth`)).toBeGreaterThan(0)
      await expect.poll(() => page.locator('#status-text').textContent()).toMatch(/Waiting for a scan/)
      await page.screenshot({ path: `${OUTPUT}1-pending.png` })

      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      const facts = await page.locator('#facts').innerText()
      expect(facts).toContain('Time pass')
      expect(facts).toContain('Valid until')
      expect(facts).toMatch(/Session\s+\S{6}…\S{4}/)
      await page.screenshot({ path: `${OUTPUT}2-authorized.png` })

      // A reload keeps the session (the token is in localStorage) and the device id.
      const deviceId = await page.evaluate(`localStorage.getItem('scanauth.device_id')`)
      expect(deviceId).toMatch(/^web-[0-9a-f]{32}$/)
      await page.reload()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(await page.evaluate(`localStorage.getItem('scanauth.device_id')`)).toBe(deviceId)

      // Eight days later the free trial is over: the same phone scans a new code.
      offset += 8 * DAY
      await page.getByRole('button', { name: 'Sign out' }).click()
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
      await page.screenshot({ path: `${OUTPUT}3-need-purchase.png` })

      // A code that expires is replaced a few times without asking, then the page asks.
      await page.getByRole('button', { name: 'New code' }).click()
      let current = await qrLoaded(page)
      // The server's clock jumps past the deadline, but the timer that tells waiters of expiry runs
      // in real time (B-wait-1); a poll from elsewhere (the test's) commits the expiry, and the
      // store's change notification brings it to the page's stream at once (B-wait-4).
      const expireNow = async (sceneStr: string | undefined) => {
        offset += 301 * 1000
        expect(await server.wiring.auth.getStatus(sceneStr as string)).toEqual({ status: 'expired' })
      }
      for (let refresh = 0; refresh < 3; refresh++) {
        await expireNow(current)
        await expect.poll(() => sceneOf(page), { timeout: 20_000 }).not.toBe(current)
        current = await qrLoaded(page)
      }
      await expireNow(current)
      await page.getByText('This code has expired.').waitFor()
      expect(await page.locator('#card').getAttribute('data-state')).toBe('expired')
      await page.screenshot({ path: `${OUTPUT}4-expired.png` })

      // The platform fails: the page says why and offers to try again.
      server.wiring.emulator!.failNext('qrcode/create', { errcode: 45009, errmsg: 'api freq out of limit' })
      await page.getByRole('button', { name: 'New code' }).click()
      await page.getByText('No code could be created.').waitFor()
      expect(await page.locator('#status-text').textContent()).toMatch(/QR code creation failed.*45009/)
      await page.screenshot({ path: `${OUTPUT}5-error.png` })
      await page.getByRole('button', { name: 'Try again' }).click()
      await qrLoaded(page)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('waits for the scan on one event stream: no polls, and "Authorized" as soon as the scan lands', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const requests = authRequests(page)
    try {
      const streamed = page.waitForResponse((response) => new URL(response.url()).pathname === '/auth/events')
      await page.goto(server.url)
      const scene = (await qrLoaded(page)) as string
      // The stream is open: its headers came back, and the page said which way it waits.
      const response = await streamed
      expect(response.status()).toBe(200)
      expect(response.headers()['content-type']).toMatch(/^text\/event-stream/)
      expect(await transportOf(page)).toBe('sse')

      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      // One stream for the whole wait, and not a single poll.
      expect(requests).toEqual(['/auth/create_scene', `/auth/events?scene=${scene}`])
      // The session came over the stream: it is the one the server made for this scene.
      const token = (await savedToken(page)) as string
      expect(await server.wiring.auth.getStatus(scene)).toMatchObject({ status: 'authorized', sessionToken: token })
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('waits on the long poll in a browser without EventSource', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    // (Page-side code as a string: this project's TypeScript has no DOM types.)
    await context.addInitScript('delete window.EventSource')
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const requests = authRequests(page)
    const statusAnswers: unknown[] = []
    page.on('response', async (response) => {
      if (new URL(response.url()).pathname === '/auth/status') statusAnswers.push(await response.json().catch(() => null))
    })
    try {
      expect(await page.evaluate('typeof window.EventSource')).toBe('undefined')
      const longPoll = page.waitForRequest((request) => new URL(request.url()).pathname === '/auth/status')
      await page.goto(server.url)
      const scene = (await qrLoaded(page)) as string
      // The page is waiting in a long poll (the server holds it until the scan).
      await longPoll
      expect(await transportOf(page)).toBe('long-poll')

      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      await expect.poll(() => statusAnswers.at(-1)).toMatchObject({ status: 'authorized', session_token: await savedToken(page) })
      // No stream was tried, and every status request was a long poll of this scene.
      const waits = requests.filter((path) => path.startsWith('/auth/status'))
      expect(requests).toEqual(['/auth/create_scene', ...waits])
      expect(waits.length).toBeGreaterThanOrEqual(1)
      expect(new Set(waits)).toEqual(new Set([`/auth/status?scene=${scene}&wait=25`]))
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('falls back from a failing stream to the long poll, and from a failing long poll to polling', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const requests = authRequests(page)
    // A proxy in the way that refuses the stream and answers the long poll 502.
    await page.route('**/auth/events?*', (route) => route.abort())
    await page.route(/\/auth\/status\?.*wait=/, (route) => route.fulfill({ status: 502, contentType: 'text/plain', body: 'Bad Gateway' }))
    try {
      await page.goto(server.url)
      const scene = (await qrLoaded(page)) as string
      await expect.poll(() => transportOf(page), { timeout: 20_000 }).toBe('poll')
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor({ timeout: 30_000 })
      // The stream once, the long poll once, then plain polls until the scan.
      expect(requests.slice(0, 3)).toEqual(['/auth/create_scene', `/auth/events?scene=${scene}`, `/auth/status?scene=${scene}&wait=25`])
      expect(requests.slice(3).length).toBeGreaterThanOrEqual(1)
      expect(new Set(requests.slice(3))).toEqual(new Set([`/auth/status?scene=${scene}`]))
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('buys a plan when a purchase is needed: plan cards, the pay code, the emulated phone pays, "Authorized"; then signs out', async () => {
    const { running: shop, clock } = await shortTrialServer()
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const purchases = purchaseAnswers(page)
    try {
      await page.goto(shop.url)
      await reachPurchaseNeeded(page, clock)
      const openid = (await page.evaluate(`localStorage.getItem('scanauth.demo_openid')`)) as string
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
      expect(await transportOf(page)).toBe('sse')
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
    const { running: shop, clock } = await shortTrialServer()
    const context = await browser.newContext({ viewport: { width: 320, height: 640 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
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
    const { running: shop, clock } = await shortTrialServer({
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
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    try {
      await page.goto(shop.url)
      await reachPurchaseNeeded(page, clock)
      await page.getByRole('button', { name: /30 days of access/ }).click()
      await expect.poll(() => page.locator('#status-text').innerText()).toMatch(/^The payment service failed to /)
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

  it("the emulator's page lists the scans it made, newest first", async () => {
    const emulator = server.wiring.emulator!
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    try {
      const { sceneStr } = await server.wiring.auth.createScene({ deviceId: 'emulator-page' })
      await emulator.scan({ sceneStr, openid: 'o_listed_on_the_page' })
      await page.goto(emulator.url)
      const firstRow = page.locator('#scans tbody tr').first()
      await firstRow.waitFor()
      const cells = await firstRow.locator('td').allInnerTexts()
      expect(cells[1]).toContain(sceneStr)
      expect(cells[2]).toBe('o_listed_on_the_page')
      expect(cells[3]).toMatch(/^HTTP 200/)
      expect(await page.locator('#scans tbody tr').count()).toBe(emulator.scans().length)
      await page.screenshot({ path: `${OUTPUT}14-emulator-scans.png`, fullPage: true })
    } finally {
      await context.close()
    }
  })
})
