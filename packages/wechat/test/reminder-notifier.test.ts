// The reminder notifier against the emulator over real HTTP: each channel with WeChat's rules (one
// message per confirmation and scene, followers only, the customer-service window), the error codes
// as the notifier maps them, the access token refreshed once, failures that end the send at once, and
// the order core's memory of unreachable channels sets.
import type { ReminderMessage } from '@scanauth/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { startWechatEmulator, type WechatEmulatorOptions } from '@scanauth/wechat-emulator'
import {
  createWechatCallback,
  createWechatQrProvider,
  createWechatReminderNotifier,
  WechatApiError,
  type WechatMessage,
  type WechatReminderNotifierOptions,
} from '../src/index'
import { closer, manualClock, serveCallback } from './helpers'

const ACCOUNT = { appId: 'wx_remind_e2e', appSecret: 'remind-secret', token: 'remindToken' }
const DEMO = 'o_emulator_demo_user'
const RENEW = 'https://app.example/auth/m/pay'
const SEND = { subscribe: '/cgi-bin/message/template/subscribe', template: '/cgi-bin/message/template/send', custom: '/cgi-bin/message/custom/send' }
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(emulatorOptions: Partial<WechatEmulatorOptions> = {}, notifierOptions: Partial<WechatReminderNotifierOptions> = {}) {
  const clock = manualClock()
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now, ...emulatorOptions }))
  const errors: Array<{ error: unknown; channel: string }> = []
  const notifier = createWechatReminderNotifier({
    ...emulator.reminderNotifierOptions(),
    now: clock.now,
    subscribe: { templateId: 'SUB_TPL', scene: 5 },
    template: { templateId: 'TPL_RENEW' },
    onError: (error, channel) => void errors.push({ error, channel }),
    ...notifierOptions,
  })
  const sends = (path: string) => emulator.requests().filter((r) => r.path === path).map((r) => r.errcode ?? r.status)
  const message = (overrides: Partial<ReminderMessage> = {}): ReminderMessage => ({
    openid: DEMO,
    userId: 1,
    kind: 'time',
    leadDays: 3,
    endsAt: new Date(clock.now() + 3 * 86_400_000).toISOString(),
    remainingPoints: null,
    renewUrl: RENEW,
    subscribed: false,
    unreachableChannels: [],
    lastSeenAt: new Date(clock.now() - 86_400_000).toISOString(),
    ...overrides,
  })
  /** The person confirms the notifier's subscribemsg link on the emulated phone. */
  const confirm = (openid: string, action: 'confirm' | 'cancel' = 'confirm') =>
    emulator.confirmSubscription(notifier.subscription!.confirmUrl({ redirectUrl: 'https://app.example/auth/m/subscribed', reserved: 'St4te' }), { openid, action })
  return { clock, emulator, notifier, errors, sends, message, confirm }
}

/** A callback the emulator pushes to, recording what reaches `onMessage`. */
async function withCallback(emulator: Awaited<ReturnType<typeof startWechatEmulator>>, clock: ReturnType<typeof manualClock>) {
  const messages: WechatMessage[] = []
  const callback = createWechatCallback({
    auth: { handleScan: async () => ({ result: 'invalid' }) },
    appId: ACCOUNT.appId,
    token: ACCOUNT.token,
    now: clock.now,
    onMessage: (m) => {
      messages.push(m)
      return 'a reply nobody reads'
    },
  })
  const server = resources.add(await serveCallback(callback))
  emulator.setCallbackUrl(server.url)
  return messages
}

describe('the one-time subscription message', () => {
  it('is sent once per confirmation: the confirmation is spent, a second send falls to the next channels', async () => {
    const { emulator, notifier, message, confirm, sends } = await setup()
    emulator.setUser('o_stranger', { follows: false })
    expect(await confirm('o_stranger')).toBe('https://app.example/auth/m/subscribed?openid=o_stranger&template_id=SUB_TPL&action=confirm&scene=5&reserved=St4te')
    expect(emulator.subscriptions()).toMatchObject([{ openid: 'o_stranger', templateId: 'SUB_TPL', scene: '5' }])

    expect(await notifier.send(message({ openid: 'o_stranger', subscribed: true }))).toEqual({ outcome: 'sent', channel: 'subscribe' })
    expect(emulator.subscriptions()).toEqual([])
    const [sent] = emulator.messages()
    expect(sent).toMatchObject({ channel: 'subscribe', openid: 'o_stranger', templateId: 'SUB_TPL', scene: '5', title: 'Access ending', url: RENEW })
    expect(sent!.text).toMatch(/^Your access ends on \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\+8\)\. Tap this message to renew\.$/)

    // Core believes a confirmation is left (it is not): 43101, then not a follower (43004), then no window.
    const again = await notifier.send(message({ openid: 'o_stranger', subscribed: true }))
    expect(again).toEqual({
      outcome: 'unreachable',
      unreachable: ['subscribe', 'template'],
      reason: expect.stringMatching(/^subscribe: errcode 43101 .*; template: errcode 43004 .*; custom: outside the 60 s customer-service window after the last scan$/),
    })
    expect(sends(SEND.subscribe)).toEqual([200, 43101])
    expect(sends(SEND.custom)).toEqual([])
  })

  it('is not tried without a confirmation core knows of, and confirming twice in one scene buys one message', async () => {
    const { emulator, notifier, message, confirm, sends } = await setup({}, { channels: ['subscribe'] })
    expect(await notifier.send(message())).toEqual({ outcome: 'unreachable', reason: 'subscribe: no one-time subscription confirmation to spend' })
    expect(sends(SEND.subscribe)).toEqual([])
    await confirm(DEMO)
    await confirm(DEMO)
    expect((await notifier.send(message({ subscribed: true }))).outcome).toBe('sent')
    expect(await notifier.send(message({ subscribed: true }))).toMatchObject({ outcome: 'unreachable', unreachable: ['subscribe'] })
    // A Cancel records nothing and sends the phone back without an openid.
    expect(await confirm(DEMO, 'cancel')).toBe('https://app.example/auth/m/subscribed?template_id=SUB_TPL&action=cancel&scene=5&reserved=St4te')
    expect(emulator.subscriptions()).toEqual([])
  })
})

