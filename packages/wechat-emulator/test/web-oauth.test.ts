// The emulator's web OAuth over real HTTP: the authorize page (who the phone's user is, what it
// refuses), the code exchange (single use, 5 minutes, WeChat's errcodes), and openInWechat.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { startWechatEmulator, WechatEmulatorError, type WechatEmulatorOptions } from '../src/index'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_oauth', appSecret: 'the-secret', token: 'push-token' }
const REDIRECT = 'https://app.example/auth/confirm?ticket=T_1'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now, ...options }))
  const authorizeQuery = (params: Record<string, string> = {}) =>
    new URLSearchParams({ appid: ACCOUNT.appId, redirect_uri: REDIRECT, response_type: 'code', scope: 'snsapi_base', state: 'S1', ...params })
  /** The authorize page, as a browser asks for it (the fragment never reaches a server). */
  const authorize = async (params: Record<string, string> = {}, cookie?: string) => {
    const res = await fetch(`${emulator.url}/connect/oauth2/authorize?${authorizeQuery(params)}#wechat_redirect`, {
      redirect: 'manual',
      headers: cookie === undefined ? {} : { cookie },
    })
    return { status: res.status, location: res.headers.get('location'), text: await res.text() }
  }
  const codeOf = (location: string | null) => new URL(location ?? 'http://none').searchParams.get('code') ?? ''
  const exchange = async (params: Record<string, string>) => {
    const query = new URLSearchParams({ appid: ACCOUNT.appId, secret: ACCOUNT.appSecret, grant_type: 'authorization_code', ...params })
    const res = await fetch(`${emulator.url}/sns/oauth2/access_token?${query}`)
    return { status: res.status, json: (await res.json()) as Record<string, unknown> }
  }
  return { clock, emulator, authorize, authorizeQuery, codeOf, exchange }
}

/** An app whose `/confirm` sends the phone to `target()` (the authorize page), as core's confirm route does. */
async function appRedirectingTo(target: () => string) {
  const userAgents: string[] = []
  const server = createServer((req, res) => {
    userAgents.push(req.headers['user-agent'] ?? '')
    if (req.url?.startsWith('/confirm')) return void res.writeHead(302, { location: target() }).end()
    if (req.url?.startsWith('/hop')) return void res.writeHead(303, { location: '/confirm' }).end()
    res.writeHead(404).end('no such link')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, userAgents }
}

describe('the authorize page', () => {
  it('sends the phone back to redirect_uri with a code and the state, appended to its query', async () => {
    const { authorize, emulator } = await setup()
    const answer = await authorize()
    expect(answer.status).toBe(302)
    const back = new URL(answer.location as string)
    expect(`${back.origin}${back.pathname}`).toBe('https://app.example/auth/confirm')
    expect([...back.searchParams]).toEqual([
      ['ticket', 'T_1'],
      ['code', expect.stringMatching(/^[A-Za-z0-9_-]{32}$/)],
      ['state', 'S1'],
    ])
    expect(emulator.requests().map((r) => [r.path, r.status])).toEqual([['/connect/oauth2/authorize', 302]])
  })

  it('the phone is the user the wxemu_openid cookie names, else the default user; an openid parameter is ignored', async () => {
    const { authorize, codeOf, exchange } = await setup({ demoOpenid: 'o_default' })
    const byCookie = await authorize({ openid: 'o_forged' }, 'other=1; wxemu_openid=o_cookie%2Buser')
    expect((await exchange({ code: codeOf(byCookie.location) })).json.openid).toBe('o_cookie+user')
    const byDefault = await authorize({ openid: 'o_forged' })
    expect((await exchange({ code: codeOf(byDefault.location) })).json.openid).toBe('o_default')
  })

  it('refuses what WeChat refuses, with a page and no code', async () => {
    const { authorize } = await setup()
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ appid: 'wx_other' }, /appid wx_other is not this account/],
      [{ appid: '' }, /appid is missing/],
      [{ redirect_uri: '' }, /redirect_uri is missing/],
      [{ redirect_uri: '/relative' }, /not an absolute URL/],
      [{ redirect_uri: 'javascript:alert(1)' }, /http or https/],
      [{ response_type: 'token' }, /response_type must be code/],
      [{ scope: 'snsapi_login' }, /scope snsapi_login is not/],
      [{ scope: '' }, /scope is missing/],
      [{ state: 'x'.repeat(129) }, /state is longer than 128/],
    ]
    for (const [params, reason] of cases) {
      const answer = await authorize(params)
      expect(answer.status, JSON.stringify(params)).toBe(400)
      expect(answer.location).toBeNull()
      expect(answer.text).toMatch(reason)
    }
    expect((await authorize({ redirect_uri: '<script>' })).text).not.toContain('<script>')
  })
})

