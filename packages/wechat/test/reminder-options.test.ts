// The reminder notifier without a network: its options (invalid_options naming the bad one), the
// subscription's confirm link, the channel order, and what each channel's request says within
// WeChat's limits (20 characters a template field, 15 a title, 200 a subscription's text).
import type { ReminderMessage } from '@scanauth/core'
import { describe, expect, it } from 'vitest'
import { channelOrder, createWechatReminderNotifier, cutText, defaultReminderText, reminderFacts, type WechatReminderNotifierOptions } from '../src/index'
import { reminderRequestBody } from '../src/reminder-channels'
import { resolveReminderOptions } from '../src/reminder-options'

const BASE = { appId: 'wx_remind', appSecret: 'secret' }
const message = (overrides: Partial<ReminderMessage> = {}): ReminderMessage => ({
  openid: 'o_user',
  userId: 7,
  kind: 'time',
  leadDays: 3,
  endsAt: '2026-03-04T08:00:00.000Z',
  remainingPoints: null,
  renewUrl: 'https://app.example/auth/m/pay',
  subscribed: true,
  unreachableChannels: [],
  lastSeenAt: '2026-03-01T08:00:00.000Z',
  ...overrides,
})

describe('options', () => {
  it('refuses what is missing or wrong, naming it', () => {
    const cases: Array<[Partial<WechatReminderNotifierOptions>, string]> = [
      [{ appId: '' }, 'appId is required'],
      [{ appSecret: undefined }, 'appSecret is required (or tokens)'],
      [{ tokens: {} as never }, 'tokens must have getAccessToken() and rejectAccessToken() (e.g. a createWechatQrProvider)'],
      [{ apiBase: 'ftp://x' }, 'apiBase must be an absolute http(s) URL'],
      [{ subscribeConfirmBase: 'https://mp.example/mp/subscribemsg?x=1' }, 'subscribeConfirmBase must be an absolute http(s) URL without query or fragment'],
      [{ timeoutMs: 0 }, 'timeoutMs must be a positive number'],
      [{ tokenEndpoint: 'other' as never }, "tokenEndpoint must be 'stable' or 'classic'"],
      [{ subscribe: { templateId: '' } }, 'subscribe.templateId is required'],
      [{ subscribe: { templateId: 't', scene: 10_001 } }, 'subscribe.scene must be an integer from 0 to 10000 (WeChat limit)'],
      [{ subscribe: { templateId: 't', scene: 1.5 } }, 'subscribe.scene must be an integer from 0 to 10000 (WeChat limit)'],
      [{ subscribe: { templateId: 't', title: 'sixteen chars!!!' } }, 'subscribe.title must be 1 to 15 characters (WeChat limit)'],
      [{ template: { templateId: '' } }, 'template.templateId is required'],
      [{ template: { templateId: 't', data: 'x' as never } }, 'template.data must be a function'],
      [{ custom: { windowMs: 48 * 3_600_000 + 1 } }, 'custom.windowMs must be above 0 and at most 48 hours (172800000)'],
      [{ channels: [] }, 'channels must be a non-empty array'],
      [{ channels: ['sms' as never] }, 'channels: unknown channel sms (subscribe, template, custom)'],
      [{ channels: ['custom', 'custom'] }, 'channels must not repeat a channel'],
      [{ channels: ['template'] }, "channels names 'template' but the template option is not set"],
      [{ channels: ['subscribe'] }, "channels names 'subscribe' but the subscribe option is not set"],
      [{ timeZone: 'Mars/Olympus' }, 'timeZone Mars/Olympus is not an IANA time zone'],
    ]
    for (const [options, detail] of cases) {
      expect(() => createWechatReminderNotifier({ ...BASE, ...options } as WechatReminderNotifierOptions), detail).toThrow(
        expect.objectContaining({ name: 'WechatError', code: 'invalid_options', message: `createWechatReminderNotifier: ${detail}` }),
      )
    }
  })

  it('the notifier names its channels, in order, for core to remember', () => {
    expect(createWechatReminderNotifier(BASE).channels).toEqual(['custom'])
    expect(createWechatReminderNotifier({ ...BASE, subscribe: { templateId: 'S' }, template: { templateId: 'T' } }).channels).toEqual(['subscribe', 'template', 'custom'])
    expect(createWechatReminderNotifier({ ...BASE, template: { templateId: 'T' }, channels: ['custom', 'template'] }).channels).toEqual(['custom', 'template'])
  })

  it('defaults: the configured channels in order subscribe, template, custom; a 60 s window; scene 1', () => {
    expect(resolveReminderOptions(BASE)).toMatchObject({ channels: ['custom'], customWindowMs: 60_000, timeZone: 'Asia/Shanghai', subscribe: null, template: null })
    const full = resolveReminderOptions({ ...BASE, subscribe: { templateId: 'S' }, template: { templateId: 'T' } })
    expect(full).toMatchObject({ channels: ['subscribe', 'template', 'custom'], subscribe: { templateId: 'S', scene: 1, title: 'Access ending' }, template: { templateId: 'T', url: true } })
    // A shared token source (the QR provider) stands in for the AppSecret.
    const tokens = { getAccessToken: async () => 't', rejectAccessToken: () => undefined }
    expect(resolveReminderOptions({ appId: 'wx', tokens }).tokens).toBe(tokens)
  })
})

