// createWechatWebOAuth against the emulator's web OAuth over real HTTP: the authorize address it
// builds, the code exchange, and which answers are "no" (null) and which are failures (thrown).
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatEmulator } from '@scanauth/wechat-emulator'
import { createWechatWebOAuth, WECHAT_AUTHORIZE_URL, WechatApiError, WechatError, WechatHttpError, type WechatWebOAuthOptions } from '../src/index'
import { closer } from './helpers'

const ACCOUNT = { appId: 'wx_oauth_app_0001', appSecret: 'oauth-secret', token: 'tok' }
const REDIRECT = 'https://app.example/auth/confirm?ticket=T_abc-123'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatWebOAuthOptions> = {}) {
  const emulator = resources.add(await startWechatEmulator(ACCOUNT))
  const oauth = createWechatWebOAuth({ ...emulator.webOAuthOptions(), ...options })
  /** A fresh code for `openid`, as WeChat's authorize page would send it back. */
  const codeFor = async (openid: string) => {
    const landing = new URL(await emulator.openInWechat(oauth.authorizeUrl({ redirectUri: REDIRECT, state: 'S1' }), { openid }))
    return landing.searchParams.get('code') as string
  }
  const exchanges = () => emulator.requests().filter((r) => r.path === '/sns/oauth2/access_token')
  return { emulator, oauth, codeFor, exchanges }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('authorizeUrl', () => {
  it("is WeChat's address, parameters in WeChat's order, redirect_uri encoded, #wechat_redirect", () => {
    const oauth = createWechatWebOAuth({ appId: 'wx123', appSecret: 's' })
    expect(oauth.authorizeUrl({ redirectUri: REDIRECT, state: 'abcDEF0123456789' })).toBe(
      `https://open.weixin.qq.com/connect/oauth2/authorize?appid=wx123&redirect_uri=${encodeURIComponent(REDIRECT)}` +
        '&response_type=code&scope=snsapi_base&state=abcDEF0123456789#wechat_redirect',
    )
    expect(WECHAT_AUTHORIZE_URL).toBe('https://open.weixin.qq.com/connect/oauth2/authorize')
    expect(oauth.authorizeUrl({ redirectUri: REDIRECT, state: '' })).toContain('&state=#wechat_redirect')
  })

  it('uses authorizeBase, and the emulator sends the phone back with code and state', async () => {
    const { emulator, oauth } = await setup()
    const url = oauth.authorizeUrl({ redirectUri: REDIRECT, state: 'S1' })
    expect(url.startsWith(`${emulator.url}/connect/oauth2/authorize?appid=${ACCOUNT.appId}&redirect_uri=`)).toBe(true)
    const landing = new URL(await emulator.openInWechat(url, { openid: 'o_alice' }))
    expect(`${landing.origin}${landing.pathname}`).toBe('https://app.example/auth/confirm')
    expect([...landing.searchParams.keys()]).toEqual(['ticket', 'code', 'state'])
    expect(landing.searchParams.get('ticket')).toBe('T_abc-123')
    expect(landing.searchParams.get('state')).toBe('S1')
  })

  it('refuses a redirect or a state WeChat would not take', () => {
    const oauth = createWechatWebOAuth({ appId: 'wx123', appSecret: 's' })
    for (const input of [
      { redirectUri: '/auth/confirm', state: 's' },
      { redirectUri: 'javascript:alert(1)', state: 's' },
      { redirectUri: REDIRECT, state: 'has space' },
      { redirectUri: REDIRECT, state: 'x'.repeat(129) },
    ]) {
      expect(() => oauth.authorizeUrl(input)).toThrow(expect.objectContaining({ name: 'WechatError', code: 'invalid_argument' }))
    }
  })
})

describe('exchangeCode', () => {
  it('answers the openid of the phone that came back with the code', async () => {
    const { oauth, codeFor, exchanges } = await setup()
    expect(await oauth.exchangeCode(await codeFor('o_alice'))).toBe('o_alice')
    expect(await oauth.exchangeCode(await codeFor('o_bob'))).toBe('o_bob')
    expect(exchanges().map((r) => [r.status, r.errcode])).toEqual([
      [200, undefined],
      [200, undefined],
    ])
  })

  it('answers null for a refused code: used, unknown, empty (not sent)', async () => {
    const { oauth, codeFor, exchanges } = await setup()
    const code = await codeFor('o_alice')
    expect(await oauth.exchangeCode(code)).toBe('o_alice')
    expect(await oauth.exchangeCode(code)).toBeNull()
    expect(await oauth.exchangeCode('never-issued')).toBeNull()
    expect(await oauth.exchangeCode('')).toBeNull()
    expect(exchanges().map((r) => r.errcode)).toEqual([undefined, 40029, 40029])
  })

  it("answers null for WeChat's other refusals of the code (40163 used, 41008 missing, 42003 timed out)", async () => {
    const { emulator, oauth } = await setup()
    emulator.failNext('sns/oauth2/access_token', { errcode: 40163, errmsg: 'code been used' })
    emulator.failNext('sns/oauth2/access_token', { errcode: 41008, errmsg: 'missing code' })
    emulator.failNext('sns/oauth2/access_token', { errcode: 42003, errmsg: 'oauth_code timeout' })
    expect(await oauth.exchangeCode('c1')).toBeNull()
    expect(await oauth.exchangeCode('c2')).toBeNull()
    expect(await oauth.exchangeCode('c3')).toBeNull()
  })

  it('throws on our misconfiguration: a wrong AppSecret (40125) or AppID (40013)', async () => {
    const { emulator, codeFor } = await setup()
    const wrongSecret = createWechatWebOAuth({ ...emulator.webOAuthOptions(), appSecret: 'wrong' })
    const error = await wrongSecret.exchangeCode(await codeFor('o_alice')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WechatApiError)
    expect(error).toMatchObject({ code: 'api_error', errcode: 40125, endpoint: 'sns/oauth2/access_token', message: expect.stringMatching(/check appSecret/) })
    expect((error as Error).message).not.toContain('wrong')
    const wrongApp = createWechatWebOAuth({ ...emulator.webOAuthOptions(), appId: 'wx_other' })
    await expect(wrongApp.exchangeCode('any')).rejects.toMatchObject({ code: 'api_error', errcode: 40013 })
  })

  it("throws when WeChat is busy (-1), answers a 5xx, or answers without an openid", async () => {
    const { emulator, oauth } = await setup()
    emulator.failNext('sns/oauth2/access_token', { errcode: -1, errmsg: 'system error' })
    await expect(oauth.exchangeCode('c')).rejects.toMatchObject({ name: 'WechatApiError', errcode: -1 })
    emulator.failNext('sns/oauth2/access_token', { httpStatus: 502, body: 'bad gateway' })
    await expect(oauth.exchangeCode('c')).rejects.toMatchObject({ name: 'WechatHttpError', failure: 'http_status', httpStatus: 502 })
    emulator.failNext('sns/oauth2/access_token', { httpStatus: 200, body: '{"access_token":"t","expires_in":7200}' })
    await expect(oauth.exchangeCode('c')).rejects.toMatchObject({ name: 'WechatHttpError', failure: 'bad_response', message: expect.stringMatching(/without an openid/) })
  })

  it('throws on a network failure and on a timeout', async () => {
    const port = await closedPort()
    const unreachable = createWechatWebOAuth({ appId: 'wx', appSecret: 's', apiBase: `http://127.0.0.1:${port}` })
    const error = await unreachable.exchangeCode('c').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WechatHttpError)
    expect(error).toMatchObject({ failure: 'network', endpoint: 'sns/oauth2/access_token', message: expect.stringMatching(/ECONNREFUSED/) })
    expect((error as Error).message).not.toContain('secret=')

    const { emulator, oauth } = await setup({ timeoutMs: 200 })
    emulator.failNext('sns/oauth2/access_token', { hang: true })
    await expect(oauth.exchangeCode('c')).rejects.toMatchObject({ name: 'WechatHttpError', failure: 'timeout' })
  })
})

describe('options', () => {
  it('names the option that is wrong', () => {
    const base: WechatWebOAuthOptions = { appId: 'wx', appSecret: 's' }
    const cases: Array<[Partial<WechatWebOAuthOptions>, string]> = [
      [{ appId: '' }, 'createWechatWebOAuth: appId is required'],
      [{ appSecret: undefined as never }, 'createWechatWebOAuth: appSecret is required'],
      [{ apiBase: 'api.weixin.qq.com' }, 'createWechatWebOAuth: apiBase must be an absolute http(s) URL'],
      [{ authorizeBase: 'https://open.weixin.qq.com/connect/oauth2/authorize?x=1' }, 'createWechatWebOAuth: authorizeBase must be an absolute http(s) URL without query or fragment'],
      [{ timeoutMs: 0 }, 'createWechatWebOAuth: timeoutMs must be a positive number'],
      [{ fetch: 'no' as never }, 'createWechatWebOAuth: fetch must be a function'],
    ]
    for (const [options, message] of cases) {
      let caught: unknown
      try {
        createWechatWebOAuth({ ...base, ...options })
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(WechatError)
      expect(caught).toMatchObject({ name: 'WechatError', code: 'invalid_options', message })
    }
  })
})
