/**
 * `scanauth reminders` on a store that a server uses, against the WeChat emulator as a real server:
 * the CLI, a child process, reads the variables the example servers read (the store's and the
 * reminders' `SCANAUTH_REMINDERS`, `WECHAT_APP_ID`, `WECHAT_APP_SECRET`, `WECHAT_API_BASE`,
 * `WECHAT_SUBSCRIBE_TEMPLATE_ID`, `WECHAT_TEMPLATE_ID_RENEWAL`, `WECHAT_TEMPLATE_FIELDS_RENEWAL`,
 * `SCANAUTH_PUBLIC_URL`) and sends through the emulator's send APIs over HTTP. The server offers the
 * "remind me" link in its scan results; the emulator's confirm page sends the phone back to the
 * server's `{base}/m/subscribed`. Passes run at `--now` days ahead, so the free trials (7 days)
 * come near their end without waiting.
 */
import { createWechatReminderNotifier } from '@scanauth/wechat'
import { startWechatEmulator, type WechatEmulator } from '@scanauth/wechat-emulator'
import { closedPort } from '@scanauth/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectRefusal, json, scanauth, succeeds } from './cli'
import { expectRefusedWithoutWrites, type Backend } from './scenario'
import { Device, startServer, type LiveServer } from './server'

const DAY = 86_400_000
const ACCOUNT = { appId: 'wx_cli_reminders', appSecret: 'cli-reminders-secret', token: 'cli-reminders-token' }
const SUBSCRIBE_TEMPLATE = 'SUB_access_ending_0001'
const RENEWAL_TEMPLATE = 'TPL_membership_expiry_0002'
/** The renewal template's fields, as an operator maps them (`WECHAT_TEMPLATE_FIELDS_RENEWAL`). */
const FIELDS = { thing1: 'headline', time2: 'status', thing3: 'action' }

/** Confirmed the one-time subscription; follows no one. */
const ANN = 'o_rem_ann_subscribed'
/** Follows the account. */
const BEN = 'o_rem_ben_follower'
/** Neither: no channel reaches them days ahead. */
const CAL = 'o_rem_cal_unreachable'
/** Renewed: 30 days queued behind the trial. */
const DAN = 'o_rem_dan_renewed'
/** 3 points left, below 5; follows. */
const EVE = 'o_rem_eve_points'
/** 30 days ahead: not near any lead. */
const FAY = 'o_rem_fay_far'