describe('the template message', () => {
  it('reaches a follower with fields cut to 20 characters; its delivery report reaches the callback and is answered success', async () => {
    const { clock, emulator, notifier, message } = await setup({}, {
      template: { templateId: 'TPL_RENEW', data: (_m, facts) => ({ thing1: { value: `${facts.headline}: renew before it is too late` }, time2: { value: facts.ends } }) },
    })
    const pushed = await withCallback(emulator, clock)
    expect(await notifier.send(message())).toEqual({ outcome: 'sent', channel: 'template' })
    const [sent] = emulator.messages()
    expect(sent).toMatchObject({ channel: 'template', openid: DEMO, templateId: 'TPL_RENEW', url: RENEW })
    expect(sent!.data).toEqual({ thing1: 'Access ending: rene…', time2: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/) })
    await vi.waitFor(() => expect(pushed).toMatchObject([{ Event: 'TEMPLATESENDJOBFINISH', MsgID: String(sent!.msgid), Status: 'success', FromUserName: DEMO }]))
  })

  it('43004 for a non-follower, 43101 for a user who turned messages off, 40003 for an openid not of the account', async () => {
    const { emulator, notifier, message } = await setup({}, { channels: ['template'] })
    emulator.setUser('o_left', { follows: false })
    emulator.setUser('o_off', { refusesMessages: true, follows: true })
    for (const [openid, code] of [['o_left', 43004], ['o_off', 43101], ['o_nobody', 40003]] as const) {
      expect(await notifier.send(message({ openid }))).toEqual({ outcome: 'unreachable', unreachable: ['template'], reason: expect.stringMatching(new RegExp(`^template: errcode ${code} `)) })
    }
    expect(emulator.messages()).toEqual([])
  })

  it('40037: a template id the account does not have is reported to onError and closes only that channel', async () => {
    const { clock, emulator, notifier, message, errors } = await setup({ templateIds: ['TPL_OTHER'] }, { channels: ['template', 'custom'] })
    await withCallback(emulator, clock)
    await emulator.scan({ sceneStr: 'pc_any', openid: DEMO })
    const delivery = await notifier.send(message({ lastSeenAt: new Date(clock.now()).toISOString() }))
    expect(delivery).toEqual({ outcome: 'sent', channel: 'custom', unreachable: ['template'] })
    expect(errors).toEqual([{ error: expect.any(WechatApiError), channel: 'template' }])
    expect((errors[0]!.error as WechatApiError).errcode).toBe(40037)
  })
})

describe('the customer-service message', () => {
  it('is sent inside the window a scan opens, with its link; after the minute it is skipped without a call', async () => {
    const { clock, emulator, notifier, message, sends } = await setup({}, { channels: ['custom'] })
    await withCallback(emulator, clock)
    await emulator.scan({ sceneStr: 'pc_any', openid: DEMO })
    const lastSeenAt = new Date(clock.now()).toISOString()
    expect(await notifier.send(message({ lastSeenAt }))).toEqual({ outcome: 'sent', channel: 'custom' })
    expect(emulator.messages()[0]).toMatchObject({ channel: 'custom', text: expect.stringMatching(/<a href="https:\/\/app\.example\/auth\/m\/pay">Renew<\/a>$/) })
    clock.advance(60_000)
    expect(await notifier.send(message({ lastSeenAt }))).toEqual({ outcome: 'unreachable', reason: 'custom: outside the 60 s customer-service window after the last scan' })
    expect(sends(SEND.custom)).toEqual([200])
  })

  it('45015 when WeChat knows the window closed; 45047 over the count: the channel cannot reach this person now', async () => {
    const { clock, emulator, notifier, message } = await setup({}, { channels: ['custom'], custom: { windowMs: 48 * 3_600_000 } })
    await withCallback(emulator, clock)
    await emulator.scan({ sceneStr: 'pc_any', openid: DEMO })
    const lastSeenAt = new Date(clock.now()).toISOString()
    for (let i = 0; i < 3; i++) expect((await notifier.send(message({ lastSeenAt }))).outcome).toBe('sent')
    expect(await notifier.send(message({ lastSeenAt }))).toMatchObject({ outcome: 'unreachable', unreachable: ['custom'], reason: expect.stringMatching(/^custom: errcode 45047 /) })
    clock.advance(120_000)
    expect(await notifier.send(message({ lastSeenAt }))).toMatchObject({ outcome: 'unreachable', unreachable: ['custom'], reason: expect.stringMatching(/^custom: errcode 45015 /) })
  })
})

