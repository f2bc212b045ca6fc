// The one-time subscription's confirm page over HTTP (what it checks, who the phone is, Confirm and
// Cancel and where they send the phone), confirmSubscription through an app's redirects, and the
// account's messages on the phone page with their links tappable as the receiver.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatEmulator, SUBSCRIBE_CONFIRM_PATH, WechatEmulatorError, type WechatEmulatorOptions } from '../src/index'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_subscribe', appSecret: 'the-secret', token: 'push-token' }
const REDIRECT = 'https://app.example/auth/m/subscribed?lang=en'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatEmulatorOptions> = {}) {
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, demoOpenid: 'o_phone', ...options }))
  const params = (extra: Record<string, string> = {}) =>
    new URLSearchParams({ action: 'get_confirm', appid: ACCOUNT.appId, scene: '7', template_id: 'SUB_TPL', redirect_url: REDIRECT, reserved: 'AbC123', ...extra })
  const link = (extra: Record<string, string> = {}) => `${emulator.url}${SUBSCRIBE_CONFIRM_PATH}?${params(extra)}#wechat_redirect`
  const page = async (extra: Record<string, string> = {}, cookie?: string) => {
    const res = await fetch(link(extra), { headers: cookie === undefined ? {} : { cookie } })
    return { status: res.status, text: await res.text() }
  }
  /** A tap on a button: the form's fields posted back, as the browser would. */
  const answer = async (action: string, extra: Record<string, string> = {}, cookie?: string) => {
    const form = params({ ...extra, action })
    const res = await fetch(`${emulator.url}${SUBSCRIBE_CONFIRM_PATH}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
      body: form.toString(),
    })
    return { status: res.status, location: res.headers.get('location'), text: await res.text() }
  }
  return { emulator, link, page, answer }
}

/** An app whose `/m/remind` asks web OAuth who the phone is, then sends it on to `confirmLink(openid)`. */
async function remindingApp(emulatorUrl: string, appId: string, confirmLink: (openid: string) => string) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://app')
    const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    if (url.pathname === '/m/remind') {
      const back = encodeURIComponent(`${self}/m/remind/back`)
      return void res.writeHead(302, { location: `${emulatorUrl}/connect/oauth2/authorize?appid=${appId}&redirect_uri=${back}&response_type=code&scope=snsapi_base&state=s#wechat_redirect` }).end()
    }
    // The app would exchange the code for the openid; the code's owner is what the test checks.
    if (url.pathname === '/m/remind/back') return void res.writeHead(302, { location: confirmLink(url.searchParams.get('code') ?? '') }).end()
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p>no redirect here</p>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('the confirm page', () => {
  it('shows Confirm and Cancel to the phone’s user: the wxemu_openid cookie, else the default user', async () => {
    const { page } = await setup()
    const byDefault = await page()
    expect(byDefault.status).toBe(200)
    expect(byDefault.text).toContain('You are o_phone')
    expect(byDefault.text).toContain(`<form method="post" action="${SUBSCRIBE_CONFIRM_PATH}">`)
    expect(byDefault.text).toMatch(/<input type="hidden" name="action" value="confirm"><button type="submit" class="confirm">Confirm<\/button>/)
    expect(byDefault.text).toMatch(/<input type="hidden" name="action" value="cancel"><button type="submit" class="cancel">Cancel<\/button>/)
    expect((await page({}, 'wxemu_openid=o_%3Cb%3Eme')).text).toContain('You are o_&#60;b&#62;me')
  })

  it('refuses what WeChat refuses, with a 400 page saying why, and records nothing', async () => {
    const { page, answer, emulator } = await setup({ subscribeTemplateId: 'SUB_TPL' })
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ action: 'confirm' }, /action must be get_confirm/],
      [{ appid: 'wx_other' }, /appid wx_other is not this account/],
      [{ appid: '' }, /appid is missing/],
      [{ scene: '10001' }, /scene must be an integer from 0 to 10000/],
      [{ scene: 'x' }, /scene must be/],
      [{ template_id: 'OTHER' }, /template_id OTHER is not this account&#39;s one-time template/],
      [{ template_id: '' }, /template_id is missing/],
      [{ redirect_url: '' }, /redirect_url is missing/],
      [{ redirect_url: '/m/subscribed' }, /not an absolute http\(s\) URL/],
      [{ reserved: 'no spaces' }, /reserved must be at most 128 characters/],
      [{ reserved: 'x'.repeat(129) }, /reserved must be/],
    ]
    for (const [extra, reason] of cases) {
      const refused = await page(extra)
      expect(refused.status, JSON.stringify(extra)).toBe(400)
      expect(refused.text).toMatch(reason)
    }
    expect((await answer('maybe')).status).toBe(400)
    expect((await answer('confirm', { scene: '-1' })).status).toBe(400)
    expect(emulator.subscriptions()).toEqual([])
  })

  it('Confirm sends the phone to redirect_url with openid first and records one message’s worth; Cancel without openid, nothing recorded', async () => {
    const { answer, emulator } = await setup()
    const confirmed = await answer('confirm', {}, 'wxemu_openid=o_cookie')
    expect(confirmed.status).toBe(302)
    expect(confirmed.location).toBe('https://app.example/auth/m/subscribed?lang=en&openid=o_cookie&template_id=SUB_TPL&action=confirm&scene=7&reserved=AbC123')
    expect(emulator.subscriptions()).toEqual([{ openid: 'o_cookie', templateId: 'SUB_TPL', scene: '7', at: expect.any(Number) }])
    const cancelled = await answer('cancel')
    expect(cancelled.location).toBe('https://app.example/auth/m/subscribed?lang=en&template_id=SUB_TPL&action=cancel&scene=7&reserved=AbC123')
    // Confirming again in the same scene adds nothing: still one.
    await answer('confirm', {}, 'wxemu_openid=o_cookie')
    expect(emulator.subscriptions()).toHaveLength(1)
    expect(emulator.requests().map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', SUBSCRIBE_CONFIRM_PATH, 302],
      ['POST', SUBSCRIBE_CONFIRM_PATH, 302],
      ['POST', SUBSCRIBE_CONFIRM_PATH, 302],
    ])
  })
})