/** Registers the scenario over the store `open` returns. */
export function describeRemindersScenario(name: string, open: () => Promise<Backend>): void {
  describe(`scanauth reminders on ${name} against the WeChat emulator`, () => {
    let backend: Backend
    let server: LiveServer
    let emulator: WechatEmulator
    let t0: number
    /** The servers' environment: the store's variables and the reminders' (no store options on the line). */
    let env: Record<string, string>
    const at = (days: number) => new Date(t0 + days * DAY).toISOString()
    const sentTo = () => emulator.messages().map((m) => [m.openid, m.channel])

    /** `openid` scans a device: the free trial (7 days) and a session; the result carries the "remind me" link. */
    async function scanIn(openid: string): Promise<string | undefined> {
      const device = new Device(server.url, `tv-${openid}`)
      const scan = await server.auth.handleScan({ sceneStr: await device.createScene(), openid })
      expect(scan.result).toBe('authorized')
      return scan.result === 'authorized' ? scan.remindUrl : undefined
    }

    /** `openid` taps "Remind me before it ends" and Confirm: the phone lands on the server's `m/subscribed` page. */
    async function subscribe(openid: string, link: string | undefined): Promise<void> {
      expect(link).toMatch(new RegExp(`^${emulator.url}/mp/subscribemsg\\?action=get_confirm&appid=${ACCOUNT.appId}&scene=1&template_id=${SUBSCRIBE_TEMPLATE}&redirect_url=`))
      const landed = await emulator.confirmSubscription(link as string, { openid })
      expect(landed.startsWith(`${server.url}/auth/m/subscribed?openid=${openid}&`)).toBe(true)
      const page = await fetch(landed)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('You will be reminded')
    }

    beforeAll(async () => {
      emulator = await startWechatEmulator({ port: 0, host: '127.0.0.1', ...ACCOUNT, subscribeTemplateId: SUBSCRIBE_TEMPLATE, templateIds: [RENEWAL_TEMPLATE] })
      backend = await open()
      // The server's reminders: the same account and templates as the CLI's variables say.
      const notifier = createWechatReminderNotifier({
        ...emulator.reminderNotifierOptions(),
        subscribe: { templateId: SUBSCRIBE_TEMPLATE },
        template: { templateId: RENEWAL_TEMPLATE },
      })
      server = await startServer(backend.serverStore, { reminders: { leadDays: [3, 1], pointsBelow: 5, notifier } })
      env = {
        ...backend.storeEnv,
        SCANAUTH_REMINDERS: '3,1',
        SCANAUTH_REMINDERS_POINTS_BELOW: '5',
        WECHAT_APP_ID: ACCOUNT.appId,
        WECHAT_APP_SECRET: ACCOUNT.appSecret,
        WECHAT_API_BASE: emulator.url,
        WECHAT_SUBSCRIBE_TEMPLATE_ID: SUBSCRIBE_TEMPLATE,
        WECHAT_TEMPLATE_ID_RENEWAL: RENEWAL_TEMPLATE,
        WECHAT_TEMPLATE_FIELDS_RENEWAL: JSON.stringify(FIELDS),
        SCANAUTH_PUBLIC_URL: server.url,
      }
      t0 = Date.now()
      emulator.setUser(ANN, { follows: false })
      emulator.setUser(BEN, { follows: true })
      emulator.setUser(CAL, { follows: false })
      emulator.setUser(DAN, { follows: true })
      emulator.setUser(EVE, { follows: true })
      await subscribe(ANN, await scanIn(ANN))
      await scanIn(BEN)
      await scanIn(CAL)
      await scanIn(DAN)
      await server.auth.grant({ openid: DAN, type: 'time', durationSeconds: 30 * 86_400, source: 'purchase' })
      await server.auth.grant({ openid: EVE, type: 'points', points: 3 })
      await server.auth.grant({ openid: FAY, type: 'time', durationSeconds: 30 * 86_400 })
    })

    afterAll(async () => {
      await server?.close()
      await backend?.close()
      await emulator?.close()
    })

    it('refuses a pass it cannot run, in one line, and writes nothing', async () => {
      const without = (name: string) => Object.fromEntries(Object.entries(env).filter(([key]) => key !== name))
      await expectRefusedWithoutWrites(backend, [[['reminders', 'now'], 2, /^scanauth: reminders takes no arguments, not also "now"/], [['reminders', '--now', '2026-13-01T00:00:00Z'], 2, /--now must be an ISO 8601 time/]], env)
      await expectRefusedWithoutWrites(backend, [[['reminders'], 2, /^scanauth: SCANAUTH_REMINDERS is not set/]], without('SCANAUTH_REMINDERS'))
      await expectRefusedWithoutWrites(backend, [[['reminders'], 2, /^scanauth: WECHAT_APP_SECRET must be set too/]], without('WECHAT_APP_SECRET'))
      await expectRefusedWithoutWrites(backend, [[['reminders', '--json'], 2, /SCANAUTH_REMINDERS must be the days before access ends/]], { ...env, SCANAUTH_REMINDERS: '3,1,3' })
      await expectRefusedWithoutWrites(backend, [[['reminders'], 2, /WECHAT_TEMPLATE_FIELDS_RENEWAL must be a JSON object/]], { ...env, WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"price"}' })
      expect(emulator.messages()).toEqual([])
    })

    it('--dry-run: who is due by the rules, and nothing is sent, claimed or recorded', async () => {
      const before = await backend.snapshot()
      const out = await json(['reminders', '--dry-run', '--now', at(6.5)], { env })
      const user = async (openid: string) => (await server.auth.getUser({ openid }))!
      const [ann, ben, cal, eve] = [await user(ANN), await user(BEN), await user(CAL), await user(EVE)]
      expect(out).toMatchObject({
        now: at(6.5),
        dryRun: true,
        leadDays: [3, 1],
        pointsBelow: 5,
        channels: ['subscribe', 'template', 'custom'],
        links: `${server.url}/auth/m/`,
        checked: 5,
        due: 4,
        sent: 0,
        skipped: { already_reminded: 0, renewed: 1, unreachable: 0 },
        failed: 0,
        stopped: false,
        byChannel: {},
        problems: [],
      })
      expect(out.planned).toEqual([
        { userId: ann.id, authorizationId: ann.current?.id, leadDays: 1, kind: 'time' },
        { userId: ben.id, authorizationId: ben.current?.id, leadDays: 1, kind: 'time' },
        { userId: cal.id, authorizationId: cal.current?.id, leadDays: 1, kind: 'time' },
        { userId: eve.id, authorizationId: eve.current?.id, leadDays: null, kind: 'points' },
      ])
      expect(emulator.messages()).toEqual([])
      expect(await backend.snapshot()).toBe(before)
    })

    it('WeChat unreachable: every message failed, tried again by the next pass', async () => {
      const down = { ...env, WECHAT_API_BASE: `http://127.0.0.1:${await closedPort()}` }
      const out = await json(['reminders', '--now', at(4.5)], { env: down })
      expect(out).toMatchObject({ due: 4, sent: 0, failed: 4, stopped: false, skipped: { already_reminded: 0, renewed: 1, unreachable: 0 } })
      // The reasons are the notifier's (the channel and the failure, no openid); each a retry.
      const problems = out.problems as Array<{ outcome: string; reason: string; count: number }>
      for (const problem of problems) expect(problem).toEqual({ outcome: 'retry', reason: expect.stringMatching(/^(subscribe|template): /), count: expect.any(Number) })
      expect(problems.reduce((n, p) => n + p.count, 0)).toBe(4)
      expect(JSON.stringify(problems)).not.toMatch(/o_rem_/)
      expect(emulator.messages()).toEqual([])
    })

    it('a pass 3 days before the end: the subscription to the one who confirmed, template messages to followers, the unreachable recorded; then nobody twice, two processes at once', async () => {
      const out = await json(['reminders', '--now', at(4.5)], { env })
      expect(out).toMatchObject({
        dryRun: false,
        checked: 5,
        due: 4,
        sent: 3,
        byChannel: { subscribe: 1, template: 2 },
        skipped: { already_reminded: 0, renewed: 1, unreachable: 1 },
        failed: 0,
        stopped: false,
      })
      expect(out.problems).toEqual([{ outcome: 'unreachable', reason: expect.stringMatching(/^subscribe: .+; template: errcode 43004 .+; custom: errcode 45015 /), count: 1 }])
      expect(sentTo()).toEqual([
        [ANN, 'subscribe'],
        [BEN, 'template'],
        [EVE, 'template'],
      ])
      const [toAnn, toBen, toEve] = emulator.messages()
      // The one-time subscription: its text says when access ends, its link renews on the phone.
      expect(toAnn).toMatchObject({ templateId: SUBSCRIBE_TEMPLATE, scene: '1', title: 'Access ending', url: `${server.url}/auth/m/pay` })
      expect(toAnn?.text).toMatch(/^Your access ends on \d{4}-\d{2}-\d{2} \d{2}:\d{2} \(UTC\+8\)\. Tap this message to renew\.$/)
      // The template message, with the fields WECHAT_TEMPLATE_FIELDS_RENEWAL maps.
      expect(toBen).toMatchObject({ templateId: RENEWAL_TEMPLATE, url: `${server.url}/auth/m/pay` })
      expect(toBen?.data).toEqual({ thing1: 'Access ending', time2: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/), thing3: 'Tap to renew' })
      expect(toEve?.data).toEqual({ thing1: 'Points running low', time2: '3 points left', thing3: 'Tap to renew' })
      // Ann's confirmation is spent: one confirmation, one message.
      expect(emulator.subscriptions()).toEqual([])

      // The same lead again, from two cron jobs at once: every reminder is claimed already.
      const [first, second] = await Promise.all([json(['reminders', '--now', at(4.6)], { env }), json(['reminders', '--now', at(4.6)], { env })])
      for (const again of [first, second]) expect(again).toMatchObject({ due: 0, sent: 0, failed: 0, skipped: { already_reminded: 4, renewed: 1, unreachable: 0 } })
      expect(emulator.messages()).toHaveLength(3)
    })

    it('a pass a day before the end: the next lead, once; the text says what it did', async () => {
      // Ann confirms again (her link in a new scan's reply); Eve's points were reminded once, for good.
      await subscribe(ANN, await server.auth.remindMeUrl(ANN) ?? undefined)
      const run = await succeeds(['reminders', '--now', at(6.5)], { env })
      const lines = run.stdout.split('\n')
      expect(lines[0]).toBe(
        `reminders at ${at(6.5).replace(/\.\d{3}Z$/, 'Z')} (leads 3, 1 days, below 5 points): 2 sent (subscribe 1, template 1), 1 unreachable, 0 failed; 1 already reminded, 1 renewed; 5 authorizations checked`,
      )
      // Cal: no confirmation, not a follower, no interaction with the account lately.
      expect(lines[1]).toMatch(/^ {2}unreachable {2}1 message {2}subscribe: .+; template: errcode 43004 .+; custom: errcode 45015 .+$/)
      expect(lines.slice(2)).toEqual([''])
      expect(sentTo().slice(3)).toEqual([
        [ANN, 'subscribe'],
        [BEN, 'template'],
      ])
      // Once per lead: the same lead later is nothing new.
      expect((await succeeds(['reminders', '--now', at(6.9)], { env })).stdout).toMatch(/: 0 sent, 0 unreachable, 0 failed; 4 already reminded, 1 renewed; 5 authorizations checked\n$/)
      expect(emulator.messages()).toHaveLength(5)
    })

    it('a store option names the store as for every command; the variables are the servers\'', async () => {
      const noStore = Object.fromEntries(Object.entries(env).filter(([key]) => !(key in backend.storeEnv)))
      const out = await json(['reminders', '--dry-run', '--now', at(6.95), ...backend.storeArgs], { env: noStore })
      // A dry run counts by the rules alone: those reminded already too.
      expect(out).toMatchObject({ dryRun: true, due: 4, skipped: { already_reminded: 0, renewed: 1, unreachable: 0 } })
      expectRefusal(await scanauth(['reminders', '--dry-run'], { env: { ...noStore, SCANAUTH_STORE: 'memory' } }), 2, /SCANAUTH_STORE=memory/)
    })
  })
}
