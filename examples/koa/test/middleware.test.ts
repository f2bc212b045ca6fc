// The Koa middleware over real sockets, with core only (MemoryStore and a QR provider in the test):
// every route, the error paths, falling through to the app's own routes, and living beside
// @koa/bodyparser.
import { afterEach, describe, expect, it } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { createScanAuth, MemoryStore, type QrProvider, type ScanAuth } from '@scanauth/core'
import { scanAuthMiddleware, wechatCallbackMiddleware, type WechatCallback } from '../src/index'
import { fetchJson, listen, postJson, testQr, type Listening } from '../../express/test/helpers'

const open: Listening[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()))
})

async function serve(app: Koa): Promise<string> {
  const l = await listen(app.callback())
  open.push(l)
  return l.url
}

function newAuth(qr: QrProvider = testQr()): ScanAuth {
  return createScanAuth({ store: new MemoryStore(), qr })
}

/** The app's own routes, after ours. */
const ownRoutes: Middleware = async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/auth/login') ctx.body = { own: 'login', got: ctx.request.body ?? null }
  else if (ctx.method === 'GET' && ctx.path === '/auth/profile') ctx.body = { own: 'profile' }
  else if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = 'ok'
  else await next()
}

/** An app the way people write one: @koa/bodyparser first, then scanauth, then routes of its own. */
function hostApp(auth: ScanAuth, parser: Middleware | null = bodyParser()): Koa {
  const app = new Koa()
  if (parser) app.use(parser)
  app.use(scanAuthMiddleware(auth, { prefix: '/auth' }))
  app.use(ownRoutes)
  return app
}

