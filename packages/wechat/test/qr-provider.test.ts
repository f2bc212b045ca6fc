// The QR provider against the emulator, over real HTTP on 127.0.0.1.
import { createServer } from 'node:net'
import { createHttpHandler, createScanAuth, MemoryStore, ScanAuthError } from '@scanauth/core'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { afterEach, describe, expect, it } from 'vitest'
import { createWechatQrProvider, WechatApiError, WechatHttpError, type CachedToken, type TokenCache, type WechatQrProviderOptions } from '../src/index'
import { startWechatEmulator, type WechatEmulatorOptions } from '@scanauth/wechat-emulator'
import { closer, manualClock } from './helpers'

const ACCOUNT = { appId: 'wx_test_app_0001', appSecret: 'secret-0001', token: 'tok' }
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(emulatorOptions: Partial<WechatEmulatorOptions> = {}, providerOptions: Partial<WechatQrProviderOptions> = {}) {
  const clock = manualClock()
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now, ...emulatorOptions }))
  const provider = createWechatQrProvider({ ...emulator.qrProviderOptions(), now: clock.now, ...providerOptions })
  const count = (path: string) => emulator.requests().filter((r) => r.path === path).length
  return { clock, emulator, provider, count }
}

const req = (sceneStr = 'pc_0123456789abcdef0123456789abcdef', expiresInSeconds = 300) => ({ sceneStr, expiresInSeconds })

describe('createQr', () => {
  it('creates a QR_STR_SCENE code with expire_seconds and returns the showqrcode address, ticket URL-encoded', async () => {
    const { emulator, provider, clock } = await setup()
    const { url } = await provider.createQr(req('pc_x', 300))
    const [ticket] = emulator.tickets()
    expect(ticket).toMatchObject({ sceneStr: 'pc_x', expiresAt: clock.now() + 300_000, live: true })
    expect(url).toBe(`${emulator.url}/cgi-bin/showqrcode?ticket=${encodeURIComponent(ticket!.ticket)}`)
    expect(url).not.toContain('==')
    expect(new URL(url).searchParams.get('ticket')).toBe(ticket!.ticket)
  })

  it('returns the text the code encodes as content: the ticket answer’s url, which the image decodes to', async () => {
    const { emulator, provider } = await setup()
    const { url, content } = await provider.createQr(req('pc_content', 300))
    expect(content).toBe(emulator.tickets()[0]!.url)
    const image = await fetch(url)
    expect(image.headers.get('content-type')).toBe('image/png')
    const png = PNG.sync.read(Buffer.from(await image.arrayBuffer()))
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(content)
    // Through the service and the route: qr_content beside qr_url.
    const auth = createScanAuth({ store: new MemoryStore(), qr: provider })
    const created = await auth.createScene({ deviceId: 'terminal' })
    expect(created.qrContent).toBe(emulator.tickets()[1]!.url)
    const handle = createHttpHandler(auth)
    const res = await handle({ method: 'POST', path: '/auth/create_scene', body: { device_id: 'terminal' } })
    expect(res?.body).toEqual({ scene_str: expect.any(String), qr_url: expect.any(String), qr_content: emulator.tickets()[2]!.url, expires_in: 300 })
  })

  it('createQrCode returns ticket, url and expire_seconds as WeChat answered', async () => {
    const { emulator, provider } = await setup()
    const code = await provider.createQrCode(req('pc_y', 120))
    expect(code).toMatchObject({ ticket: emulator.tickets()[0]!.ticket, url: emulator.tickets()[0]!.url, expireSeconds: 120 })
  })

  it('checks its options', () => {
    expect(() => createWechatQrProvider({ appId: '', appSecret: 's' })).toThrow(/appId/)
    expect(() => createWechatQrProvider({ appId: 'a', appSecret: 's', tokenEndpoint: 'other' as never })).toThrow(/tokenEndpoint/)
    expect(() => createWechatQrProvider({ appId: 'a', appSecret: 's', timeoutMs: 0 })).toThrow(/timeoutMs/)
  })

  it('uses an explicit imageBaseUrl', async () => {
    const { provider } = await setup({}, { imageBaseUrl: 'https://images.example/' })
    expect((await provider.createQr(req())).url).toMatch(/^https:\/\/images\.example\/cgi-bin\/showqrcode\?ticket=gQH/)
  })

  it('refuses a scene WeChat cannot carry', async () => {
    const { provider } = await setup()
    await expect(provider.createQr(req('x'.repeat(65)))).rejects.toMatchObject({ name: 'WechatError', code: 'invalid_argument', message: expect.stringMatching(/1 to 64/) })
  })
})

