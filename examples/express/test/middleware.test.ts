// The Express middleware over real sockets, with core only (MemoryStore and a QR provider in the
// test): the routes as every framework serves them (middleware-suite.ts), then what is Express's own:
// living beside the app's own body parsers, a base path of its own, the WeChat callback's raw body.
import { describe, expect, it } from 'vitest'
import express, { type Express } from 'express'
import type { ScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatCallbackMiddleware, type WechatCallback } from '../src/index'
import { memoryAuth, postJson, serverPerTest } from './helpers'
import { describeMiddlewareRoutes } from './middleware-suite'

const serve = serverPerTest()

/** An app the way people write one: a global JSON parser, our router at /auth, routes of its own. */
function hostApp(auth: ScanAuth, parser: express.RequestHandler | null = express.json(), onError?: (error: unknown) => void): Express {
  const app = express()
  if (parser) app.use(parser)
  app.use('/auth', scanAuthRouter(auth, { onError }))
  app.post('/auth/login', (req, res) => void res.json({ own: 'login', got: req.body ?? null }))
  app.get('/auth/profile', (_req, res) => void res.json({ own: 'profile' }))
  app.get('/health', (_req, res) => void res.type('text').send('ok'))
  return app
}

describeMiddlewareRoutes('express', {
  serveHost: (auth, { bodyParser = true, onError } = {}) => serve(hostApp(auth, bodyParser ? express.json() : null, onError)),
})

describe('scanAuthRouter', () => {
  it("leaves the body of a route that is not ours unread, for the app's own parser", async () => {
    const app = express()
    app.use('/auth', scanAuthRouter(memoryAuth()))
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
    const url = await serve(hostApp(memoryAuth(), parser))
    const res = await postJson(`${url}/auth/create_scene`, { device_id: 'beside-a-parser' })
    expect(res.status).toBe(200)
    expect(res.body.scene_str).toMatch(/^pc_/)
  })

  it('serves at a base path of its own when mounted at the root', async () => {
    const app = express()
    app.use(express.json())
    app.use(scanAuthRouter(memoryAuth(), { basePath: '/api/scan' }))
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
