/**
 * Reminders before access ends in the example server, the same for Express and Koa (docs/reminders.md;
 * docs/behaviour.md B-remind-1…10): `SCANAUTH_REMINDERS` turns them on. Fully emulated, the scan's
 * reply offers "Remind me before it ends" (the emulator's subscription confirm page, back to the app's
 * `/auth/m/subscribed`), and a pass sends the one-time subscription message, or a template message to
 * a follower, to the emulated phone, with the renewal link. With a "real" Official Account (an
 * emulator the test starts, reached only through `WECHAT_API_BASE`) and real WeChat Pay (another,
 * through the `WECHATPAY_*` variables), the links name `SCANAUTH_PUBLIC_URL`. The clock is moved days
 * ahead rather than waited out; the timer is tested with a short interval.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createPendingScene, eventually, fetchJson, postJson } from '@scanauth/testkit'
import { startWechatEmulator, startWechatPayEmulator, type WechatEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { configFromEnv, type ExampleConfig } from '../src/config'
import { EMULATED_RENEWAL_TEMPLATE_ID, EMULATED_SUBSCRIBE_TEMPLATE_ID } from '../src/reminder-wiring'
import type { RunningServer } from '../src/serve'
import type { StartServer } from './app-suite'
import { phoneGet, type Phone } from './phone-support'

const DAY = 86_400_000

/** The "Remind me before it ends" link of a scan's reply, or undefined. */
export function remindLinkOf(reply: string | null | undefined): string | undefined {
  return /<a href="([^"]+)">Remind me before it ends<\/a>/.exec(reply ?? '')?.[1]?.replaceAll('&amp;', '&')
}

