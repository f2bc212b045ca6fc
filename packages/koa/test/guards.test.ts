// requireSession and requireAuthorization over real sockets (testkit's describeRouteGuards, the
// suite every adapter runs), then what is Koa's own: ctx.state typed with ScanAuthState.
import { describe, expect, it } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { describeRouteGuards, fetchJson, RecordingQrProvider, serverPerTest } from '@scanauth/testkit'
import { requireAuthorization, requireSession, type ScanAuthState } from '../src/index'
import { closedSqliteStore } from '../../express/test/support/fixtures'

const serveListener = serverPerTest()
const serve = (app: Koa<ScanAuthState>): Promise<string> => serveListener(app.callback())

/** Runs `guard` then answers `{ route, scanauth }` on `method path`; anything else goes on. */
function route(method: string, path: string, guard: Middleware<ScanAuthState>, name: string): Middleware<ScanAuthState> {
  return async (ctx, next) => {
    if (ctx.method !== method || ctx.path !== path) return next()
    await guard(ctx, async () => {
      ctx.body = { route: name, scanauth: ctx.state.scanauth }
    })
  }
}

describeRouteGuards(
  'koa',
  (auth, { onError, basePath }) => {
    const app = new Koa<ScanAuthState>()
    app.use(route('GET', '/api/me', requireSession({ auth, onError, basePath }), 'me'))
    app.use(route('GET', '/api/paid', requireAuthorization({ auth, onError, basePath }), 'paid'))
    app.use(route('POST', '/api/spend', requireAuthorization({ auth, onError, basePath, points: 2 }), 'spend'))
    app.use(route('POST', '/api/spend-again', requireAuthorization({ auth, onError, basePath, points: 2 }), 'spend-again'))
    app.use(route('POST', '/api/spend-more', requireAuthorization({ auth, onError, basePath, points: 3 }), 'spend-more'))
    app.use(route('POST', '/api/spend-replayable', requireAuthorization({ auth, onError, basePath, points: 2, replays: 'pass' }), 'spend-replayable'))
    return serve(app)
  },
  { failingStore: closedSqliteStore },
)

describe('Koa route guards', () => {
  it('guard every middleware after them, which reads ctx.state.scanauth typed', async () => {
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
    const app = new Koa<ScanAuthState>()
    app.use(requireSession({ auth }))
    app.use((ctx) => {
      const deviceId: string = ctx.state.scanauth.deviceId
      ctx.body = { deviceId }
    })
    const url = await serve(app)
    const { sceneStr } = await auth.createScene({ deviceId: 'kiosk-7' })
    await auth.handleScan({ sceneStr, openid: 'o' })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error('not authorized')
    expect((await fetchJson(`${url}/anything`, { headers: { authorization: `Bearer ${status.sessionToken}` } })).body).toEqual({ deviceId: 'kiosk-7' })
    const refused = await fetchJson(`${url}/anything`)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer')
  })
})
