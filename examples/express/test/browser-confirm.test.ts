// Confirm on the phone in a real browser (SCANAUTH_CONFIRM=link, docs/behaviour.md B-confirm-1…12):
// the demo page's code is scanned by the emulated phone, the page hides the code and says
// "confirm on your phone"; the emulator's phone page shows the reply with its link; the link goes
// through the emulated WeChat OAuth to our confirm page, which names the device; Confirm signs the
// demo page in, Deny ends it. Screenshots go to examples/express/test-output/ (not committed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { RunningServer } from '@scanauth/example-shared'
import { clockedServer, launchChromium, OUTPUT, pageErrors, qrLoaded, skipBrowser } from './browser-support'

describe.skipIf(skipBrowser)('the demo page in chromium: confirm on the phone', () => {
  let browser: Browser
  let server: RunningServer

  beforeAll(async () => {
    ;({ running: server } = await clockedServer({ confirm: 'link' }))
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Scans the demo's code with the emulated phone, then opens the phone's chat and taps the link. */
  async function scanAndOpenConfirmPage(context: BrowserContext, page: Page): Promise<{ phone: Page; chat: string }> {
    await qrLoaded(page)
    await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
    await expect.poll(() => page.locator('#status-text').textContent()).toMatch(/Scanned\. Confirm on your phone/)
    expect(await page.locator('#qr-box').isHidden()).toBe(true)
    const phonePromise = context.waitForEvent('page')
    await page.getByRole('link', { name: 'Open the emulated phone to confirm' }).click()
    const phone = await phonePromise
    await phone.waitForLoadState()
    const chat = phone.url()
    // The chat bubble of the passive reply, its link tappable: through WeChat OAuth to the confirm page.
    await phone.locator('.bubble a').first().click()
    await phone.getByRole('heading', { name: 'Sign in on this device?' }).waitFor()
    return { phone, chat }
  }

  it('Confirm on the phone signs the demo page in', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(server.url)
      const { phone } = await scanAndOpenConfirmPage(context, page)
      await page.screenshot({ path: `${OUTPUT}confirm-1-scanned.png` })
      await phone.setViewportSize({ width: 320, height: 640 })
      const deviceId = (await page.evaluate(`localStorage.getItem('scanauth.device_id')`)) as string
      expect(await phone.locator('.device').first().innerText()).toBe(deviceId)
      expect(await phone.locator('dd').nth(1).innerText()).toBe('127.0.0.*')
      // Deny is as prominent as Confirm: the same size.
      const deny = await phone.getByRole('button', { name: 'Deny' }).boundingBox()
      const confirm = await phone.getByRole('button', { name: 'Confirm' }).boundingBox()
      expect(deny?.width).toBe(confirm?.width)
      expect(deny?.height).toBe(confirm?.height)
      expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
      await phone.screenshot({ path: `${OUTPUT}confirm-2-phone-page.png` })
      await phone.getByRole('button', { name: 'Confirm' }).click()
      await phone.getByRole('heading', { name: 'Signed in' }).waitFor()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      await page.screenshot({ path: `${OUTPUT}confirm-3-authorized.png` })
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('Deny on the phone ends the sign-in; a new code can be scanned again', async () => {
    const context = await browser.newContext({ viewport: { width: 960, height: 820 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(server.url)
      const { phone, chat } = await scanAndOpenConfirmPage(context, page)
      await phone.getByRole('button', { name: 'Deny' }).click()
      await phone.getByRole('heading', { name: 'Sign-in denied' }).waitFor()
      await page.getByRole('heading', { name: 'Sign-in denied' }).waitFor()
      await page.screenshot({ path: `${OUTPUT}confirm-4-denied.png` })
      // The link, tapped again, says it was used, and nothing changes.
      await phone.goto(chat)
      await phone.locator('.bubble a').first().click()
      await phone.getByRole('heading', { name: 'Already answered' }).waitFor()
      expect(await page.locator('#result-title').innerText()).toBe('Sign-in denied')
      await page.getByRole('button', { name: 'New code' }).click()
      await qrLoaded(page)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