describe('sns/oauth2/access_token', () => {
  it("answers WeChat's shape; snsapi_userinfo codes say so", async () => {
    const { authorize, codeOf, exchange } = await setup()
    const answer = await exchange({ code: codeOf((await authorize()).location) })
    expect(answer).toEqual({
      status: 200,
      json: { access_token: expect.any(String), expires_in: 7200, refresh_token: expect.any(String), openid: 'o_emulator_demo_user', scope: 'snsapi_base' },
    })
    const userinfo = await exchange({ code: codeOf((await authorize({ scope: 'snsapi_userinfo' })).location) })
    expect(userinfo.json.scope).toBe('snsapi_userinfo')
  })

  it('a code is used once: a second exchange, or an unknown code, answers 40029 with HTTP 200', async () => {
    const { authorize, codeOf, exchange, emulator } = await setup()
    const code = codeOf((await authorize()).location)
    expect((await exchange({ code })).json.openid).toBe('o_emulator_demo_user')
    expect(await exchange({ code })).toEqual({ status: 200, json: { errcode: 40029, errmsg: expect.stringMatching(/^invalid code rid: /) } })
    expect((await exchange({ code: 'never-issued' })).json.errcode).toBe(40029)
    expect(emulator.requests().filter((r) => r.path === '/sns/oauth2/access_token').map((r) => r.errcode)).toEqual([undefined, 40029, 40029])
  })

  it('a code lives 5 minutes', async () => {
    const { authorize, codeOf, exchange, clock } = await setup()
    const early = codeOf((await authorize()).location)
    const late = codeOf((await authorize()).location)
    clock.advance(5 * 60_000 - 1)
    expect((await exchange({ code: early })).json.openid).toBe('o_emulator_demo_user')
    clock.advance(1)
    expect((await exchange({ code: late })).json.errcode).toBe(40029)
  })

  it('checks the account and the request: wrong secret 40125, wrong appid 40013, and the rest', async () => {
    const { authorize, codeOf, exchange, emulator } = await setup()
    const code = codeOf((await authorize()).location)
    expect((await exchange({ code, secret: 'wrong' })).json).toMatchObject({ errcode: 40125, errmsg: expect.stringMatching(/^invalid appsecret/) })
    expect((await exchange({ code, appid: 'wx_other' })).json.errcode).toBe(40013)
    expect((await exchange({ code, grant_type: 'client_credential' })).json.errcode).toBe(40002)
    expect((await exchange({ code, appid: '' })).json.errcode).toBe(41002)
    expect((await exchange({ code, secret: '' })).json.errcode).toBe(41004)
    expect((await exchange({})).json).toMatchObject({ errcode: 41008 })
    const post = await fetch(`${emulator.url}/sns/oauth2/access_token?appid=${ACCOUNT.appId}`, { method: 'POST' })
    expect(((await post.json()) as { errcode: number }).errcode).toBe(43001)
    // The refused attempts did not use the code up.
    expect((await exchange({ code })).json.openid).toBe('o_emulator_demo_user')
    expect(JSON.stringify(emulator.requests())).not.toContain(ACCOUNT.appSecret)
  })

  it('can be made to fail on demand', async () => {
    const { emulator, exchange } = await setup()
    emulator.failNext('sns/oauth2/access_token', { errcode: -1, errmsg: 'system error' })
    expect((await exchange({ code: 'x' })).json.errcode).toBe(-1)
  })
})

