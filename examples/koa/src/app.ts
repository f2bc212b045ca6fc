/**
 * The Koa example app: an ordinary Koa app (@koa/bodyparser, routes of its own) with scanauth at
 * `/auth`, the WeChat callback at `/wechat/callback`, WeChat Pay's notifications at
 * `/wechatpay/notify`, and the demo page at `/`. The configuration,
 * store and platform wiring, and the page are `@scanauth/example-shared`'s.
 *
 * @module
 */
import Koa from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { scanAuthMiddleware, wechatCallbackMiddleware, wechatPayNotifyMiddleware } from '@scanauth/koa'
import { createWiring, listenAndWire, NOTIFY_PATH, publicFile, type DemoResponse, type ExampleConfig, type RunningServer, type Wiring } from '@scanauth/example-shared'

/** Builds the app for `config` (store, platform, routes); `wiring.close()` releases them. */
export async function createApp(config: ExampleConfig): Promise<{ app: Koa; wiring: Wiring }> {
  const wiring = await createWiring(config, 'koa')
  const app = new Koa()
  app.silent = true // errors are logged below, once
  app.on('error', (error: unknown, ctx?: Koa.Context) => wiring.log(`error on ${ctx?.method} ${ctx?.path}: ${error instanceof Error ? error.stack : String(error)}`))
  app.use(async (ctx, next) => {
    try {
      await next()
    } finally {
      wiring.logRequest(ctx.method, ctx.path, ctx.status)
    }
  })
  // WeChat Pay signs the bytes it sends: its notifications go in before the body parser reads them.
  app.use(
    wechatPayNotifyMiddleware(wiring.wechatPayNotify, {
      path: NOTIFY_PATH,
      onError: (error) => wiring.log(`WeChat Pay notification not handed over: ${String(error)}`),
    }),
  )
  // The app's own global parser: scanauth and the WeChat callback work beside it. JSON only, as
  // express.json(): a form or text/plain post, which any web page can send cross-site without a
  // preflight, stays unparsed, so the demo routes and the app's own see no body (400, as in Express)
  // and scanauth's routes read it raw. A body it cannot read (invalid JSON, an unknown charset, a
  // broken gzip) is the client's mistake: 4xx {detail}, as the Express example answers it, rather
  // than Koa's plain-text error or a 500.
  const parseBody = bodyParser({ enableTypes: ['json'] })
  app.use(async (ctx, next) => {
    // `application/json` alone, like express.json()'s default type (not bodyParser's +json family).
    if (!ctx.request.is('application/json')) return next()
    try {
      await parseBody(ctx, async () => {})
    } catch (error) {
      const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown }
      const known = typeof status === 'number' && status >= 400 && status < 500
      ctx.status = known ? status : 400
      // Like scanauth's own answers (B-wire-2): an error is never cached by a proxy or the browser.
      ctx.set('cache-control', 'no-store')
      ctx.body = { detail: known && expose === true ? String(message) : 'The request body could not be read' }
      return
    }
    await next()
  })

  app.use(scanAuthMiddleware(wiring.auth, { basePath: '/auth', onError: wiring.logError }))
  app.use(wechatCallbackMiddleware(wiring.wechatCallback, { path: '/wechat/callback' }))

  // Routes of the app itself. `/api/me` shows how a route of yours checks the session.
  app.use(async (ctx, next) => {
    const route = `${ctx.method} ${ctx.path}`
    if (route === 'GET /healthz') ctx.body = 'ok'
    else if (route === 'GET /api/me') {
      const token = /^Bearer (\S+)$/i.exec(ctx.get('authorization'))?.[1]
      const session = token ? await wiring.auth.verifySession(token) : null
      if (session === null) {
        ctx.status = 401
        ctx.body = { detail: 'Sign in by scanning the code' }
      } else ctx.body = { user_id: session.userId, device_id: session.deviceId, authorization: session.authorization }
    } else if (route === 'GET /demo/config') send(ctx, wiring.demoConfig())
    else if (route === 'POST /demo/emulator-scan') send(ctx, await wiring.demoScan(ctx.request.body))
    else if (route === 'POST /demo/pay') send(ctx, await wiring.demoPay(ctx.request.body))
    else if (route === 'GET /demo/qr.svg') send(ctx, await wiring.demoQr(ctx.query.text))
    else if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      const file = await publicFile(ctx.path)
      if (file === undefined) return next()
      ctx.type = file.type
      ctx.body = file.body
    } else await next()
  })
  return { app, wiring }
}

/** Creates the app and listens (`config.port` 0 picks a free port); the result says where, and closes it all. */
export async function startServer(config: ExampleConfig): Promise<RunningServer> {
  const { app, wiring } = await createApp(config)
  return listenAndWire(app.callback(), wiring, config)
}

function send(ctx: Koa.Context, r: DemoResponse): void {
  ctx.status = r.status
  // The demo's answers are of the moment, like scanauth's (B-wire-2), unless one says otherwise.
  ctx.set({ 'cache-control': 'no-store', ...r.headers })
  if (r.type !== undefined) ctx.type = r.type
  ctx.body = r.body
}