describe('the one-time subscription', () => {
  it('is offered only with the subscribe channel; its confirm link is WeChat’s, in WeChat’s order', () => {
    expect(createWechatReminderNotifier(BASE).subscription).toBeUndefined()
    const { subscription } = createWechatReminderNotifier({ ...BASE, subscribe: { templateId: 'TPL-1', scene: 42 } })
    expect(subscription).toMatchObject({ templateId: 'TPL-1', scene: 42 })
    expect(subscription!.confirmUrl({ redirectUrl: 'https://app.example/auth/m/subscribed?x=1&y=2', reserved: 'Ab12' })).toBe(
      'https://mp.weixin.qq.com/mp/subscribemsg?action=get_confirm&appid=wx_remind&scene=42&template_id=TPL-1&redirect_url=https%3A%2F%2Fapp.example%2Fauth%2Fm%2Fsubscribed%3Fx%3D1%26y%3D2&reserved=Ab12#wechat_redirect',
    )
    const emulated = createWechatReminderNotifier({ ...BASE, subscribe: { templateId: 'T' }, subscribeConfirmBase: 'http://127.0.0.1:9/mp/subscribemsg' })
    expect(emulated.subscription!.confirmUrl({ redirectUrl: 'http://a.test/', reserved: '' })).toMatch(/^http:\/\/127\.0\.0\.1:9\/mp\/subscribemsg\?action=get_confirm&/)
    const excluded = createWechatReminderNotifier({ ...BASE, subscribe: { templateId: 'T' }, channels: ['custom'] })
    expect(excluded.subscription).toBeUndefined()
  })

  it('refuses a redirectUrl that is not absolute http(s) and a reserved WeChat would refuse', () => {
    const { subscription } = createWechatReminderNotifier({ ...BASE, subscribe: { templateId: 'T' } })
    for (const [redirectUrl, reserved] of [['/relative', 'a'], ['javascript:alert(1)', 'a'], ['https://a.test/', 'has space'], ['https://a.test/', 'x'.repeat(129)], ['https://a.test/', 'é']]) {
      expect(() => subscription!.confirmUrl({ redirectUrl: redirectUrl!, reserved: reserved! })).toThrow(expect.objectContaining({ code: 'invalid_argument' }))
    }
    expect(subscription!.confirmUrl({ redirectUrl: 'https://a.test/', reserved: 'x'.repeat(128) })).toContain(`reserved=${'x'.repeat(128)}#wechat_redirect`)
  })
})

describe('channel order', () => {
  it('moves the channels core found unreachable to the end, keeping the configured order', () => {
    expect(channelOrder(['subscribe', 'template', 'custom'], [])).toEqual(['subscribe', 'template', 'custom'])
    expect(channelOrder(['subscribe', 'template', 'custom'], ['subscribe'])).toEqual(['template', 'custom', 'subscribe'])
    expect(channelOrder(['subscribe', 'template', 'custom'], ['custom', 'subscribe', 'sms'])).toEqual(['template', 'subscribe', 'custom'])
    expect(channelOrder(['template'], ['template'])).toEqual(['template'])
  })
})

