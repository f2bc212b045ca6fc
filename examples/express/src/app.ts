/**
 * The Express example app: an ordinary Express app (a global JSON parser, routes of its own) with
 * scanauth mounted at `/auth`, the WeChat callback at `/wechat/callback`, and the demo page at `/`.
 * The configuration, store and platform wiring, and the page are `@scanauth/example-shared`'s.
 *
 * @module
 */
import express, { type ErrorRequestHandler, type Express } from 'express'
import { scanAuthRouter, wechatCallbackMiddleware } from '@scanauth/express'
import { createWiring, listenAndWire, PUBLIC_DIR, type ExampleConfig, type RunningServer, type Wiring } from '@scanauth/example-shared'

/** Builds the app for `config` (store, platform, routes); `wiring.close()` releases them. */
export async function createApp(config: ExampleConfig): Promise<{ app: Express; wiring: Wiring }> {
  const wiring = await createWiring(config, 'express')
  const app = express()
  app.disable('x-powered-by')
  app.use((req, res, next) => {
    res.on('finish', () => wiring.logRequest(req.method, req.originalUrl.split('?')[0] ?? '', res.statusCode))
    next()
  })
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
  app.post('/demo/buy', async (req, res) => send(res, await wiring.demoBuy(req.body)))
  app.use(express.static(PUBLIC_DIR))

  const onError: ErrorRequestHandler = (error, req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500
    if (status === 500) wiring.log(`error on ${req.method} ${req.path}: ${error instanceof Error ? error.stack : String(error)}`)
    res.status(status).json({ detail: status === 500 ? 'Internal error' : String(error.message) })
  }
  app.use(onError)
  return { app, wiring }
}

/** Creates the app and listens (`config.port` 0 picks a free port); the result says where, and closes it all. */
export async function startServer(config: ExampleConfig): Promise<RunningServer> {
  const { app, wiring } = await createApp(config)
  return listenAndWire(app, wiring, config)
}

function send(res: express.Response, r: { status: number; body: unknown }): void {
  res.status(r.status).json(r.body)
}