describe('confirmSubscription', () => {
  it('follows an app’s redirects, answering web OAuth on the way as the same user, and resolves where the phone goes', async () => {
    const { emulator } = await setup()
    const app = await remindingApp(emulator.url, ACCOUNT.appId, (code) =>
      `${emulator.url}${SUBSCRIBE_CONFIRM_PATH}?action=get_confirm&appid=${ACCOUNT.appId}&scene=3&template_id=T&redirect_url=${encodeURIComponent(`https://app.example/m/subscribed?code=${code}`)}&reserved=R#wechat_redirect`,
    )
    const location = new URL(await emulator.confirmSubscription(`${app}/m/remind`, { openid: 'o_reader' }))
    expect(location.searchParams.get('openid')).toBe('o_reader')
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ template_id: 'T', action: 'confirm', scene: '3', reserved: 'R' })
    // The code the authorize page issued on the way belongs to the same user.
    const code = location.searchParams.get('code') ?? ''
    const exchanged = await fetch(`${emulator.url}/sns/oauth2/access_token?appid=${ACCOUNT.appId}&secret=${ACCOUNT.appSecret}&code=${code}&grant_type=authorization_code`)
    expect(((await exchanged.json()) as { openid: string }).openid).toBe('o_reader')
    expect(emulator.subscriptions()).toMatchObject([{ openid: 'o_reader', templateId: 'T', scene: '3' }])
  })

  it('rejects what cannot be answered', async () => {
    const { emulator, link } = await setup()
    const app = await remindingApp(emulator.url, ACCOUNT.appId, () => 'https://mp.weixin.qq.com/mp/subscribemsg?action=get_confirm')
    const refused = async (promise: Promise<unknown>, code: string, message: RegExp) => {
      const error = await promise.then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(WechatEmulatorError)
      expect(error).toMatchObject({ code, message: expect.stringMatching(message) })
    }
    await refused(emulator.confirmSubscription(`${app}/m/remind`), 'subscribe_refused', /real WeChat confirm page/)
    await refused(emulator.confirmSubscription(`${app}/elsewhere`), 'subscribe_refused', /answered without leading to the confirm page/)
    await refused(emulator.confirmSubscription(link({ scene: '99999' })), 'subscribe_refused', /scene must be an integer/)
    await refused(emulator.confirmSubscription('not a url'), 'invalid_argument', /absolute http\(s\) URL/)
    await refused(emulator.confirmSubscription(link(), { openid: '' }), 'invalid_argument', /openid/)
    expect(await emulator.confirmSubscription(link(), { action: 'cancel' })).not.toContain('openid=')
    expect(emulator.subscriptions()).toEqual([])
  })
})