/** Registers the reminders suite for `framework`, run against its `startServer`. */
export function describeExampleReminders(framework: 'express' | 'koa', startServer: StartServer): void {
  const running: RunningServer[] = []
  const emulators: Array<WechatEmulator | WechatPayEmulator> = []
  const temp: string[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
    await Promise.all(emulators.splice(0).map((e) => e.close()))
    for (const dir of temp.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** A fully emulated server with reminders, on a clock the test moves (`clock.ahead` ms ahead of real time). */
  async function start(overrides: Partial<ExampleConfig> = {}) {
    const lines: string[] = []
    const clock = { ahead: 0 }
    const server = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      wechat: { kind: 'emulator' },
      now: () => Date.now() + clock.ahead,
      log: (line) => lines.push(line),
      reminders: { leadDays: [3, 1], everyMs: false },
      ...overrides,
    })
    running.push(server)
    return { server, url: server.url, emulator: server.wiring.emulator!, lines, log: () => lines.join('\n'), clock }
  }

  /** `openid` scans a new code with `wechat` (a push to the callback): authorized; answers the reply. */
  async function scanIn(url: string, wechat: Pick<WechatEmulator, 'scan'>, openid: string): Promise<string | null> {
    const scene = (await createPendingScene(url, `${framework}-tv`)).scene_str as string
    const push = await wechat.scan({ sceneStr: scene, openid })
    expect(push.status).toBe(200)
    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })
    return push.reply?.Content ?? null
  }

  describe(`the ${framework} example's reminders before access ends`, () => {
    it('emulated: the scan offers "Remind me before it ends"; confirmed, a pass sends the one-time message with the renewal link, once per lead', async () => {
      const { server, url, emulator, log, clock } = await start()
      expect(log()).toContain(
        `reminders 3, 1 days before access ends, no timer (SCANAUTH_REMINDERS_INTERVAL_SECONDS=0: run scanauth reminders from cron): one-time subscription ${EMULATED_SUBSCRIBE_TEMPLATE_ID}, template ${EMULATED_RENEWAL_TEMPLATE_ID}, customer-service; links to the phone pages (/auth/m/) at the listening address`,
      )
      expect((await fetchJson(`${url}/demo/config`)).body).toMatchObject({ reminders: true })

      // The demo page's scan: the reply links, and the page gets the emulated phone's chat for it.
      const scene = (await createPendingScene(url, `${framework}-tv`)).scene_str as string
      const scan = await postJson(`${url}/demo/emulator-scan`, { scene_str: scene, openid: 'o_emulator_demo_user' })
      expect(scan.body).toMatchObject({ scanned: scene, phone_url: `${emulator.url}/` })
      const link = remindLinkOf(scan.body.reply as string)
      expect(link).toMatch(new RegExp(`^${emulator.url}/mp/subscribemsg\\?action=get_confirm&appid=\\w+&scene=1&template_id=${EMULATED_SUBSCRIBE_TEMPLATE_ID}&redirect_url=${encodeURIComponent(`${url}/auth/m/subscribed`)}&reserved=[0-9a-f]{32}#wechat_redirect$`))

      // The phone taps it and Confirm: WeChat (the emulator) sends it back to the app's page.
      const landed = await emulator.confirmSubscription(link!, { openid: 'o_emulator_demo_user' })
      expect(landed).toMatch(new RegExp(`^${url}/auth/m/subscribed\\?openid=o_emulator_demo_user&template_id=${EMULATED_SUBSCRIBE_TEMPLATE_ID}&action=confirm&scene=1&reserved=[0-9a-f]{32}$`))
      const page = await fetch(landed)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<h1>You will be reminded</h1>')
      // The same redirect again stores nothing (the state is spent): refused.
      const replay = await fetch(landed)
      expect(replay.status).toBe(403)
      await replay.arrayBuffer()

      // Nothing is due yet.
      expect(await server.wiring.sendReminders()).toMatchObject({ checked: 0, due: 0, sent: 0 })
      // 4.5 days on, the trial (7 days) ends within 3: the one-time message, its link renewing on the phone.
      clock.ahead = 4.5 * DAY
      expect(await server.wiring.sendReminders()).toMatchObject({ checked: 1, due: 1, sent: 1, byChannel: { subscribe: 1 } })
      expect(log()).toContain('reminders: 1 sent (subscribe 1), 0 unreachable, 0 failed (tried again later); 0 already reminded, 0 renewed; 1 checked')
      const [message] = emulator.messages()
      expect(message).toMatchObject({ channel: 'subscribe', openid: 'o_emulator_demo_user', templateId: EMULATED_SUBSCRIBE_TEMPLATE_ID, title: 'Access ending', url: `${url}/auth/m/pay` })
      expect(message!.text).toMatch(/^Your access ends on \d{4}-\d{2}-\d{2} \d{2}:\d{2} \(UTC\+8\)\. Tap this message to renew\.$/)
      const phone: Phone = { openid: 'o_emulator_demo_user', wechatUrl: emulator.url, serverUrl: url }
      const plans = await phoneGet(phone, message!.url!)
      expect(plans.status, plans.text).toBe(200)
      expect(plans.text).toContain('Buy time or points')

      // Once per lead: the same lead later is nothing new; the next lead, a day before, is the
      // template message (the confirmation is spent; the demo user follows the account).
      clock.ahead = 4.6 * DAY
      expect(await server.wiring.sendReminders()).toMatchObject({ due: 0, skipped: { already_reminded: 1 } })
      clock.ahead = 6.5 * DAY
      expect(await server.wiring.sendReminders()).toMatchObject({ due: 1, sent: 1, byChannel: { template: 1 } })
      expect(emulator.messages().map((m) => [m.channel, m.url])).toEqual([
        ['subscribe', `${url}/auth/m/pay`],
        ['template', `${url}/auth/m/pay`],
      ])
      expect(emulator.messages()[1]!.data).toEqual({ first: 'Access ending', keyword1: 'Access', keyword2: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/), remark: 'Tap to renew' })
      // A dry run says who is due and sends nothing.
      expect(await server.wiring.sendReminders({ dryRun: true })).toMatchObject({ due: 1, planned: [{ kind: 'time', leadDays: 1 }] })
      expect(emulator.messages()).toHaveLength(2)
      expect(log()).toContain('(dry run: 1 due, nothing sent)')
    })

    it('runs a pass on its timer and logs what it sent; a pass with nothing due stays quiet', async () => {
      const { url, emulator, lines, clock } = await start({ reminders: { leadDays: [1], everyMs: 30 } })
      expect(lines.join('\n')).toContain('reminders 1 day before access ends, a pass every 0.03 s: ')
      await scanIn(url, emulator, 'o_timer_follower')
      await new Promise((ok) => setTimeout(ok, 150))
      expect(lines.filter((line) => / reminders(:| failed)/.test(line))).toEqual([])
      clock.ahead = 6.5 * DAY
      await eventually('a pass that sent the template message', () => lines.some((line) => line.includes(' reminders: 1 sent (template 1), 0 unreachable')))
      expect(emulator.messages().map((m) => [m.openid, m.channel])).toEqual([['o_timer_follower', 'template']])
      await new Promise((ok) => setTimeout(ok, 150))
      expect(emulator.messages()).toHaveLength(1)
      expect(lines.filter((line) => / reminders: /.test(line))).toHaveLength(1)
    })

    it('without SCANAUTH_REMINDERS: no link in the reply, no /auth/m/subscribed, and a pass is refused', async () => {
      const { server, url, emulator, log } = await start({ reminders: undefined })
      expect(log()).not.toMatch(/ reminders /)
      expect((await fetchJson(`${url}/demo/config`)).body).toMatchObject({ reminders: false })
      expect(remindLinkOf(await scanIn(url, emulator, 'o_no_reminders'))).toBeUndefined()
      const subscribed = await fetch(`${url}/auth/m/subscribed?action=cancel&template_id=x&scene=1`)
      expect(subscribed.status).toBe(404)
      await subscribed.arrayBuffer()
      await expect(server.wiring.sendReminders()).rejects.toMatchObject({ code: 'reminders_not_configured' })
    })

    it('from the environment, against a "real" Official Account and real WeChat Pay: the links name SCANAUTH_PUBLIC_URL, the templates and fields are the variables\'', async () => {
      const clock = { ahead: 0 }
      const now = () => Date.now() + clock.ahead
      const account = await startWechatEmulator({
        port: 0,
        host: '127.0.0.1',
        appId: 'wx_remind_app',
        appSecret: 'real-secret',
        token: 'real-token',
        now,
        subscribeTemplateId: 'SUB_real_0001',
        templateIds: ['TPL_real_0002'],
      })
      emulators.push(account)
      const pay = await startWechatPayEmulator({ mchid: '1230000109', appid: 'wx_remind_app', now })
      emulators.push(pay)
      const dir = mkdtempSync(join(tmpdir(), `scanauth-remind-${framework}-`))
      temp.push(dir)
      writeFileSync(join(dir, 'apiclient_key.pem'), pay.merchantKey!.privateKeyPem)
      writeFileSync(join(dir, 'pub_key.pem'), pay.verificationKeys[pay.platformSerial]!)
      const env = {
        PORT: '0',
        SCANAUTH_STORE: 'memory',
        WECHAT_APP_ID: 'wx_remind_app',
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
        SCANAUTH_REMINDERS: '3,1',
        SCANAUTH_REMINDERS_INTERVAL_SECONDS: '0',
        WECHAT_SUBSCRIBE_TEMPLATE_ID: 'SUB_real_0001',
        WECHAT_TEMPLATE_ID_RENEWAL: 'TPL_real_0002',
        WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"headline","time2":"ends","thing3":"action"}',
      }
      const serve = async (more: Record<string, string>) => {
        const lines: string[] = []
        const server = await startServer({ ...configFromEnv({ ...env, ...more }), now, log: (line) => lines.push(line) })
        running.push(server)
        await account.setCallbackUrl(`${server.url}/wechat/callback`)
        return { server, url: server.url, log: () => lines.join('\n') }
      }

      // No public address: reminders go without links, no "remind me" is offered, and the log says so.
      const hidden = await serve({})
      expect(hidden.log()).toContain('reminders 3, 1 days before access ends, no timer (SCANAUTH_REMINDERS_INTERVAL_SECONDS=0: run scanauth reminders from cron): one-time subscription SUB_real_0001, template TPL_real_0002, customer-service; no links (set SCANAUTH_PUBLIC_URL, the public https address)')
      expect(hidden.log()).toContain('reminders: no public address (SCANAUTH_PUBLIC_URL): messages carry no renewal link, and no "remind me" link is offered')
      expect(remindLinkOf(await scanIn(hidden.url, account, 'o_real_unlinked'))).toBeUndefined()
      await hidden.server.close()

      // Behind a proxy at https://app.example: WeChat's own confirm page, coming back to the public address.
      const publicUrl = 'https://app.example'
      const { server, url, log } = await serve({ SCANAUTH_PUBLIC_URL: publicUrl })
      expect(log()).toContain('customer-service; links to the phone pages at https://app.example/auth/m/')
      const link = remindLinkOf(await scanIn(url, account, 'o_real_subscriber'))
      expect(link).toMatch(/^https:\/\/mp\.weixin\.qq\.com\/mp\/subscribemsg\?action=get_confirm&appid=wx_remind_app&scene=1&template_id=SUB_real_0001&redirect_url=https%3A%2F%2Fapp\.example%2Fauth%2Fm%2Fsubscribed&reserved=[0-9a-f]{32}#wechat_redirect$/)
      // WeChat's redirect, forged: a state we never issued, a template we never offered. Nothing stored.
      const reserved = new URL(link!).searchParams.get('reserved')!
      const forged = await fetch(`${url}/auth/m/subscribed?openid=o_real_subscriber&template_id=SUB_real_0001&action=confirm&scene=1&reserved=${'f'.repeat(32)}`)
      expect(forged.status).toBe(403)
      await forged.arrayBuffer()
      const other = await fetch(`${url}/auth/m/subscribed?openid=o_real_subscriber&template_id=TPL_other&action=confirm&scene=1&reserved=${reserved}`)
      expect(other.status).toBe(400)
      await other.arrayBuffer()
      // The phone confirms at the confirm page (the emulator plays WeChat's), which sends it to the public address.
      const landed = await account.confirmSubscription(link!.replace('https://mp.weixin.qq.com', account.url), { openid: 'o_real_subscriber' })
      expect(landed).toBe(`${publicUrl}/auth/m/subscribed?openid=o_real_subscriber&template_id=SUB_real_0001&action=confirm&scene=1&reserved=${reserved}`)
      const page = await fetch(`${url}${landed.slice(publicUrl.length)}`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('You will be reminded')
      await scanIn(url, account, 'o_real_follower')

      clock.ahead = 4.5 * DAY
      expect(await server.wiring.sendReminders()).toMatchObject({ due: 2, sent: 2, byChannel: { subscribe: 1, template: 1 } })
      const messages = account.messages()
      expect(messages.map((m) => [m.openid, m.channel, m.templateId, m.url])).toEqual([
        ['o_real_subscriber', 'subscribe', 'SUB_real_0001', `${publicUrl}/auth/m/pay`],
        ['o_real_follower', 'template', 'TPL_real_0002', `${publicUrl}/auth/m/pay`],
      ])
      expect(messages[1]!.data).toEqual({ thing1: 'Access ending', time2: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/), thing3: 'Tap to renew' })
      // The renewal link opens the plans on the phone (paying there is on: WeChat and WeChat Pay are both real).
      const phone: Phone = { openid: 'o_real_follower', wechatUrl: account.url, serverUrl: url, publicUrl }
      const plans = await phoneGet(phone, messages[1]!.url!)
      expect(plans.status, plans.text).toBe(200)
      expect(plans.text).toContain('Buy time or points')
    })
  })
}
