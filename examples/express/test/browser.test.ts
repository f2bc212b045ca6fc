// The demo page in a real browser (Debian's chromium through playwright-core; never a download):
// the QR image loads, the emulated phone scans, "Authorized" appears; then the purchase-needed and
// expired states. Screenshots of each state go to examples/express/test-output/ (not committed).
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startServer } from '../src/app'
import type { RunningServer } from '@scanauth/example-shared'

const CHROMIUM = '/usr/bin/chromium'
const OUTPUT = fileURLToPath(new URL('../test-output/', import.meta.url))
const DAY = 24 * 3600 * 1000

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
      for (let refresh = 0; refresh < 3; refresh++) {
        offset += 301 * 1000
        await expect.poll(() => sceneOf(page), { timeout: 20_000 }).not.toBe(current)
        current = await qrLoaded(page)
      }
      offset += 301 * 1000
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

})
