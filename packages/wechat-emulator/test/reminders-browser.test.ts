// Reminders on the emulated phone in Chromium (Debian's, through playwright-core; never a download):
// the subscribemsg confirm page's buttons send the phone back to the app as WeChat does, and a
// message from the account, shown in the page's chat, opens its link as the person it was sent to.
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWechatEmulator, SUBSCRIBE_CONFIRM_PATH, type WechatEmulator } from '../src/index'
import { closer } from './closer'

const CHROMIUM = '/usr/bin/chromium'
// Without chromium (apt-get install -y chromium) the test is skipped on a workstation, but fails in CI.
const missing = !existsSync(CHROMIUM)
if (missing && !process.env.CI) console.warn(`reminders browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

const ACCOUNT = { appId: 'wx_emulator_remind_browser', appSecret: 'the-secret', token: 'push-token' }
const resources = closer()

/** The app: every page says where the phone landed (path and query), as text. */
async function appServer(): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>app</title><pre id="landed">${(req.url ?? '').replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</pre>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe.skipIf(missing && !process.env.CI)('reminders on the emulated phone in chromium', () => {
  let browser: Browser
  let emulator: WechatEmulator
  let app: string

  beforeAll(async () => {
    emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, demoOpenid: 'o_phone_user' }))
    app = await appServer()
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await resources.closeAll()
  })

  const confirmLink = () =>
    `${emulator.url}${SUBSCRIBE_CONFIRM_PATH}?action=get_confirm&appid=${ACCOUNT.appId}&scene=2&template_id=SUB&redirect_url=${encodeURIComponent(`${app}/m/subscribed`)}&reserved=Xy9#wechat_redirect`

  it('Confirm sends the phone back to the app with its openid, and records the confirmation; Cancel without', async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(confirmLink())
      expect(await page.getByText('You are o_phone_user').count()).toBe(1)
      await page.getByRole('button', { name: 'Confirm' }).click()
      await page.waitForURL(`${app}/m/subscribed?**`)
      expect(await page.locator('#landed').innerText()).toBe('/m/subscribed?openid=o_phone_user&template_id=SUB&action=confirm&scene=2&reserved=Xy9')
      expect(emulator.subscriptions()).toMatchObject([{ openid: 'o_phone_user', templateId: 'SUB', scene: '2' }])

      await context.addCookies([{ name: 'wxemu_openid', value: 'o_cookie_user', url: emulator.url }])
      await page.goto(confirmLink())
      expect(await page.getByText('You are o_cookie_user').count()).toBe(1)
      await page.getByRole('button', { name: 'Cancel' }).click()
      await page.waitForURL(`${app}/m/subscribed?**`)
      expect(await page.locator('#landed').innerText()).toBe('/m/subscribed?template_id=SUB&action=cancel&scene=2&reserved=Xy9')
      expect(emulator.subscriptions()).toHaveLength(1)
    } finally {
      await context.close()
    }
  })

  it('a message in the chat opens its link as the person it was sent to', async () => {
    const token = ((await (await fetch(`${emulator.url}/cgi-bin/stable_token`, { method: 'POST', body: JSON.stringify({ grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret }) })).json()) as { access_token: string }).access_token
    emulator.setUser('o_reader', { follows: true })
    const sent = await fetch(`${emulator.url}/cgi-bin/message/template/send?access_token=${token}`, {
      method: 'POST',
      body: JSON.stringify({ touser: 'o_reader', template_id: 'TPL', url: `${app}/m/pay`, data: { keyword1: { value: 'Access ending' } } }),
    })
    expect(((await sent.json()) as { errcode: number }).errcode).toBe(0)
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(emulator.url)
      const message = page.locator('#messages .message').first()
      expect(await message.locator('.muted').innerText()).toMatch(/to o_reader · template message$/)
      expect(await message.locator('.bubble').innerText()).toContain('keyword1: Access ending')
      await message.getByRole('link', { name: 'Open' }).click()
      await page.waitForURL(`${app}/m/pay`)
      // The receiver is now the phone's user: the web OAuth and confirm pages see o_reader.
      expect((await context.cookies(emulator.url)).find((c) => c.name === 'wxemu_openid')?.value).toBe('o_reader')
    } finally {
      await context.close()
    }
  })
})
