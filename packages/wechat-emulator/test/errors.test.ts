// WechatEmulatorError: every code the emulator throws or rejects with, reached over real HTTP where
// a push or a code is involved.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { startWechatEmulator, WechatEmulatorError, type WechatEmulatorErrorCode, type WechatEmulatorOptions } from '../src/index'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_errors', appSecret: 'the-secret', token: 'push-token' }
const resources = closer()
afterEach(() => resources.closeAll())

/** The error `run` throws or rejects with, checked to be a WechatEmulatorError with `code`. */
async function emulatorError(code: WechatEmulatorErrorCode, run: () => unknown): Promise<WechatEmulatorError> {
  let caught: unknown
  try {
    await run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(WechatEmulatorError)
  const error = caught as WechatEmulatorError
  expect({ name: error.name, code: error.code }).toEqual({ name: 'WechatEmulatorError', code })
  return error
}

async function start(options: Partial<WechatEmulatorOptions> = {}) {
  return resources.add(await startWechatEmulator({ ...ACCOUNT, ...options }))
}

/** A callback that answers `success`, or never answers when `hang` is set (until the test ends). */
async function callbackServer(hang = false) {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    req.resume()
    if (!hang) req.on('end', () => res.end('success'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`, requests: () => requests }
}

describe('invalid_options', () => {
  it('names the option of startWechatEmulator that is wrong', async () => {
    const cases: Array<[Partial<WechatEmulatorOptions>, string]> = [
      [{ appId: '' }, 'startWechatEmulator: appId is required'],
      [{ appSecret: undefined as never }, 'startWechatEmulator: appSecret is required'],
      [{ token: '' }, 'startWechatEmulator: token is required'],
      [{ mode: 'safe' }, "startWechatEmulator: mode 'safe' needs encodingAESKey"],
      [{ encodingAESKey: 'short' }, 'startWechatEmulator: encodingAESKey must be 43 characters from [A-Za-z0-9] (the base64 alphabet)'],
    ]
    for (const [options, message] of cases) {
      const error = await emulatorError('invalid_options', () => start(options))
      expect(error.message).toBe(message)
    }
  })
})

describe('invalid_argument', () => {
  it('refuses a scan without openid or code, a push without FromUserName, and a bad failNext', async () => {
    const cb = await callbackServer()
    const emulator = await start({ callbackUrl: cb.url })
    expect((await emulatorError('invalid_argument', () => emulator.scan({ sceneStr: 'pc_1', openid: '' }))).message).toBe('scan: openid is required')
    expect((await emulatorError('invalid_argument', () => emulator.scan({ openid: 'o' }))).message).toBe('scan: ticket or sceneStr is required')
    await emulatorError('invalid_argument', () => emulator.push({ MsgType: 'text', Content: 'hi' }))
    expect((await emulatorError('invalid_argument', () => emulator.failNext('nope' as never, { hang: true }))).message).toMatch(/^failNext: unknown endpoint nope/)
    await emulatorError('invalid_argument', () => emulator.failNext('qrcode/create', { hang: true }, 0))
    expect(cb.requests()).toBe(0)
  })
})

describe('oauth_refused', () => {
  it('openInWechat says why the authorize page refuses, and refuses to reach the real WeChat', async () => {
    const emulator = await start()
    const query = `appid=wx_other&redirect_uri=${encodeURIComponent('https://app.example/cb')}&response_type=code&scope=snsapi_base&state=s`
    const refused = await emulatorError('oauth_refused', () => emulator.openInWechat(`${emulator.url}/connect/oauth2/authorize?${query}`))
    expect(refused.message).toBe(`openInWechat: the authorize page refuses: appid wx_other is not this account's (${ACCOUNT.appId})`)
    await emulatorError('oauth_refused', () => emulator.openInWechat(`https://open.weixin.qq.com/connect/oauth2/authorize?${query}#wechat_redirect`))
    await emulatorError('invalid_argument', () => emulator.openInWechat('/relative'))
  })
})

describe('unknown_ticket and expired_code', () => {
  it('refuses a ticket it never issued and a code past its lifetime, on the API and on the page route', async () => {
    const clock = new ManualClock('2026-03-01T08:00:00Z')
    const cb = await callbackServer()
    const emulator = await start({ callbackUrl: cb.url, now: clock.now })
    await emulatorError('unknown_ticket', () => emulator.scan({ ticket: 'never-issued', openid: 'o' }))

    const { access_token: token } = (await (
      await fetch(`${emulator.url}/cgi-bin/stable_token`, {
        method: 'POST',
        body: JSON.stringify({ grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret }),
      })
    ).json()) as { access_token: string }
    const created = await fetch(`${emulator.url}/cgi-bin/qrcode/create?access_token=${encodeURIComponent(token)}`, {
      method: 'POST',
      body: JSON.stringify({ expire_seconds: 10, action_name: 'QR_STR_SCENE', action_info: { scene: { scene_str: 'pc_e' } } }),
    })
    const { ticket } = (await created.json()) as { ticket: string }
    clock.advance(10_000)
    const expired = await emulatorError('expired_code', () => emulator.scan({ ticket, openid: 'o' }))
    expect(expired.message).toMatch(/has expired/)

    // The page's scan route answers a refused scan with 409 and the message.
    const page = await fetch(`${emulator.url}/emulator/scan`, { method: 'POST', body: JSON.stringify({ ticket }) })
    expect({ status: page.status, body: await page.json() }).toEqual({ status: 409, body: { detail: expired.message } })
    expect(cb.requests()).toBe(0)
  })
})

describe('no_callback_url and closed', () => {
  it('refuses a push before a callback URL is set', async () => {
    const emulator = await start()
    const error = await emulatorError('no_callback_url', () => emulator.scan({ sceneStr: 'pc_1', openid: 'o' }))
    expect(error.message).toMatch(/setCallbackUrl/)
    await emulatorError('no_callback_url', () => emulator.sendText({ openid: 'o', content: 'hi' }))
  })

  it('rejects a push in flight when the emulator closes, and every push after', async () => {
    const cb = await callbackServer(true)
    const emulator = await start({ callbackUrl: cb.url })
    const inFlight = emulator.scan({ sceneStr: 'pc_1', openid: 'o' })
    while (cb.requests() === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await emulator.close()
    expect((await emulatorError('closed', () => inFlight)).cause).toBeDefined()
    await emulatorError('closed', () => emulator.sendText({ openid: 'o', content: 'hi' }))
  })
})
