// requireSession and requireAuthorization over real sockets (testkit's describeRouteGuards, the
// suite every adapter runs), then what is Express's own: the typed req.scanauth and mounting a guard
// on a router.
import { describe, expect, it } from 'vitest'
import express from 'express'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { describeRouteGuards, fetchJson, RecordingQrProvider, serverPerTest } from '@scanauth/testkit'
import { requireAuthorization, requireSession } from '../src/index'
import { closedSqliteStore } from './support/fixtures'

const serve = serverPerTest()

describeRouteGuards(
  'express',
  (auth, { onError, basePath }) => {
    const app = express()
    const reply = (route: string): express.RequestHandler => (req, res) => void res.json({ route, scanauth: req.scanauth })
    app.get('/api/me', requireSession({ auth, onError, basePath }), reply('me'))
    app.get('/api/paid', requireAuthorization({ auth, onError, basePath }), reply('paid'))
    app.post('/api/spend', requireAuthorization({ auth, onError, basePath, points: 2 }), reply('spend'))
    app.post('/api/spend-again', requireAuthorization({ auth, onError, basePath, points: 2 }), reply('spend-again'))
    app.post('/api/spend-more', requireAuthorization({ auth, onError, basePath, points: 3 }), reply('spend-more'))
    app.post('/api/spend-replayable', requireAuthorization({ auth, onError, basePath, points: 2, replays: 'pass' }), reply('spend-replayable'))
    return serve(app)
  },
  { failingStore: closedSqliteStore },
)

describe('Express route guards', () => {
  it('guard every route of a router, which reads req.scanauth typed', async () => {
    const clock = { at: Date.parse('2026-01-01T00:00:00Z') }
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: () => clock.at })
    const api = express.Router()
    api.use(requireSession({ auth }))
    api.get('/device', (req, res) => {
      const deviceId: string | undefined = req.scanauth?.deviceId
      res.json({ deviceId })
    })
    const app = express()
    app.use('/api', api)
    app.get('/open', (req, res) => void res.json({ guarded: req.scanauth !== undefined }))
    const url = await serve(app)
    const { sceneStr } = await auth.createScene({ deviceId: 'kiosk-7' })
    await auth.handleScan({ sceneStr, openid: 'o' })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error('not authorized')
    expect((await fetchJson(`${url}/api/device`, { headers: { authorization: `Bearer ${status.sessionToken}` } })).body).toEqual({ deviceId: 'kiosk-7' })
    expect((await fetchJson(`${url}/api/device`)).status).toBe(401)
    expect((await fetchJson(`${url}/open`)).body).toEqual({ guarded: false })
  })

  it('refuses points that are not a positive integer when the middleware is created', () => {
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
    expect(() => requireAuthorization({ auth, points: 0 })).toThrow(/points/)
    expect(() => requireAuthorization({ auth, points: 1.5 })).toThrow(/points/)
    expect(() => requireAuthorization({ auth, idempotencyHeader: 'not a header' })).toThrow(/idempotencyHeader/)
  })
})
