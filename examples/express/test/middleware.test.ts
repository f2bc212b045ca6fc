// The Express middleware over real sockets, with core only (MemoryStore and a QR provider in the
// test): the routes as every framework serves them (middleware-suite.ts), then what is Express's own:
// living beside the app's own body parsers, a base path of its own, the WeChat callback's raw body.
import { describe, expect, it } from 'vitest'
import express, { type Express } from 'express'
import type { ScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatCallbackMiddleware } from '../src/index'
import { memoryAuth, postJson, realCallback, serverPerTest } from './helpers'
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
  // The real callback and service: a push is processed only when its raw body arrives intact.
  it('gets the raw XML body even though the app parses JSON globally', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
    const verify = await fetch(`${url}/wechat/callback?${wechat.verifyQuery}`)
    expect(await verify.text()).toBe('echo-42')
  })

  it.each([
    ['express.raw()', express.raw({ type: '*/*' })],
    ['express.text()', express.text({ type: '*/*' })],
  ])('takes the body %s on its route already read', async (_name, parser) => {
    const wechat = await realCallback()
    const app = express()
    app.use('/wechat/callback', parser, wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
  })

  it('refuses a body a parser turned into an object, and one that is too large', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const parsed = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(parsed.status).toBe(500)
    await parsed.text()
    const big = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(big.status).toBe(413)
    await big.text()
    expect(await wechat.scanned()).toBe(false)
  })
})
