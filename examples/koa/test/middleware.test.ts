// The Koa middleware over real sockets, with core only (MemoryStore and a QR provider in the test):
// the routes as every framework serves them (the Express project's middleware-suite.ts), then what is
// Koa's own: living beside @koa/bodyparser, before or after it, and the WeChat callback's raw body.
import { describe, expect, it } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import type { ScanAuth } from '@scanauth/core'
import { scanAuthMiddleware, wechatCallbackMiddleware } from '../src/index'
import { fetchJson, memoryAuth, postJson, realCallback, serverPerTest } from '../../express/test/helpers'
import { describeMiddlewareRoutes } from '../../express/test/middleware-suite'

const serveListener = serverPerTest()
const serve = (app: Koa): Promise<string> => serveListener(app.callback())

/** The app's own routes, after ours. */
const ownRoutes: Middleware = async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/auth/login') ctx.body = { own: 'login', got: ctx.request.body ?? null }
  else if (ctx.method === 'GET' && ctx.path === '/auth/profile') ctx.body = { own: 'profile' }
  else if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = 'ok'
  else await next()
}

/** An app the way people write one: @koa/bodyparser first, then scanauth, then routes of its own. */
function hostApp(auth: ScanAuth, parser: Middleware | null = bodyParser(), onError?: (error: unknown) => void): Koa {
  const app = new Koa()
  if (parser) app.use(parser)
  app.use(scanAuthMiddleware(auth, { prefix: '/auth', onError }))
  app.use(ownRoutes)
  return app
}

describeMiddlewareRoutes('koa', {
  serveHost: (auth, { bodyParser: parse = true, onError } = {}) => serve(hostApp(auth, parse ? bodyParser() : null, onError)),
})

describe('scanAuthMiddleware', () => {
  it('answers 400 (from the parser) for invalid JSON when @koa/bodyparser reads it first', async () => {
    const app = hostApp(memoryAuth())
    app.silent = true // Koa would print the parser's error
    const url = await serve(app)
    const res = await fetch(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(res.status).toBe(400)
    await res.text()
  })

  it("leaves the body of a route that is not ours unread for a parser after it, and reads its own routes' bodies itself", async () => {
    const app = new Koa()
    app.use(scanAuthMiddleware(memoryAuth()))
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
    const url = await serve(hostApp(memoryAuth(), parser))
    const json = await postJson(`${url}/auth/create_scene`, { device_id: 'beside-a-parser' })
    expect(json.status).toBe(200)
    // A JSON body sent as text/plain: the parser leaves it (or keeps it as text); core reads it.
    const text = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"device_id":"t"}' })
    expect(text.status).toBe(200)
  })
})

describe('wechatCallbackMiddleware', () => {
  // The real callback and service: a push is processed only when its raw body arrives intact.
  it.each([
    ['bodyParser() (JSON and forms)', bodyParser()],
    ['bodyParser() that parses XML as text', bodyParser({ enableTypes: ['json', 'xml'] })],
    ['no parser', null],
  ])('gets the raw XML body beside %s', async (_name, parser) => {
    const wechat = await realCallback()
    const app = new Koa()
    if (parser) app.use(parser)
    app.use(wechatCallbackMiddleware(wechat.callback, { path: '/wechat/callback' }))
    app.use(ownRoutes)
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
    expect(await (await fetch(`${url}/wechat/callback?${wechat.verifyQuery}`)).text()).toBe('echo-42')
    expect(await (await fetch(`${url}/health`)).text()).toBe('ok')
  })

  it('refuses a body that is too large', async () => {
    const wechat = await realCallback()
    const app = new Koa()
    app.use(wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const big = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(big.status).toBe(413)
    await big.text()
    expect(await wechat.scanned()).toBe(false)
  })
})
