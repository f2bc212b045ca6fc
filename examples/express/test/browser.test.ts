// The demo page in a real browser, signing in: the QR image loads, the emulated phone scans,
// "Authorized" appears. The page waits with @scanauth/client (bundled for browsers by the example
// server as /client.js): on the event stream (docs/behaviour.md B-wait-3), on the long poll (B-wait-2)
// behind a proxy that holds the stream silent, on polls when both fail; expired codes are refreshed,
// then the page asks; a platform failure and a rate limit say why. Also the narrowest phone and the
// emulator's own page. The purchase, and an authorization ending while the page is open, are in
// browser-purchase.test.ts. Screenshots go to examples/express/test-output/ (not committed).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import type { RunningServer } from '@scanauth/example-shared'
import { authRequests, clockedServer, DAY, launchChromium, OUTPUT, pageErrors, qrLoaded, savedToken, sceneOf, skipBrowser, transportOf } from './browser-support'

describe.skipIf(skipBrowser)('the demo page in chromium: signing in', () => {
  let browser: Browser
  let server: RunningServer
  let serverClock: { ahead: number } // the server's clock runs ahead by this much, to show expiry

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  // A server for each test: the demo page scans as the emulated phone's one user, whose free trial
  // one test may have used up (or moved past with the clock).
  beforeEach(async () => {
    ;({ running: server, clock: serverClock } = await clockedServer())
  })

  afterEach(async () => {
    await server?.close()
  })

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
    const errors = pageErrors(page)
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
      serverClock.ahead += 8 * DAY
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
        serverClock.ahead += 301 * 1000
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
      expect(await page.locator('#status-text').textContent()).toMatch(/QR code creation failed: the messaging platform refused/)
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
    const errors = pageErrors(page)
    const requests = authRequests(page)
    try {
      const streamed = page.waitForResponse((response) => new URL(response.url()).pathname === '/auth/events')
      await page.goto(server.url)
      const scene = (await qrLoaded(page)) as string
      // The client's stream is open: its headers came back, and its first status said how it waits.
      const response = await streamed
      expect(response.status()).toBe(200)
      expect(response.headers()['content-type']).toMatch(/^text\/event-stream/)
      expect(await transportOf(page)).toBe('events')

      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      // One stream for the whole wait (read by the client from a fetch body), and not a single poll.
      expect(requests).toEqual(['/auth/create_scene', `/auth/events?scene=${scene}`])
      // The session came over the stream: it is the one the server made for this scene.
      const token = (await savedToken(page)) as string
      expect(await server.wiring.auth.getStatus(scene)).toMatchObject({ status: 'authorized', sessionToken: token })
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('falls back to the long poll when a proxy holds the stream silent', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    const requests = authRequests(page)
    // A buffering proxy: the stream's request goes out and nothing ever comes back.
    await page.route('**/auth/events?*', () => {})
    const statusAnswers: unknown[] = []
    page.on('response', async (response) => {
      if (new URL(response.url()).pathname === '/auth/status') statusAnswers.push(await response.json().catch(() => null))
    })
    try {
      await page.goto(server.url)
      const scene = (await qrLoaded(page)) as string
      // The client gives the silent stream 5 s, then long-polls (the server holds it until the scan).
      await page.waitForRequest((request) => new URL(request.url()).pathname === '/auth/status', { timeout: 15_000 })
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(await transportOf(page)).toBe('long-poll')
      await expect.poll(() => statusAnswers.at(-1)).toMatchObject({ status: 'authorized', session_token: await savedToken(page) })
      // The stream once, then only long polls of this scene.
      expect(requests.slice(0, 2)).toEqual(['/auth/create_scene', `/auth/events?scene=${scene}`])
      expect(requests.length).toBeGreaterThanOrEqual(3)
      expect(new Set(requests.slice(2))).toEqual(new Set([`/auth/status?scene=${scene}&wait=25`]))
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('falls back from a refused stream to the long poll, and from a refused long poll to polling', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    const requests = authRequests(page)
    // A proxy in the way that refuses the stream and the long poll (502).
    await page.route('**/auth/events?*', (route) => route.fulfill({ status: 502, contentType: 'text/plain', body: 'Bad Gateway' }))
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

  it('says so when the server refuses a code for a while (429), and offers to try again', async () => {
    // A daily budget of one code, on a clock standing at noon UTC: the second code waits 12 hours,
    // longer than the client waits out, so it answers `rate_limited` at once.
    const { running: limited } = await clockedServer({ dailyQrBudget: 1, now: () => Date.parse('2026-01-01T12:00:00.000Z') })
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(limited.url)
      await qrLoaded(page)
      await page.reload()
      await page.getByText('Too many codes asked for.').waitFor()
      expect(await page.locator('#card').getAttribute('data-state')).toBe('error')
      expect(await page.locator('#status-text').textContent()).toBe("The account's daily QR code budget is used up")
      // "Try again" is there, but held until the budget comes back (midnight UTC, 12 hours on).
      const again = page.getByRole('button', { name: 'Try again' })
      expect([await again.isVisible(), await again.isDisabled()]).toEqual([true, true])
      expect(await page.locator('#overlay-note').textContent()).toMatch(/^Try again in 1[12] h \d\d min$/)
      await page.screenshot({ path: `${OUTPUT}5b-rate-limited.png` })
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await limited.close()
    }
  })

  it('counts a rate limit down and enables "Try again" when it is over', async () => {
    // One code a minute from an address, on a server clock standing at 5 s into a minute: the second
    // code is refused for 55 s (Retry-After), longer than the client waits out, so the page says so.
    const serverClock = { at: Date.parse('2026-01-01T00:00:05.000Z') }
    const { running: limited } = await clockedServer({ createScenePerMinute: 1, now: () => serverClock.at })
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    await page.clock.install() // the page's countdown runs on a clock the test can move
    try {
      await page.goto(limited.url)
      await qrLoaded(page)
      await page.reload()
      await page.getByText('Too many codes asked for.').waitFor()
      expect(await page.locator('#status-text').textContent()).toBe('Too many QR codes requested from this address') // how long: the note
      const again = page.getByRole('button', { name: 'Try again' })
      const note = page.locator('#overlay-note')
      expect(await note.textContent()).toMatch(/^Try again in 5\d s$/)
      expect(await again.isDisabled()).toBe(true)
      await page.screenshot({ path: `${OUTPUT}5c-rate-limited-countdown.png` })
      // A press while it is held does nothing.
      await again.click({ force: true })
      expect(await page.locator('#card').getAttribute('data-state')).toBe('error')

      await page.clock.fastForward(20_000)
      await expect.poll(() => note.textContent()).toMatch(/^Try again in 3\d s$/)
      expect(await again.isDisabled()).toBe(true)

      // The minute is over, on both clocks: "Try again" is enabled and brings a code.
      serverClock.at += 60_000
      await page.clock.fastForward(40_000)
      await expect.poll(() => note.textContent()).toBe('You can try again now.')
      expect(await again.isEnabled()).toBe(true)
      await again.click()
      await qrLoaded(page)
      expect(errors).toEqual([])
    } finally {
      await context.close()
      await limited.close()
    }
  })

  it("the demo's button and the emulator's page scan as the same WeChat user", async () => {
    const emulator = server.wiring.emulator!
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(server.url)
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()

      // Signed out, a new code; the emulator's page scans it as its "Scan as" openid by default.
      await page.getByRole('button', { name: 'Sign out' }).click()
      const scene = await qrLoaded(page)
      const phone = await context.newPage()
      await phone.goto(emulator.url)
      const scanAs = await phone.locator('#openid').inputValue()
      expect(scanAs).toBe('o_emulator_demo_user')
      await phone.getByRole('button', { name: 'Scan', exact: true }).click()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      expect(emulator.scans().map((s) => [s.sceneStr === scene, s.openid])).toEqual([
        [true, scanAs],
        [false, scanAs],
      ])
      expect(errors).toEqual([])
    } finally {
      await context.close()
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
      // What the phone shows: the passive reply; then what the callback answered.
      expect(cells[3]).toContain('Signed in.')
      expect(cells[4]).toMatch(/^HTTP 200/)
      expect(await page.locator('#scans tbody tr').count()).toBe(emulator.scans().length)
      await page.screenshot({ path: `${OUTPUT}14-emulator-scans.png`, fullPage: true })
      // The narrowest phone: nothing overflows sideways.
      await page.setViewportSize({ width: 320, height: 640 })
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
      await page.screenshot({ path: `${OUTPUT}14-emulator-scans-320.png`, fullPage: true })
    } finally {
      await context.close()
    }
  })
})
