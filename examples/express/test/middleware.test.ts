// The Express middleware over real sockets, with core only (MemoryStore and a QR provider in the
// test): every route, the error paths, falling through to the app's own routes, and living beside the
// app's own body parsers.
import { afterEach, describe, expect, it } from 'vitest'
import express, { type Express } from 'express'
import { createScanAuth, MemoryStore, type QrProvider, type ScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatCallbackMiddleware, type WechatCallback } from '../src/index'
import { fetchJson, listen, postJson, testQr, type Listening } from './helpers'

const open: Listening[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()))
})

async function serve(app: Express): Promise<string> {
  const l = await listen(app)
  open.push(l)
  return l.url
}

function newAuth(qr: QrProvider = testQr()): ScanAuth {
  return createScanAuth({ store: new MemoryStore(), qr })
}

/** An app the way people write one: a global JSON parser, our router at /auth, routes of its own. */
function hostApp(auth: ScanAuth, parser: express.RequestHandler | null = express.json()): Express {
  const app = express()
  if (parser) app.use(parser)
  app.use('/auth', scanAuthRouter(auth))
  app.post('/auth/login', (req, res) => void res.json({ own: 'login', got: req.body ?? null }))
  app.get('/auth/profile', (_req, res) => void res.json({ own: 'profile' }))
  app.get('/health', (_req, res) => void res.type('text').send('ok'))
  return app
}

describe('scanAuthRouter', () => {
  it('runs the whole flow: create, scan, poll, session, consume', async () => {
    const auth = newAuth()
    const url = await serve(hostApp(auth))

    const created = await postJson(`${url}/auth/create_scene`, { device_id: 'device-1' })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ scene_str: expect.stringMatching(/^pc_[0-9a-f]{32}$/), qr_url: expect.any(String), expires_in: 300 })
    const scene = created.body.scene_str as string
    expect(created.body.qr_url).toBe(`https://qr.example.test/${scene}.png`)

    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'pending' })
    expect(await auth.handleScan({ sceneStr: scene, openid: 'openid-1' })).toMatchObject({ result: 'authorized' })

    const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
    expect(polled.status).toBe(200)
    expect(polled.headers.get('content-type')).toMatch(/^application\/json/)
    expect(polled.body).toEqual({
      status: 'authorized',
      session_token: expect.any(String),
      authorization: { type: 'time', end_at: expect.any(String), remaining_points: 0 },
    })
    const bearer = { authorization: `Bearer ${polled.body.session_token}` }

    const session = await fetchJson(`${url}/auth/session`, { headers: bearer })
    expect(session.status).toBe(200)
    expect(session.body).toMatchObject({ user_id: 1, device_id: 'device-1', authorization: { type: 'time' } })

    const consumed = await postJson(`${url}/auth/consume`, {}, bearer)
    expect(consumed.body).toMatchObject({ status: 'ok', authorization: { type: 'time' } })
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
    const missing = await fetchJson(`${url}/auth/status`)
    expect(missing.status).toBe(400)
    expect(missing.body.detail).toEqual(expect.any(String))
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
    expect((await fetchJson(`${url}/auth/session`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
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

  it("leaves the body of a route that is not ours unread, for the app's own parser", async () => {
    const app = express()
    app.use('/auth', scanAuthRouter(newAuth()))
    app.post('/auth/login', express.json(), (req, res) => void res.json({ got: req.body }))
    const url = await serve(app)
    expect((await postJson(`${url}/auth/login`, { user: 'bob' })).body).toEqual({ got: { user: 'bob' } })
  })

  it.each([
    ['express.json()', express.json()],
    ['express.text() for every type', express.text({ type: '*/*' })],
    ['express.raw() for every type', express.raw({ type: '*/*' })],
    ['express.urlencoded()', express.urlencoded({ extended: false })],
    ['no parser', null],
  ])('works beside %s', async (_name, parser) => {
    const url = await serve(hostApp(newAuth(), parser))
    const res = await postJson(`${url}/auth/create_scene`, { device_id: 'beside-a-parser' })
    expect(res.status).toBe(200)
    expect(res.body.scene_str).toMatch(/^pc_/)
  })

  it('serves at a base path of its own when mounted at the root', async () => {
    const app = express()
    app.use(express.json())
    app.use(scanAuthRouter(newAuth(), { basePath: '/api/scan' }))
    const url = await serve(app)
    expect((await postJson(`${url}/api/scan/create_scene`, { device_id: 'd' })).status).toBe(200)
    expect((await postJson(`${url}/auth/create_scene`, { device_id: 'd' })).status).toBe(404)
  })
})

describe('wechatCallbackMiddleware', () => {
  /** Stands in for createWechatCallback: echoes what it was given. */
  const echo: WechatCallback = async ({ method, query, body }) => ({
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body: `${method} ${(query as Record<string, string>).signature ?? '-'} ${Buffer.isBuffer(body) ? 'buffer' : typeof body} ${String(body)}`,
  })
  const xml = '<xml><ToUserName><![CDATA[gh_1]]></ToUserName><Event><![CDATA[SCAN]]></Event></xml>'

  it('gets the raw XML body even though the app parses JSON globally', async () => {
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(echo))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?signature=abc&timestamp=1&nonce=2`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: xml })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(`POST abc buffer ${xml}`)
    const verify = await fetch(`${url}/wechat/callback?signature=s&echostr=e`)
    expect(await verify.text()).toBe('GET s buffer ')
  })

  it('takes the body a raw or text parser on its route already read', async () => {
    const app = express()
    app.use('/raw', express.raw({ type: '*/*' }), wechatCallbackMiddleware(echo))
    app.use('/text', express.text({ type: '*/*' }), wechatCallbackMiddleware(echo))
    const url = await serve(app)
    const post = (path: string) => fetch(`${url}${path}?signature=x`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: xml })
    expect(await (await post('/raw')).text()).toBe(`POST x buffer ${xml}`)
    expect(await (await post('/text')).text()).toBe(`POST x string ${xml}`)
  })

  it('refuses a body a parser turned into an object, and one that is too large', async () => {
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(echo, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const parsed = await fetch(`${url}/wechat/callback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(parsed.status).toBe(500)
    await parsed.text()
    const big = await fetch(`${url}/wechat/callback`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: `<xml>${'a'.repeat(500)}</xml>` })
    expect(big.status).toBe(413)
    await big.text()
  })
})