describe('what each channel says', () => {
  const config = resolveReminderOptions({ ...BASE, subscribe: { templateId: 'S', scene: 3, title: 'Renew soon' }, template: { templateId: 'T' } })

  it('subscribe: scene as a string, the title, the text ≤200 with the renewal link as url', () => {
    expect(reminderRequestBody('subscribe', message(), config)).toEqual({
      touser: 'o_user',
      template_id: 'S',
      url: 'https://app.example/auth/m/pay',
      scene: '3',
      title: 'Renew soon',
      data: { content: { value: 'Your access ends on 2026-03-04 16:00 (UTC+8). Tap this message to renew.' } },
    })
    const long = resolveReminderOptions({ ...BASE, subscribe: { templateId: 'S' }, text: () => '长'.repeat(300) })
    const value = (reminderRequestBody('subscribe', message({ renewUrl: null }), long).data as { content: { value: string } }).content.value
    expect(Array.from(value)).toHaveLength(200)
    expect(value.endsWith('…')).toBe(true)
    expect(reminderRequestBody('subscribe', message({ renewUrl: null }), config)).not.toHaveProperty('url')
  })

  it('template: the default fields, each ≤20 characters without line breaks; url only with a link and url: true', () => {
    expect(reminderRequestBody('template', message(), config)).toEqual({
      touser: 'o_user',
      template_id: 'T',
      url: 'https://app.example/auth/m/pay',
      data: { first: { value: 'Access ending' }, keyword1: { value: 'Access' }, keyword2: { value: '2026-03-04 16:00' }, remark: { value: 'Tap to renew' } },
    })
    const points = reminderRequestBody('template', message({ kind: 'points', endsAt: null, leadDays: null, remainingPoints: 1, renewUrl: null }), config)
    expect(points).toEqual({
      touser: 'o_user',
      template_id: 'T',
      data: { first: { value: 'Points running low' }, keyword1: { value: 'Points' }, keyword2: { value: '1 point left' }, remark: { value: '' } },
    })
    const mapped = resolveReminderOptions({
      ...BASE,
      template: { templateId: 'T', url: false, data: (_m, facts) => ({ thing4: { value: `Expires\n${facts.ends} — renew now please 🙂🙂` }, const5: { value: facts.headline } }) },
    })
    const body = reminderRequestBody('template', message(), mapped)
    expect(body).not.toHaveProperty('url')
    expect(body.data).toEqual({ thing4: { value: 'Expires 2026-03-04 …' }, const5: { value: 'Access ending' } })
  })

  it('custom: a text whose link WeChat shows as a link', () => {
    expect(reminderRequestBody('custom', message({ renewUrl: 'https://app.example/m/pay?a=1&b="2"' }), config)).toEqual({
      touser: 'o_user',
      msgtype: 'text',
      text: { content: 'Your access ends on 2026-03-04 16:00 (UTC+8). <a href="https://app.example/m/pay?a=1&amp;b=&quot;2&quot;">Renew</a>' },
    })
  })

  it('texts and facts: points, the time zone, cutting by characters (an emoji is never split)', () => {
    expect(defaultReminderText(message({ kind: 'points', endsAt: null, remainingPoints: 5, renewUrl: null }), 'custom', 'UTC')).toBe('You have 5 points left.')
    expect(defaultReminderText(message({ renewUrl: null }), 'subscribe', 'UTC')).toBe('Your access ends on 2026-03-04 08:00 (UTC).')
    expect(defaultReminderText(message({ renewUrl: null }), 'subscribe', 'Asia/Kolkata')).toBe('Your access ends on 2026-03-04 13:30 (UTC+5:30).')
    expect(defaultReminderText(message({ renewUrl: null }), 'subscribe', 'America/New_York')).toBe('Your access ends on 2026-03-04 03:00 (UTC-5).')
    expect(reminderFacts(message(), 'America/New_York')).toMatchObject({ ends: '2026-03-04 03:00', status: '2026-03-04 03:00', action: 'Tap to renew' })
    expect(cutText('🙂'.repeat(25), 20)).toBe(`${'🙂'.repeat(19)}…`)
    expect(cutText('short', 20)).toBe('short')
    expect(cutText('a\r\nb', 20, true)).toBe('a b')
  })
})
