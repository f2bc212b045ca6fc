// The emulator's send APIs over raw HTTP: the checks every send shares (method, token, body, quota,
// receiver), then each channel's rule (template: followers, refusals, 20-character fields;
// subscribe: a confirmation per user, template and scene; custom: the window of the last interaction
// and its count), what is recorded, and the delivery report pushed after a template message.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { startWechatEmulator, type WechatEmulatorOptions } from '../src/index'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_send', appSecret: 'the-secret', token: 'push-token' }
const DEMO = 'o_emulator_demo_user'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  // Tokens live a month here: the tests move the clock by days and use one token throughout.
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now, tokenTtlSeconds: 30 * 86_400, ...options }))
  const token = async () => {
    const res = await fetch(`${emulator.url}/cgi-bin/stable_token`, {
      method: 'POST',
      body: JSON.stringify({ grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret }),
    })
    return ((await res.json()) as { access_token: string }).access_token
  }
  const accessToken = await token()
  const call = async (path: string, body: unknown, init: { method?: string; token?: string } = {}) => {
    const res = await fetch(`${emulator.url}/cgi-bin/message/${path}?access_token=${encodeURIComponent(init.token ?? accessToken)}`, {
      method: init.method ?? 'POST',
      ...(init.method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
    expect(res.status).toBe(200)
    return (await res.json()) as { errcode: number; errmsg: string; msgid?: number }
  }
  const template = (body: Record<string, unknown> = {}) =>
    call('template/send', { touser: DEMO, template_id: 'TPL', url: 'https://app.example/m/pay', data: { keyword1: { value: 'Access' } }, ...body })
  const subscribe = (body: Record<string, unknown> = {}) =>
    call('template/subscribe', { touser: DEMO, template_id: 'SUB', scene: '1', title: 'Access ending', data: { content: { value: 'Ends soon' } }, ...body })
  const custom = (body: Record<string, unknown> = {}) => call('custom/send', { touser: DEMO, msgtype: 'text', text: { content: 'Hello' }, ...body })
  const confirmLink = (params: Record<string, string> = {}) =>
    `${emulator.url}/mp/subscribemsg?${new URLSearchParams({ action: 'get_confirm', appid: ACCOUNT.appId, scene: '1', template_id: 'SUB', redirect_url: 'https://app.example/m/subscribed', reserved: 'r1', ...params })}#wechat_redirect`
  return { clock, emulator, call, template, subscribe, custom, confirmLink }
}

/** A callback that answers `success` and records the pushes' bodies. */
async function recordingCallback() {
  const bodies: string[] = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
    bodies.push(Buffer.concat(chunks).toString())
    res.writeHead(200).end('success')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/wx`, bodies }
}

describe('every send', () => {
  it.each(['template/send', 'template/subscribe', 'custom/send'])('%s: 43002, 41001, 40001, 47001, 40003 in that order', async (path) => {
    const { call, emulator } = await setup()
    expect((await call(path, {}, { method: 'GET' })).errcode).toBe(43002)
    expect((await call(path, {}, { token: '' })).errcode).toBe(41001)
    expect((await call(path, {}, { token: 'forged' })).errcode).toBe(40001)
    expect((await call(path, 'not json')).errcode).toBe(47001)
    expect((await call(path, { touser: 'o_never_seen' })).errcode).toBe(40003)
    emulator.invalidateTokens()
    expect((await call(path, { touser: DEMO })).errcode).toBe(40001)
  })

  it('the daily quota: 45009 once used up, per API, again the next Beijing day; setDailySendQuota changes it', async () => {
    const { template, custom, clock, emulator } = await setup({ dailySendQuota: 2 })
    expect((await template()).errcode).toBe(0)
    expect((await template()).errcode).toBe(0)
    expect(await template()).toMatchObject({ errcode: 45009, errmsg: expect.stringMatching(/^reach max api daily quota limit rid: /) })
    // Another API has its own count (custom/send then fails on its own rule, not the quota).
    expect((await custom()).errcode).toBe(45015)
    clock.set(Date.parse('2026-03-01T16:00:00Z')) // midnight in Beijing
    expect((await template()).errcode).toBe(0)
    emulator.setDailySendQuota(null)
    for (let i = 0; i < 3; i++) expect((await template()).errcode).toBe(0)
    expect(() => emulator.setDailySendQuota(-1)).toThrow(expect.objectContaining({ code: 'invalid_argument' }))
    await expect(startWechatEmulator({ ...ACCOUNT, dailySendQuota: 1.5 })).rejects.toMatchObject({ code: 'invalid_options' })
  })

  it('failNext replaces the next answers of a send API', async () => {
    const { template, emulator } = await setup()
    emulator.failNext('message/template/send', { errcode: -1, errmsg: 'system error' })
    expect((await template()).errcode).toBe(-1)
    expect((await template()).errcode).toBe(0)
  })
})

describe('template/send', () => {
  it('reaches followers only (43004), not a user who turned messages off (43101); records what was accepted', async () => {
    const { template, emulator, clock } = await setup()
    const sent = await template()
    expect(sent).toEqual({ errcode: 0, errmsg: 'ok', msgid: expect.any(Number) })
    emulator.setUser('o_gone', { follows: false })
    expect((await template({ touser: 'o_gone' })).errcode).toBe(43004)
    emulator.setUser('o_quiet', { follows: true, refusesMessages: true })
    expect((await template({ touser: 'o_quiet' })).errcode).toBe(43101)
    emulator.setUser('o_quiet', { refusesMessages: false })
    expect((await template({ touser: 'o_quiet' })).errcode).toBe(0)
    expect(emulator.messages()).toEqual([
      { at: clock.now(), msgid: sent.msgid, channel: 'template', openid: DEMO, templateId: 'TPL', scene: null, title: null, text: 'keyword1: Access', data: { keyword1: 'Access' }, url: 'https://app.example/m/pay' },
      expect.objectContaining({ openid: 'o_quiet' }),
    ])
  })

  it('40037 for a template id the account does not have; 47003 for a field over 20 characters or with a line break', async () => {
    const { template } = await setup({ templateIds: ['TPL'] })
    expect((await template({ template_id: 'OTHER' })).errcode).toBe(40037)
    expect((await template({ template_id: '' })).errcode).toBe(40037)
    expect(await template({ data: { thing1: { value: 'x'.repeat(21) } } })).toMatchObject({ errcode: 47003, errmsg: expect.stringMatching(/data\.thing1\.value is longer than 20 characters/) })
    expect((await template({ data: { thing1: { value: 'a\nb' } } })).errcode).toBe(47003)
    expect((await template({ data: { thing1: { value: '🙂'.repeat(20) } } })).errcode).toBe(0)
  })

  it('pushes TEMPLATESENDJOBFINISH with the msgid to the callback', async () => {
    const callback = await recordingCallback()
    const { template } = await setup({ callbackUrl: callback.url })
    const { msgid } = await template()
    await vi.waitFor(() => expect(callback.bodies).toHaveLength(1))
    expect(callback.bodies[0]).toContain('<Event><![CDATA[TEMPLATESENDJOBFINISH]]></Event>')
    expect(callback.bodies[0]).toContain(`<MsgID><![CDATA[${msgid}]]></MsgID><Status><![CDATA[success]]></Status>`)
  })
})

describe('template/subscribe', () => {
  it('needs a confirmation of that user, template and scene, spent by the send (43101 without)', async () => {
    const { subscribe, emulator, confirmLink } = await setup()
    expect((await subscribe()).errcode).toBe(43101)
    await emulator.confirmSubscription(confirmLink({ scene: '1' }), { openid: 'o_new' })
    expect((await subscribe({ touser: 'o_new', scene: '2' })).errcode).toBe(43101)
    expect((await subscribe({ touser: 'o_new', template_id: 'SUB2' })).errcode).toBe(43101)
    expect(await subscribe({ touser: 'o_new' })).toEqual({ errcode: 0, errmsg: 'ok' })
    expect((await subscribe({ touser: 'o_new' })).errcode).toBe(43101)
    expect(emulator.messages()).toMatchObject([{ channel: 'subscribe', openid: 'o_new', templateId: 'SUB', scene: '1', title: 'Access ending', text: 'Ends soon', url: null }])
  })

  it('checks its fields: scene a string of 0–10000, title ≤15, content ≤200; 40037 for another one-time template', async () => {
    const { subscribe } = await setup({ subscribeTemplateId: 'SUB' })
    expect((await subscribe({ template_id: 'OTHER' })).errcode).toBe(40037)
    for (const body of [{ scene: 1 }, { scene: '10001' }, { scene: '-1' }, { title: 'x'.repeat(16) }, { title: '' }, { data: { content: { value: 'x'.repeat(201) } } }, { data: {} }]) {
      expect((await subscribe(body)).errcode, JSON.stringify(body)).toBe(47003)
    }
  })
})

describe('custom/send', () => {
  it('a scan opens a minute and three messages; a message from the user 48 hours and five', async () => {
    const callback = await recordingCallback()
    const { custom, emulator, clock } = await setup({ callbackUrl: callback.url })
    expect((await custom()).errcode).toBe(45015)
    await emulator.scan({ sceneStr: 'pc_x', openid: DEMO })
    for (let i = 0; i < 3; i++) expect((await custom()).errcode).toBe(0)
    expect(await custom()).toMatchObject({ errcode: 45047, errmsg: expect.stringMatching(/^out of response count limit/) })
    clock.advance(60_000)
    expect((await custom()).errcode).toBe(45015)
    await emulator.sendText({ openid: DEMO, content: 'hi' })
    clock.advance(47 * 3_600_000)
    for (let i = 0; i < 5; i++) expect((await custom()).errcode).toBe(0)
    expect((await custom()).errcode).toBe(45047)
    await emulator.sendText({ openid: DEMO, content: 'again' })
    clock.advance(48 * 3_600_000)
    expect((await custom()).errcode).toBe(45015)
    expect(emulator.messages().filter((m) => m.channel === 'custom')).toHaveLength(8)
  })

  it('unfollowing closes the window; only text is played', async () => {
    const callback = await recordingCallback()
    const { custom, emulator } = await setup({ callbackUrl: callback.url })
    await emulator.sendText({ openid: DEMO, content: 'hi' })
    expect((await custom({ msgtype: 'news' })).errcode).toBe(40008)
    expect((await custom({ text: { content: '' } })).errcode).toBe(47003)
    expect((await custom({ text: { content: 'x'.repeat(2049) } })).errcode).toBe(45002)
    await emulator.push({ FromUserName: DEMO, MsgType: 'event', Event: 'unsubscribe' })
    expect((await custom()).errcode).toBe(45015)
  })
})
