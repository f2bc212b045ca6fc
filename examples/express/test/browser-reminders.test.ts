// Reminders before access ends, in a real browser, fully emulated (docs/reminders.md; docs/behaviour.md
// B-remind-1…10). The Express example runs as a person starts it (`npm start`, its own process) with a
// short free trial and a shorter lead (SCANAUTH_FREE_TRIAL_DAYS=0.0006 ≈ 52 s, SCANAUTH_REMINDERS=0.0003
// ≈ 26 s) and a pass every second (SCANAUTH_REMINDERS_INTERVAL_SECONDS=1). In Chromium: the demo page
// signs in with the emulated phone and offers the emulated phone's chat; there the reply's "Remind me
// before it ends" opens the emulator's one-time subscription page; Confirm comes back to the app's
// /auth/m/subscribed, "You will be reminded". When the trial comes within the lead, the server's timer
// sends the reminder, which the emulated phone's chat shows, and its link opens the plans to renew.
// Screenshots go to examples/express/test-output/ (not committed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchChromium, OUTPUT, pageErrors, qrLoaded, skipBrowser, startExample, type StartedExample } from './browser-support'

/** The trial and the lead, in days, and the pass's interval in seconds: the reminder is due about 26 s after the scan. */
const TRIAL_DAYS = '0.0006'
const LEAD_DAYS = '0.0003'
const DUE_AFTER_MS = (Number(TRIAL_DAYS) - Number(LEAD_DAYS)) * 86_400_000

describe.skipIf(skipBrowser)('reminders before access ends in chromium, fully emulated', () => {
  let browser: Browser
  let app: StartedExample

  beforeAll(async () => {
    app = await startExample({ SCANAUTH_FREE_TRIAL_DAYS: TRIAL_DAYS, SCANAUTH_REMINDERS: LEAD_DAYS, SCANAUTH_REMINDERS_INTERVAL_SECONDS: '1' })
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await app?.stop()
  })

  it('"Remind me before it ends" in the emulated chat, Confirm, "You will be reminded"; near the end the reminder arrives there, and its link renews', { timeout: 120_000 }, async () => {
    expect(app.output()).toMatch(/reminders 0\.0003 days before access ends, a pass every 1 s: one-time subscription \S+, template \S+, customer-service; links to the phone pages \(\/auth\/m\/\) at the listening address/)
    const context = await browser.newContext({ viewport: { width: 960, height: 900 } })
    const page = await context.newPage()
    const errors = pageErrors(page)
    try {
      await page.goto(app.url)
      await qrLoaded(page)
      await page.getByRole('button', { name: 'Scan with the emulated phone' }).click()
      const scannedAt = Date.now()
      await page.getByRole('heading', { name: 'Authorized' }).waitFor()
      // The card offers the emulated phone, whose chat has the reply with the link.
      const open = page.getByRole('link', { name: 'Open the emulated phone to be reminded' })
      await open.waitFor()
      expect(await open.getAttribute('href')).toBe(`${app.wechatUrl}/`)
      expect(await page.locator('#remind-hint').isVisible()).toBe(true)
      await page.screenshot({ path: `${OUTPUT}reminders-1-authorized.png` })

      const tab = context.waitForEvent('page')
      await open.click()
      const phone = await tab
      await phone.waitForLoadState()
      const phoneErrors = pageErrors(phone)
      const remind = phone.locator('.bubble a', { hasText: 'Remind me before it ends' }).first()
      await remind.waitFor()
      await phone.screenshot({ path: `${OUTPUT}reminders-2-chat.png` })
      await remind.click()
      // The emulator's one-time subscription page, for the phone's user: Confirm.
      await phone.getByRole('button', { name: 'Confirm' }).waitFor()
      expect(new URL(phone.url()).pathname).toBe('/mp/subscribemsg')
      expect(await phone.getByText('You are o_emulator_demo_user').count()).toBe(1)
      await phone.screenshot({ path: `${OUTPUT}reminders-3-confirm.png` })
      await phone.getByRole('button', { name: 'Confirm' }).click()
      await phone.getByRole('heading', { name: 'You will be reminded' }).waitFor()
      const landed = new URL(phone.url())
      expect(`${landed.origin}${landed.pathname}`).toBe(`${app.url}/auth/m/subscribed`)
      expect(landed.searchParams.get('action')).toBe('confirm')
      await phone.screenshot({ path: `${OUTPUT}reminders-4-subscribed.png` })
      // Confirmed well before the reminder is due: it goes out as the one-time subscription message.
      expect(Date.now() - scannedAt).toBeLessThan(DUE_AFTER_MS)

      // Back in the chat: the server's timer sends the reminder once the end is within the lead.
      await phone.goto(`${app.wechatUrl}/`)
      const message = phone.locator('#messages .message[data-channel="subscribe"]').first()
      await message.waitFor({ timeout: DUE_AFTER_MS + 20_000 })
      expect(Date.now() - scannedAt).toBeGreaterThanOrEqual(DUE_AFTER_MS - 1000)
      expect(await message.locator('.muted').innerText()).toMatch(/to o_emulator_demo_user · one-time subscription message$/)
      expect(await message.locator('.bubble').innerText()).toMatch(/^Access ending\s+Your access ends on \d{4}-\d{2}-\d{2} \d{2}:\d{2} \(UTC\+8\)\. Tap this message to renew\./)
      await phone.screenshot({ path: `${OUTPUT}reminders-5-message.png`, fullPage: true })
      expect(app.output()).toContain('reminders: 1 sent (subscribe 1), 0 unreachable, 0 failed (tried again later); 0 already reminded, 0 renewed; 1 checked')

      // Its link opens the plans on the phone, as the person it was sent to.
      await message.getByRole('link', { name: 'Open' }).click()
      await phone.getByRole('heading', { name: 'Buy time or points' }).waitFor()
      const renew = new URL(phone.url())
      expect(`${renew.origin}${renew.pathname}`).toBe(`${app.url}/auth/m/pay`)
      await phone.screenshot({ path: `${OUTPUT}reminders-6-renew.png` })
      // One message per lead: later passes send nothing more.
      await new Promise((ok) => setTimeout(ok, 2500))
      expect(app.output().match(/ reminders: \d+ sent/g)).toHaveLength(1)
      expect(errors).toEqual([])
      expect(phoneErrors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
