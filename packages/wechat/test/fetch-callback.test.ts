// createWechatFetchHandler on Hono over real sockets (@hono/node-server on 127.0.0.1): WeChat's URL
// verification, the emulator's signed scans authorizing a scene, refused signatures and bodies.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createScanAuth, MemoryStore, type ScanEvent } from '@scanauth/core'
import { startWechatEmulator } from '@scanauth/wechat-emulator'
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import { buildXml, computeSignature, createWechatCallback, createWechatFetchHandler, createWechatQrProvider, type WechatCallbackOptions, type WechatFetchHandlerOptions } from '../src/index'
import { closer, manualClock } from './helpers'

const ACCOUNT = { appId: 'wx_fetch_00000001', appSecret: 'fetch-secret', token: 'fetchToken' }
const KEY = 'fetchKEYfetchKEYfetchKEYfetchKEYfetchKEYfet'
const resources = closer()
afterEach(() => resources.closeAll())

/** Serves a Hono app on 127.0.0.1 and a free port until the test ends. */
function serveHono(app: Hono): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`)) as Server
    resources.add({ close: () => new Promise<void>((done) => (server.close(() => done()), server.closeAllConnections())) })
  })
}

/** The emulator, core on a MemoryStore, and the callback as a Fetch handler in a Hono app. */
async function world(mode: 'plain' | 'safe', options: { callback?: Partial<WechatCallbackOptions>; fetch?: WechatFetchHandlerOptions } = {}) {
  const clock = manualClock()
  const encodingAESKey = mode === 'safe' ? KEY : undefined
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, encodingAESKey, now: clock.now }))
  const store = new MemoryStore()
  const scans: ScanEvent[] = []
  const auth = createScanAuth({
    store,
    qr: createWechatQrProvider({ appId: ACCOUNT.appId, appSecret: ACCOUNT.appSecret, apiBaseUrl: emulator.url, now: clock.now }),
    now: clock.now,
    hooks: { onScan: (event) => void scans.push(event) },
  })
  const callback = createWechatCallback({ auth, store, token: ACCOUNT.token, appId: ACCOUNT.appId, encodingAESKey, now: clock.now, ...options.callback })
  const wechat = createWechatFetchHandler(callback, options.fetch)
  const app = new Hono()
  app.get('/health', (c) => c.text('ok'))
  app.all('/wechat/callback', (c) => wechat(c.req.raw))
  const url = `${await serveHono(app)}/wechat/callback`
  emulator.setCallbackUrl(url)
  /** The callback URL with a query signed with the account's token, for now. */
  const signedUrl = (nonce: string, extra: Record<string, string> = {}) => {
    const timestamp = String(Math.floor(clock.now() / 1000))
    return `${url}?${new URLSearchParams({ signature: computeSignature(ACCOUNT.token, timestamp, nonce), timestamp, nonce, ...extra })}`
  }
  return { clock, emulator, store, auth, scans, url, signedUrl }
}

describe('createWechatFetchHandler on Hono', () => {
  it("echoes echostr for WeChat's URL verification, and refuses a bad signature", async () => {
    const { signedUrl, url } = await world('plain')
    const verified = await fetch(signedUrl('1', { echostr: '4375120948345356249' }))
    expect(verified.status).toBe(200)
    expect(verified.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(await verified.text()).toBe('4375120948345356249')
    const forged = `${url}?${new URLSearchParams({ signature: 'f'.repeat(40), timestamp: '1', nonce: '2', echostr: 'x' })}`
    expect((await fetch(forged)).status).toBe(401)
  })

  describe.each(['plain', 'safe'] as const)('%s mode', (mode) => {
    it("a signed scan from the emulator authorizes the scene, with the reply the user sees", async () => {
      const { auth, emulator, scans } = await world(mode)
      const scene = await auth.createScene({ deviceId: 'tv-1' })
      const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_alice' })
      expect(pushed).toMatchObject({ status: 200, replyError: null, attempts: 1 })
      expect(pushed.reply).toMatchObject({ MsgType: 'text', Content: 'Signed in.', ToUserName: 'o_alice', encrypted: mode === 'safe' })
      expect(scans).toMatchObject([{ sceneStr: scene.sceneStr, openid: 'o_alice', result: 'authorized' }])
      expect(await auth.getStatus(scene.sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
    })
  })

  it('refuses pushes signed with another token: 401, and nothing is stored', async () => {
    const { auth, emulator, store, signedUrl } = await world('plain', { callback: { token: 'wrongToken' } })
    const scene = await auth.createScene({ deviceId: 'tv' })
    expect(await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_x' })).toMatchObject({ status: 401, replyError: 'HTTP 401' })
    // A request signed with the real token does not pass the wrong one either.
    const res = await fetch(signedUrl('7'), { method: 'POST', body: '<xml></xml>' })
    expect(res.status).toBe(401)
    expect(await res.text()).toBe('invalid signature')
    expect(store.snapshot().users).toHaveLength(0)
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'pending' })
  })

  it('answers 413 for a body over its own limit, after the signature check (401 when unsigned)', async () => {
    // The callback itself would accept 64 KiB: the 413 comes from the Fetch handler's own cap,
    // answered by the callback once the request is authenticated (B-wx-1, B-wx-3).
    const { auth, clock, signedUrl, scans, store } = await world('plain', { fetch: { maxBodyBytes: 2048 } })
    const scene = await auth.createScene({ deviceId: 'tv' })
    const scan = (pad: string) =>
      buildXml({ ToUserName: 'gh_x', FromUserName: 'o_big', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'event', Event: 'SCAN', EventKey: scene.sceneStr, Pad: pad })
    const big = await fetch(signedUrl('1'), { method: 'POST', body: scan('x'.repeat(4096)) })
    expect(big.status).toBe(413)
    expect(await big.text()).toBe('body is too large')
    const unsigned = await fetch(signedUrl('4').replace(/signature=[^&]+/, 'signature=0'), { method: 'POST', body: scan('x'.repeat(4096)) })
    expect(unsigned.status).toBe(401)
    const huge = await fetch(signedUrl('2'), { method: 'POST', body: scan('x'.repeat(4 * 1024 * 1024)) })
    expect(huge.status).toBe(413)
    expect(scans).toHaveLength(0)
    expect(store.snapshot().users).toHaveLength(0)
    // The same push under the limit goes through.
    const small = await fetch(signedUrl('3'), { method: 'POST', body: scan('x') })
    expect(small.status).toBe(200)
    expect(scans).toMatchObject([{ openid: 'o_big', result: 'authorized' }])
  })

  it('passes an empty POST and other methods to the callback, which refuses them', async () => {
    const { signedUrl } = await world('plain')
    const empty = await fetch(signedUrl('1'), { method: 'POST' })
    expect(empty.status).toBe(400)
    expect(await empty.text()).toBe('body is empty')
    const put = await fetch(signedUrl('2'), { method: 'PUT', body: 'x' })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toBe('GET, POST')
  })

  it('refuses a maxBodyBytes that is not a positive integer', () => {
    const callback = createWechatCallback({ auth: { handleScan: async () => ({ result: 'invalid' }) }, token: 't', appId: 'a' })
    for (const maxBodyBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => createWechatFetchHandler(callback, { maxBodyBytes })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    }
  })

  it('rejects a request whose body something already read, so the host reports it', async () => {
    const callback = createWechatCallback({ auth: { handleScan: async () => ({ result: 'invalid' }) }, token: 't', appId: 'a' })
    const request = new Request('http://app.test/wechat/callback', { method: 'POST', body: '<xml/>' })
    await request.text()
    await expect(createWechatFetchHandler(callback)(request)).rejects.toThrow(/already read/)
  })
})