describe('openInWechat', () => {
  it("follows the app's redirects to the authorize page and answers the address with the code, as the given user", async () => {
    const { emulator, authorizeQuery, exchange } = await setup()
    const app = await appRedirectingTo(() => `${emulator.url}/connect/oauth2/authorize?${authorizeQuery({ redirect_uri: `${app.url}/confirm?ticket=T_9` })}#wechat_redirect`)
    const landing = new URL(await emulator.openInWechat(`${app.url}/hop`, { openid: 'o_alice' }))
    expect(`${landing.origin}${landing.pathname}`).toBe(`${app.url}/confirm`)
    expect(landing.searchParams.get('ticket')).toBe('T_9')
    expect(landing.searchParams.get('state')).toBe('S1')
    expect((await exchange({ code: landing.searchParams.get('code') ?? '' })).json.openid).toBe('o_alice')
    // The landing page itself is not fetched: the test does that.
    expect(app.userAgents).toHaveLength(2)
    expect(app.userAgents[0]).toMatch(/MicroMessenger/)
    expect(emulator.requests().at(-2)).toMatchObject({ path: '/connect/oauth2/authorize', status: 302 })
  })

  it('opens an authorize address directly, as the default user without openid', async () => {
    const { emulator, authorizeQuery, exchange } = await setup({ demoOpenid: 'o_phone' })
    const landing = await emulator.openInWechat(`${emulator.url}/connect/oauth2/authorize?${authorizeQuery()}#wechat_redirect`)
    expect((await exchange({ code: new URL(landing).searchParams.get('code') ?? '' })).json.openid).toBe('o_phone')
  })

  it('answers the address that ended the chain when the app does not send the phone to WeChat', async () => {
    const { emulator } = await setup()
    const app = await appRedirectingTo(() => '')
    expect(await emulator.openInWechat(`${app.url}/used-link`)).toBe(`${app.url}/used-link`)
  })

  it('rejects: a refused authorize request, the real WeChat, too many redirects, a bad URL', async () => {
    const { emulator, authorizeQuery } = await setup()
    const refusal = async (url: string, message: RegExp, code = 'oauth_refused') => {
      const error = await emulator.openInWechat(url, { openid: 'o' }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(WechatEmulatorError)
      expect(error).toMatchObject({ code, message: expect.stringMatching(message) })
    }
    await refusal(`${emulator.url}/connect/oauth2/authorize?${authorizeQuery({ appid: 'wx_other' })}`, /authorize page refuses: appid wx_other/)
    await refusal(`https://open.weixin.qq.com/connect/oauth2/authorize?${authorizeQuery()}#wechat_redirect`, /real WeChat.*webOAuthOptions/)
    let loop = ''
    const app = await appRedirectingTo(() => loop)
    loop = `${app.url}/confirm`
    await refusal(`${app.url}/confirm`, /more than 10 redirects/)
    await refusal('not a url', /absolute http\(s\) URL/, 'invalid_argument')
    await expect(emulator.openInWechat(`${emulator.url}/`, { openid: '' })).rejects.toMatchObject({ code: 'invalid_argument' })
  })

  it('webOAuthOptions names the emulator', async () => {
    const { emulator } = await setup()
    expect(emulator.webOAuthOptions()).toEqual({
      appId: ACCOUNT.appId,
      appSecret: ACCOUNT.appSecret,
      apiBase: emulator.url,
      authorizeBase: `${emulator.url}/connect/oauth2/authorize`,
    })
  })
})