describe('scanAuthMiddleware', () => {
  it('runs the whole flow: create, scan, poll, session, consume', async () => {
    const auth = newAuth()
    const url = await serve(hostApp(auth))

    const created = await postJson(`${url}/auth/create_scene`, { device_id: 'device-1' })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ scene_str: expect.stringMatching(/^pc_[0-9a-f]{32}$/), qr_url: expect.any(String), expires_in: 300 })
    const scene = created.body.scene_str as string

    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'pending' })
    expect(await auth.handleScan({ sceneStr: scene, openid: 'openid-1' })).toMatchObject({ result: 'authorized' })

    const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
    expect(polled.headers.get('content-type')).toMatch(/^application\/json/)
    expect(polled.headers.get('cache-control')).toBe('no-store')
    expect(polled.body).toEqual({
      status: 'authorized',
      session_token: expect.any(String),
      authorization: { type: 'time', end_at: expect.any(String), remaining_points: 0 },
    })
    const bearer = { authorization: `Bearer ${polled.body.session_token}` }

    const session = await fetchJson(`${url}/auth/session`, { headers: bearer })
    expect(session.body).toMatchObject({ user_id: 1, device_id: 'device-1', authorization: { type: 'time' } })
    expect((await postJson(`${url}/auth/consume`, {}, bearer)).body).toMatchObject({ status: 'ok', authorization: { type: 'time' } })
  })

  it('answers HEAD like GET', async () => {
    const auth = newAuth()
    const url = await serve(hostApp(auth))
    const { sceneStr } = await auth.createScene({ deviceId: 'd' })
    const res = await fetch(`${url}/auth/status?scene=${sceneStr}`, { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
  })

  it('answers 400 with {detail} for malformed input', async () => {
    const url = await serve(hostApp(newAuth(), null))
    const bad = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id":' })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ detail: expect.stringMatching(/JSON/) })
    expect((await postJson(`${url}/auth/create_scene`, {})).status).toBe(400)
    expect((await postJson(`${url}/auth/create_scene`, { device_id: 'x'.repeat(129) })).status).toBe(400)
    expect((await postJson(`${url}/auth/create_scene`, { device_id: 'y'.repeat(20_000) })).body).toEqual({ detail: expect.stringMatching(/too large/) })
    expect((await fetchJson(`${url}/auth/status`)).status).toBe(400)
  })

  it('answers 400 (from the parser) for invalid JSON when @koa/bodyparser reads it first', async () => {
    const app = hostApp(newAuth())
    app.silent = true // Koa would print the parser's error
    const url = await serve(app)
    const res = await fetch(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(res.status).toBe(400)
    await res.text()
  })

  it('answers 404 for an unknown scene, 405 for a wrong method, 401 without a session', async () => {
    const url = await serve(hostApp(newAuth()))
    const unknown = await fetchJson(`${url}/auth/status?scene=pc_${'0'.repeat(32)}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ detail: expect.any(String) })

    const wrong = await fetchJson(`${url}/auth/create_scene`)
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('POST')
    expect((await postJson(`${url}/auth/status`, {})).status).toBe(405)

    const noToken = await fetchJson(`${url}/auth/session`)
    expect(noToken.status).toBe(401)
    expect(noToken.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('answers 502 when the platform cannot create the code, and stores nothing', async () => {
    const store = new MemoryStore()
    const url = await serve(hostApp(createScanAuth({ store, qr: testQr('platform is down') })))
    const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
    expect(res.status).toBe(502)
    expect(res.body.detail).toMatch(/QR code creation failed.*platform is down/)
    expect(store.snapshot().scenes).toEqual([])
  })

  it("falls through to the app's own routes, inside and outside the prefix", async () => {
    const url = await serve(hostApp(newAuth()))
    expect((await postJson(`${url}/auth/login`, { user: 'ann' })).body).toEqual({ own: 'login', got: { user: 'ann' } })
    expect((await fetchJson(`${url}/auth/profile`)).body).toEqual({ own: 'profile' })
    expect((await fetchJson(`${url}/health`)).body).toBe('ok')
    expect((await fetchJson(`${url}/auth/nothing-here`)).status).toBe(404)
  })

  it("leaves the body of a route that is not ours unread, for a parser after it", async () => {
    const app = new Koa()
    app.use(scanAuthMiddleware(newAuth()))
    app.use(bodyParser())
    app.use(ownRoutes)
    const url = await serve(app)
    expect((await postJson(`${url}/auth/login`, { user: 'bob' })).body).toEqual({ own: 'login', got: { user: 'bob' } })
    expect((await postJson(`${url}/auth/create_scene`, { device_id: 'd' })).status).toBe(200)
  })

  it.each([
    ['bodyParser()', bodyParser()],
    ['bodyParser() for text and XML too', bodyParser({ enableTypes: ['json', 'form', 'text', 'xml'] })],
    ['no parser', null],
  ])('works beside %s', async (_name, parser) => {
    const url = await serve(hostApp(newAuth(), parser))
    const json = await postJson(`${url}/auth/create_scene`, { device_id: 'beside-a-parser' })
    expect(json.status).toBe(200)
    // A JSON body sent as text/plain: the parser leaves it (or keeps it as text); core reads it.
    const text = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"device_id":"t"}' })
    expect(text.status).toBe(200)
  })
})

describe('wechatCallbackMiddleware', () => {
  /** Stands in for createWechatCallback: echoes what it was given. */
  const echo: WechatCallback = async ({ method, query, body }) => ({
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body: `${method} ${(query as Record<string, string>).signature ?? '-'} ${String(body)}`,
  })
  const xml = '<xml><ToUserName><![CDATA[gh_1]]></ToUserName><Event><![CDATA[SCAN]]></Event></xml>'
  const post = (url: string) => fetch(`${url}/wechat/callback?signature=abc`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: xml })

  it.each([
    ['bodyParser() (JSON and forms)', bodyParser()],
    ['bodyParser() that parses XML as text', bodyParser({ enableTypes: ['json', 'xml'] })],
    ['no parser', null],
  ])('gets the raw XML body beside %s', async (_name, parser) => {
    const app = new Koa()
    if (parser) app.use(parser)
    app.use(wechatCallbackMiddleware(echo, { path: '/wechat/callback' }))
    app.use(ownRoutes)
    const url = await serve(app)
    const res = await post(url)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(`POST abc ${xml}`)
    expect(await (await fetch(`${url}/wechat/callback?signature=s&echostr=e`)).text()).toBe('GET s ')
    expect(await (await fetch(`${url}/health`)).text()).toBe('ok')
  })

  it('refuses a body that is too large', async () => {
    const app = new Koa()
    app.use(wechatCallbackMiddleware(echo, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const big = await fetch(`${url}/wechat/callback`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: `<xml>${'a'.repeat(500)}</xml>` })
    expect(big.status).toBe(413)
    await big.text()
  })
})