describe('failures', () => {
  it('45009: the daily quota stops the pass at once; the next Beijing day goes on', async () => {
    const { clock, emulator, notifier, message, sends } = await setup({ dailySendQuota: 1 }, { channels: ['template', 'custom'] })
    expect((await notifier.send(message())).outcome).toBe('sent')
    expect(await notifier.send(message())).toEqual({ outcome: 'stop', reason: 'template: errcode 45009 (daily API quota used up)' })
    expect(sends(SEND.custom)).toEqual([])
    clock.advance(86_400_000)
    expect((await notifier.send(message())).outcome).toBe('sent')
    emulator.setDailySendQuota(0)
    expect((await notifier.send(message())).outcome).toBe('stop')
  })

  it('a refused access token (40001, 42001) is replaced once and the send repeated; twice is stop', async () => {
    const { emulator, notifier, message, sends } = await setup({}, { channels: ['template'] })
    expect((await notifier.send(message())).outcome).toBe('sent')
    emulator.invalidateTokens()
    expect(await notifier.send(message())).toEqual({ outcome: 'sent', channel: 'template' })
    expect(sends('/cgi-bin/stable_token')).toEqual([200, 200])
    emulator.failNext('message/template/send', { errcode: 42001, errmsg: 'access_token expired' })
    expect((await notifier.send(message())).outcome).toBe('sent')
    expect(sends(SEND.template)).toEqual([200, 40001, 200, 42001, 200])
    expect(emulator.messages()).toHaveLength(3)
    emulator.failNext('message/template/send', { errcode: 40001 }, 2)
    expect(await notifier.send(message())).toEqual({ outcome: 'stop', reason: 'template: errcode 40001: the access token was refused again after a refresh' })
  })

  it('a 5xx, WeChat busy or a timeout is retry at once: no other channel is tried, the confirmation is kept', async () => {
    const { emulator, notifier, message, confirm, sends } = await setup({}, { timeoutMs: 300 })
    await confirm(DEMO)
    emulator.failNext('message/template/subscribe', { httpStatus: 502 })
    expect(await notifier.send(message({ subscribed: true }))).toEqual({ outcome: 'retry', reason: 'subscribe: HTTP 502 from cgi-bin/message/template/subscribe' })
    emulator.failNext('message/template/subscribe', { errcode: -1, errmsg: 'system error' })
    expect(await notifier.send(message({ subscribed: true }))).toEqual({ outcome: 'retry', reason: 'subscribe: errcode -1 (system busy)' })
    emulator.failNext('message/template/subscribe', { hang: true })
    expect(await notifier.send(message({ subscribed: true }))).toEqual({ outcome: 'retry', reason: 'subscribe: timeout (cgi-bin/message/template/subscribe)' })
    expect(sends(SEND.template)).toEqual([])
    expect(await notifier.send(message({ subscribed: true }))).toEqual({ outcome: 'sent', channel: 'subscribe' })
  })
})

describe('order and tokens', () => {
  it('channels core found unreachable go last; when all are, the configured order holds', async () => {
    const { emulator, notifier, message, confirm } = await setup()
    await confirm(DEMO)
    expect(await notifier.send(message({ subscribed: true, unreachableChannels: ['subscribe'] }))).toEqual({ outcome: 'sent', channel: 'template' })
    expect(emulator.subscriptions()).toHaveLength(1)
    expect(await notifier.send(message({ subscribed: true, unreachableChannels: ['custom', 'template', 'subscribe'] }))).toEqual({ outcome: 'sent', channel: 'subscribe' })
  })

  it('shares the QR provider’s token (tokens): one token fetch for both', async () => {
    const { emulator, clock, message, sends } = await setup()
    const qr = createWechatQrProvider({ ...emulator.qrProviderOptions(), now: clock.now })
    const notifier = createWechatReminderNotifier({ appId: ACCOUNT.appId, tokens: qr, apiBase: emulator.url, template: { templateId: 'T' } })
    await qr.createQr({ sceneStr: 'pc_1', expiresInSeconds: 60 })
    expect((await notifier.send(message())).outcome).toBe('sent')
    expect(sends('/cgi-bin/stable_token')).toEqual([200])
  })
})