describe('access token', () => {
  it('is fetched once from stable_token and cached', async () => {
    const { provider, count } = await setup()
    await provider.createQr(req())
    await provider.createQr(req())
    expect(count('/cgi-bin/stable_token')).toBe(1)
    expect(count('/cgi-bin/qrcode/create')).toBe(2)
  })

  it('concurrent callers share one in-flight fetch', async () => {
    const { emulator, provider, count } = await setup()
    emulator.failNext('stable_token', { delayMs: 50 })
    await Promise.all(Array.from({ length: 10 }, () => provider.createQr(req())))
    expect(count('/cgi-bin/stable_token')).toBe(1)
    expect(count('/cgi-bin/qrcode/create')).toBe(10)
  })

  it('is renewed before it expires', async () => {
    const { provider, count, clock } = await setup()
    const first = await provider.getAccessToken()
    clock.advance((7200 - 300 - 1) * 1000)
    expect(await provider.getAccessToken()).toBe(first)
    clock.advance(2000)
    const second = await provider.getAccessToken()
    expect(second).not.toBe(first)
    await provider.createQr(req())
    expect(count('/cgi-bin/stable_token')).toBe(2)
  })

  it('on 40001 the token is dropped and the call retried once; concurrent failures drop it once', async () => {
    const { emulator, provider, count } = await setup()
    const old = await provider.getAccessToken()
    emulator.invalidateTokens()
    const results = await Promise.all(Array.from({ length: 5 }, () => provider.createQr(req())))
    expect(results).toHaveLength(5)
    expect(await provider.getAccessToken()).not.toBe(old)
    // The first fetch plus exactly one renewal, however many calls failed with the old token.
    expect(count('/cgi-bin/stable_token')).toBe(2)
    expect(emulator.requests().filter((r) => r.path === '/cgi-bin/qrcode/create' && r.errcode === 40001)).toHaveLength(5)
  })

  it('retries once only: a second rejection is reported', async () => {
    const { emulator, provider, count } = await setup()
    emulator.failNext('qrcode/create', { errcode: 40001, errmsg: 'invalid credential, access_token is invalid or not latest' }, 2)
    const error = await provider.createQr(req()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WechatApiError)
    expect(error).toMatchObject({ code: 'api_error', errcode: 40001, endpoint: 'cgi-bin/qrcode/create' })
    expect(count('/cgi-bin/qrcode/create')).toBe(2)
  })

  it.each([42001, 40014])('retries on %i too, but not on other errcodes', async (errcode) => {
    const { emulator, provider, count } = await setup()
    emulator.failNext('qrcode/create', { errcode, errmsg: 'token problem' })
    await provider.createQr(req())
    expect(count('/cgi-bin/qrcode/create')).toBe(2)
    emulator.failNext('qrcode/create', { errcode: 45009, errmsg: 'reach max api daily quota limit' })
    await expect(provider.createQr(req())).rejects.toThrow(/errcode 45009 \(reach max api daily quota limit/)
    expect(count('/cgi-bin/qrcode/create')).toBe(3)
  })

  it('classic mode: GET cgi-bin/token; another fetcher invalidates our token and we recover with one retry', async () => {
    const { emulator, provider, count, clock } = await setup({ classicTokenOverlapSeconds: 0 }, { tokenEndpoint: 'classic' })
    await provider.createQr(req())
    expect(count('/cgi-bin/token')).toBe(1)
    expect(count('/cgi-bin/stable_token')).toBe(0)
    // Another process fetches a classic token: ours is no longer the latest.
    const other = createWechatQrProvider({ ...emulator.qrProviderOptions(), tokenEndpoint: 'classic', now: clock.now })
    await other.getAccessToken()
    await provider.createQr(req())
    expect(count('/cgi-bin/token')).toBe(3)
    expect(emulator.requests().filter((r) => r.errcode === 40001)).toHaveLength(1)
  })

  it('a shared token cache lets several providers (processes) use one token', async () => {
    const { emulator, count, clock } = await setup({ classicTokenOverlapSeconds: 0 })
    const map = new Map<string, CachedToken>()
    const sets: Array<[string, number]> = []
    const tokenCache: TokenCache = {
      get: async (key) => map.get(key) ?? null,
      set: async (key, value, ttl) => void (map.set(key, structuredClone(value)), sets.push([key, ttl])),
    }
    const make = () => createWechatQrProvider({ ...emulator.qrProviderOptions(), tokenEndpoint: 'classic', tokenCache, now: clock.now })
    const [a, b, c] = [make(), make(), make()]
    await a.createQr(req())
    await Promise.all([b.createQr(req()), c.createQr(req()), a.createQr(req())])
    expect(count('/cgi-bin/token')).toBe(1)
    expect(sets).toEqual([[`scanauth:wechat:token:${ACCOUNT.appId}:classic`, 6900]])
  })

  it('compare-and-drop with a shared cache: a token another process already replaced is kept', async () => {
    const { emulator, count, clock } = await setup()
    const map = new Map<string, CachedToken>()
    const tokenCache: TokenCache = { get: async (k) => map.get(k), set: async (k, v) => void map.set(k, v) }
    const a = createWechatQrProvider({ ...emulator.qrProviderOptions(), tokenCache, now: clock.now })
    const b = createWechatQrProvider({ ...emulator.qrProviderOptions(), tokenCache, now: clock.now })
    await a.createQr(req())
    await b.createQr(req())
    emulator.invalidateTokens()
    await a.createQr(req()) // a sees 40001, fetches a new token and shares it
    await b.createQr(req()) // b sees 40001 with its old copy, finds a's new token in the cache: no fetch
    expect(count('/cgi-bin/stable_token')).toBe(2)
  })

  it('a failing cache does not stop QR creation, and is reported', async () => {
    const errors: unknown[] = []
    const broken: TokenCache = { get: async () => Promise.reject(new Error('cache down')), set: async () => Promise.reject(new Error('cache down')) }
    const { provider } = await setup({}, { tokenCache: broken, onTokenCacheError: (e) => void errors.push(e) })
    await provider.createQr(req())
    expect(errors).toHaveLength(2)
  })
})

describe('failures name their cause (and become a useful 502 in core)', () => {
  async function failureOf(run: () => Promise<unknown>) {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).not.toContain(ACCOUNT.appSecret)
    return error as Error
  }

  it('timeout', async () => {
    const { emulator, provider } = await setup({}, { timeoutMs: 150 })
    await provider.getAccessToken()
    emulator.failNext('qrcode/create', { hang: true })
    const error = await failureOf(() => provider.createQr(req()))
    expect(error).toBeInstanceOf(WechatHttpError)
    expect(error).toMatchObject({ code: 'http_error', endpoint: 'cgi-bin/qrcode/create', failure: 'timeout', message: 'WeChat cgi-bin/qrcode/create timed out after 150 ms' })
  })

  it('token endpoint timeout', async () => {
    const { emulator, provider } = await setup({}, { timeoutMs: 150 })
    emulator.failNext('stable_token', { hang: true })
    expect((await failureOf(() => provider.createQr(req()))).message).toBe('WeChat cgi-bin/stable_token timed out after 150 ms')
  })

  it('wrong secret, wrong appid (stable and classic)', async () => {
    const { emulator } = await setup()
    const wrongSecret = createWechatQrProvider({ ...emulator.qrProviderOptions(), appSecret: 'nope' })
    expect((await failureOf(() => wrongSecret.createQr(req()))).message).toMatch(/^WeChat cgi-bin\/stable_token failed: errcode 40125 \(invalid appsecret.*check appSecret$/)
    const wrongApp = createWechatQrProvider({ ...emulator.qrProviderOptions(), appId: 'wx_other', tokenEndpoint: 'classic' })
    expect((await failureOf(() => wrongApp.createQr(req()))).message).toMatch(/^WeChat cgi-bin\/token failed: errcode 40013 \(invalid appid.*check appId$/)
  })

  it('API errors, HTTP status, a body that is not JSON, an answer without a ticket', async () => {
    const { emulator, provider } = await setup()
    emulator.failNext('qrcode/create', { errcode: 48001, errmsg: 'api unauthorized' })
    expect((await failureOf(() => provider.createQr(req()))).message).toMatch(
      /^WeChat cgi-bin\/qrcode\/create failed: errcode 48001 \(api unauthorized rid: \w+\); only a verified service account may create parametric QR codes$/,
    )
    emulator.failNext('qrcode/create', { httpStatus: 503, body: 'Service Unavailable' })
    expect(await failureOf(() => provider.createQr(req()))).toMatchObject({ failure: 'http_status', httpStatus: 503, message: 'WeChat cgi-bin/qrcode/create answered HTTP 503: Service Unavailable' })
    emulator.failNext('qrcode/create', { httpStatus: 200, body: '<html>gateway</html>' })
    expect((await failureOf(() => provider.createQr(req()))).message).toBe('WeChat cgi-bin/qrcode/create answered with a body that is not JSON: <html>gateway</html>')
    emulator.failNext('qrcode/create', { httpStatus: 200, body: '{"errcode":0}' })
    expect((await failureOf(() => provider.createQr(req()))).message).toBe('WeChat cgi-bin/qrcode/create answered without a ticket')
  })

  it('connection refused', async () => {
    const port = await freePort()
    const provider = createWechatQrProvider({ appId: 'a', appSecret: 'b', apiBaseUrl: `http://127.0.0.1:${port}` })
    const error = await failureOf(() => provider.createQr(req()))
    expect(error).toMatchObject({ failure: 'network' })
    expect(error.message).toMatch(/^WeChat cgi-bin\/stable_token request failed: .*ECONNREFUSED/)
  })

  it("core answers create_scene with 502 in its own words, gives WeChat's cause to onError and the error, and stores nothing", async () => {
    const { emulator, provider } = await setup()
    const store = new MemoryStore()
    const reported: unknown[] = []
    const handle = createHttpHandler(createScanAuth({ store, qr: provider }), { onError: (e) => void reported.push(e) })
    emulator.failNext('qrcode/create', { errcode: 45009, errmsg: 'reach max api daily quota limit' })
    const res = await handle({ method: 'POST', path: '/auth/create_scene', body: JSON.stringify({ device_id: 'tv' }) })
    expect(res?.status).toBe(502)
    // WeChat's own text is not for the caller (B-wire-5): it can name the server's address.
    expect((res?.body as { detail: string }).detail).toMatch(/^QR code creation failed: the messaging platform refused/)
    expect(JSON.stringify(res?.body)).not.toMatch(/45009|quota/)
    expect((reported[0] as Error).message).toMatch(/^QR code creation failed: WeChat cgi-bin\/qrcode\/create failed: errcode 45009 \(reach max api daily quota limit/)
    // A fresh provider has no token yet: the token endpoint's failure is the cause.
    const auth = createScanAuth({ store, qr: createWechatQrProvider(emulator.qrProviderOptions()) })
    emulator.failNext('stable_token', { httpStatus: 502 })
    const error = await auth.createScene({ deviceId: 'tv' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ScanAuthError)
    expect(error).toMatchObject({ status: 502, message: 'QR code creation failed: WeChat cgi-bin/stable_token answered HTTP 502' })
    expect(store.snapshot().scenes).toHaveLength(0)
  })
})

/** A port nothing listens on: bind one, note it, close it. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

