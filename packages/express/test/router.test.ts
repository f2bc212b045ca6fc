// scanAuthRouter over real sockets, with core only (MemoryStore): the routes as every framework
// adapter serves them (testkit's describeHttpRoutes), then what is Express's own: living beside the
// app's own body parsers, and a base path of its own.
import { describe, expect, it } from 'vitest'
import express, { type Express } from 'express'
import type { ScanAuth } from '@scanauth/core'
import { describeHttpRoutes, fetchJson, postJson, serverPerTest } from '@scanauth/testkit'
import { scanAuthRouter, type ScanAuthRouterOptions } from '../src/index'
import { closedSqliteStore, memoryAuth } from './support/fixtures'

const serve = serverPerTest()

/** An app the way people write one: a global JSON parser, our router at /auth, routes of its own. */
function hostApp(auth: ScanAuth, parser: express.RequestHandler | null = express.json(), options: ScanAuthRouterOptions = {}): Express {
  const app = express()
  if (parser) app.use(parser)
  app.use('/auth', scanAuthRouter(auth, options))
  app.post('/auth/login', (req, res) => void res.json({ own: 'login', got: req.body ?? null }))
  app.get('/auth/profile', (_req, res) => void res.json({ own: 'profile' }))
  app.get('/health', (_req, res) => void res.type('text').send('ok'))
  return app
}

describeHttpRoutes('express', (auth, { bodyParser = true, onError, heartbeatMs }) => serve(hostApp(auth, bodyParser ? express.json() : null, { onError, heartbeatMs })), {
  failingStore: closedSqliteStore,
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

  it('passes purchaseUrl on: need_purchase answers carry purchase_url', async () => {
    const auth = memoryAuth()
    const app = express()
    app.use('/auth', scanAuthRouter(auth, { purchaseUrl: '/shop' }))
    const url = await serve(app)
    const scene = (await auth.createScene({ deviceId: 'tv' })).sceneStr
    await auth.handleScan({ sceneStr: scene, openid: 'o_buyer' })
    const trial = (await auth.getUser({ openid: 'o_buyer' }))?.current
    await auth.revokeAuthorization({ authorizationId: trial?.id as number })
    expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase', purchase_url: '/shop' })
  })
})
