// scanAuthMiddleware over real sockets, with core only (MemoryStore): the routes as every framework
// adapter serves them (testkit's describeHttpRoutes), then what is Koa's own: living beside
// @koa/bodyparser, before or after it.
import { describe, expect, it } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import {
  describeHttpRoutes,
  eventually,
  fetchJson,
  openEventStream,
  postJson,
  RecordingQrProvider,
  serverPerTest,
  WatchCountingStore,
} from '@scanauth/testkit'
import { scanAuthMiddleware, type ScanAuthMiddlewareOptions } from '../src/index'
import { closedSqliteStore, memoryAuth } from '../../express/test/support/fixtures'

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
function hostApp(auth: ScanAuth, parser: Middleware | null = bodyParser(), options: ScanAuthMiddlewareOptions = {}): Koa {
  const app = new Koa()
  if (parser) app.use(parser)
  app.use(scanAuthMiddleware(auth, { basePath: '/auth', ...options }))
  app.use(ownRoutes)
  return app
}

describeHttpRoutes('koa', (auth, { bodyParser: parse = true, onError, heartbeatMs }) => serve(hostApp(auth, parse ? bodyParser() : null, { onError, heartbeatMs })), {
  failingStore: closedSqliteStore,
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
    // A JSON body sent as text/plain (what another site's page can send without a preflight): 415
    // whether the parser leaves it or keeps it as text (B-wire-6).
    const text = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"device_id":"t"}' })
    expect(text.status).toBe(415)
  })

  it('serves at another base path', async () => {
    const app = new Koa()
    app.use(bodyParser())
    app.use(scanAuthMiddleware(memoryAuth(), { basePath: '/api/scan' }))
    const url = await serve(app)
    expect((await postJson(`${url}/api/scan/create_scene`, { device_id: 'd' })).status).toBe(200)
    expect((await postJson(`${url}/auth/create_scene`, { device_id: 'd' })).status).toBe(404)
  })

  it('passes purchaseUrl on: need_purchase answers carry purchase_url', async () => {
    const auth = memoryAuth()
    const app = new Koa()
    app.use(scanAuthMiddleware(auth, { purchaseUrl: '/shop' }))
    const url = await serve(app)
    const scene = (await auth.createScene({ deviceId: 'tv' })).sceneStr
    await auth.handleScan({ sceneStr: scene, openid: 'o_buyer' })
    const trial = (await auth.getUser({ openid: 'o_buyer' }))?.current
    await auth.revokeAuthorization({ authorizationId: trial?.id as number })
    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase', purchase_url: '/shop' })
  })

  it('reports no error when an event stream client leaves, and middleware before it sees the stream end with 200', async () => {
    const store = new WatchCountingStore()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider() })
    const app = new Koa()
    const errors: unknown[] = []
    app.on('error', (error: unknown) => void errors.push(error))
    const seen: number[] = []
    app.use(async (ctx, next) => {
      ctx.set('x-frame-options', 'DENY') // headers set before next() go out with the stream's
      await next()
      seen.push(ctx.status)
    })
    app.use(scanAuthMiddleware(auth))
    const url = await serve(app)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
    expect(stream.response.headers.get('x-frame-options')).toBe('DENY')
    expect((await stream.next())?.event).toBe('status')
    await eventually('the stream to wait', () => store.subscriptions === 1)
    stream.abort()
    await eventually('the store subscription to be released', () => store.subscriptions === 0)
    await eventually('the middleware before it to resume', () => seen.length === 1)
    expect(seen).toEqual([200])
    expect(errors).toEqual([])
  })
})
