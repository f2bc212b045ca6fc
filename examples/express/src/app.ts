/**
 * The Express example app: an ordinary Express app (a global JSON parser, routes of its own) with
 * scanauth mounted at `/auth`, the WeChat callback at `/wechat/callback`, WeChat Pay's notifications
 * at `/wechatpay/notify`, and the demo page at `/`.
 * The configuration, store and platform wiring, and the page are `@scanauth/example-shared`'s.
 *
 * @module
 */
import express, { type ErrorRequestHandler, type Express } from 'express'
import { scanAuthRouter, wechatCallbackMiddleware, wechatPayNotifyMiddleware } from '@scanauth/express'
import { CLIENT_SCRIPT_PATH, createWiring, listenAndWire, NOTIFY_PATH, PUBLIC_DIR, publicFile, type DemoResponse, type ExampleConfig, type RunningServer, type Wiring } from '@scanauth/example-shared'

/** Builds the app for `config` (store, platform, routes); `wiring.close()` releases them. */
export async function createApp(config: ExampleConfig): Promise<{ app: Express; wiring: Wiring }> {
  const wiring = await createWiring(config, 'express')
  const app = express()
  app.disable('x-powered-by')
  app.use((req, res, next) => {
    res.on('finish', () => wiring.logRequest(req.method, req.originalUrl.split('?')[0] ?? '', res.statusCode))
    next()
  })
  // WeChat Pay signs the bytes it sends: its notifications go in before any body parser reads them.
  app.use(NOTIFY_PATH, wechatPayNotifyMiddleware(wiring.wechatPayNotify, { onError: (error) => wiring.log(`WeChat Pay notification not handed over: ${String(error)}`) }))
  // The app's own global parser: scanauth and the WeChat callback work beside it.
  app.use(express.json())

  app.use('/auth', scanAuthRouter(wiring.auth, { onError: wiring.logError }))
  app.use('/wechat/callback', wechatCallbackMiddleware(wiring.wechatCallback))

  // Routes of the app itself. `/api/me` shows how a route of yours checks the session.
  app.get('/healthz', (_req, res) => void res.type('text').send('ok'))
  app.get('/api/me', async (req, res) => {
    const token = /^Bearer (\S+)$/i.exec(req.get('authorization') ?? '')?.[1]
    const session = token ? await wiring.auth.verifySession(token) : null
    if (session === null) return void res.status(401).json({ detail: 'Sign in by scanning the code' })
    res.json({ user_id: session.userId, device_id: session.deviceId, authorization: session.authorization })
  })
  app.get('/demo/config', (_req, res) => send(res, wiring.demoConfig()))
  app.post('/demo/emulator-scan', async (req, res) => send(res, await wiring.demoScan(req.body)))
  app.post('/demo/pay', async (req, res) => send(res, await wiring.demoPay(req.body)))
  app.get('/demo/qr.svg', async (req, res) => send(res, await wiring.demoQr(req.query.text)))
  // The page's @scanauth/client, bundled by example-shared (not a file in PUBLIC_DIR).
  app.get(CLIENT_SCRIPT_PATH, async (req, res) => {
    const file = (await publicFile(req.path))!
    res.type(file.type).set('cache-control', 'no-cache').send(file.body)
  })
  app.use(express.static(PUBLIC_DIR))

  const onError: ErrorRequestHandler = (error, req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500
    if (status === 500) wiring.log(`error on ${req.method} ${req.path}: ${error instanceof Error ? error.stack : String(error)}`)
    // Like scanauth's own answers (B-wire-2): an error is never cached by a proxy or the browser.
    res.status(status).set('cache-control', 'no-store').json({ detail: status === 500 ? 'Internal error' : String(error.message) })
  }
  app.use(onError)
  return { app, wiring }
}

/** Creates the app and listens (`config.port` 0 picks a free port); the result says where, and closes it all. */
export async function startServer(config: ExampleConfig): Promise<RunningServer> {
  const { app, wiring } = await createApp(config)
  return listenAndWire(app, wiring, config)
}

function send(res: express.Response, r: DemoResponse): void {
  // The demo's answers are of the moment, like scanauth's (B-wire-2), unless one says otherwise.
  res.status(r.status).set({ 'cache-control': 'no-store', ...r.headers })
  if (r.type === undefined) res.json(r.body)
  else res.type(r.type).send(r.body)
}