describe('the chat on the phone page', () => {
  it('shows each accepted message from the account, newest first, its link opening as the receiver; everything escaped', async () => {
    const { emulator, link } = await setup()
    const token = ((await (await fetch(`${emulator.url}/cgi-bin/stable_token`, { method: 'POST', body: JSON.stringify({ grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret }) })).json()) as { access_token: string }).access_token
    const send = (path: string, body: unknown) => fetch(`${emulator.url}/cgi-bin/message/${path}?access_token=${token}`, { method: 'POST', body: JSON.stringify(body) })
    await emulator.confirmSubscription(link(), { openid: 'o_phone' })
    await send('template/subscribe', { touser: 'o_phone', template_id: 'SUB_TPL', scene: '7', title: 'Renew <now>', url: 'https://app.example/m/pay?x=1&y=2', data: { content: { value: 'Ends <script>soon</script>' } } })
    await send('template/send', { touser: 'o_phone', template_id: 'TPL', url: 'javascript:alert(1)', data: { keyword2: { value: '2026-03-04 16:00' } } })

    const html = await (await fetch(`${emulator.url}/`)).text()
    expect(html).toContain('Messages from the account')
    const open = `${emulator.url}/emulator/open?${new URLSearchParams({ openid: 'o_phone', url: 'https://app.example/m/pay?x=1&y=2' })}`.replaceAll('&', '&#38;')
    expect(html).toContain(`<b>Renew &#60;now&#62;</b>\nEnds &#60;script&#62;soon&#60;/script&#62;\n<a class="reply-link message-link" href="${open}"`)
    expect(html).toContain('keyword2: 2026-03-04 16:00\n<span class="reply-link dead">javascript:alert(1)</span>')
    expect(html.indexOf('template message')).toBeLessThan(html.indexOf('one-time subscription message'))
    expect(html).not.toContain('<script>soon')

    const view = (await (await fetch(`${emulator.url}/emulator/view`)).json()) as { messages: string; messageCount: number }
    expect(view.messageCount).toBe(2)
    expect(((await (await fetch(`${emulator.url}/emulator/messages`)).json()) as unknown[]).length).toBe(2)
    // A code's own page is about the code: no chat there.
    const focused = (await (await fetch(`${emulator.url}/emulator/view?ticket=none`)).json()) as { messageCount: number }
    expect(focused.messageCount).toBe(0)

    // The tap: the receiver becomes the phone's user, then the browser goes on to the link.
    const tap = await fetch(open.replaceAll('&#38;', '&'), { redirect: 'manual' })
    expect(tap.status).toBe(302)
    expect(tap.headers.get('location')).toBe('https://app.example/m/pay?x=1&y=2')
    expect(tap.headers.get('set-cookie')).toMatch(/^wxemu_openid=o_phone;/)
  })
})
