// The Fetch guards (requireSessionFetch, requireAuthorizationFetch) as Hono middleware over real
// sockets: testkit's describeRouteGuards, the suite every adapter runs. Each middleware is the two
// lines docs/frameworks.md shows.
import { Hono, type MiddlewareHandler } from 'hono'
import { describe, expect, it } from 'vitest'
import { MemoryStore, createScanAuth, requireAuthorizationFetch, requireSessionFetch, type FetchGuard, type Store, type VerifiedSession } from '@scanauth/core'
import { describeRouteGuards, RecordingQrProvider } from '@scanauth/testkit'
import { honoServerPerTest } from './fetch-hono'

const serveApp = honoServerPerTest()

type Env = { Variables: { scanauth: VerifiedSession } }

/** A store whose backend is gone: every call rejects, as a closed database does. */
async function failingStore(): Promise<Store> {
  const gone = () => Promise.reject(new Error('the database connection is closed'))
  return { load: gone, commit: gone, listLedger: gone, endSessions: gone, incrementCounter: gone, deleteCounter: gone, watchScenes: () => () => undefined }
}

/** The guard as a Hono middleware. */
function guarded(guard: FetchGuard): MiddlewareHandler<Env> {
  return async (c, next) => {
    const verified = await guard(c.req.raw)
    return verified instanceof Response ? verified : (c.set('scanauth', verified), next())
  }
}

describeRouteGuards(
  'fetch (Hono)',
  (auth, { onError, basePath }) => {
    const app = new Hono<Env>()
    app.get('/api/me', guarded(requireSessionFetch({ auth, onError, basePath })), (c) => c.json({ route: 'me', scanauth: c.get('scanauth') }))
    app.get('/api/paid', guarded(requireAuthorizationFetch({ auth, onError, basePath })), (c) => c.json({ route: 'paid', scanauth: c.get('scanauth') }))
    app.post('/api/spend', guarded(requireAuthorizationFetch({ auth, onError, basePath, points: 2 })), (c) => c.json({ route: 'spend', scanauth: c.get('scanauth') }))
    app.post('/api/spend-again', guarded(requireAuthorizationFetch({ auth, onError, basePath, points: 2 })), (c) => c.json({ route: 'spend-again', scanauth: c.get('scanauth') }))
    app.post('/api/spend-more', guarded(requireAuthorizationFetch({ auth, onError, basePath, points: 3 })), (c) => c.json({ route: 'spend-more', scanauth: c.get('scanauth') }))
    app.post('/api/spend-replayable', guarded(requireAuthorizationFetch({ auth, onError, basePath, points: 2, replays: 'pass' })), (c) =>
      c.json({ route: 'spend-replayable', scanauth: c.get('scanauth') }),
    )
    return serveApp(app)
  },
  { failingStore },
)

describe('Fetch route guards without a framework', () => {
  it('answer a Request with the verified session or a Response', async () => {
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
    const reported: Array<[unknown, Request]> = []
    const guard = requireSessionFetch({ auth, onError: (error, request) => reported.push([error, request]) })
    const refused = await guard(new Request('http://app.test/api'))
    expect(refused).toBeInstanceOf(Response)
    expect((refused as Response).status).toBe(401)
    expect(await (refused as Response).json()).toEqual({ error: 'unauthorized', detail: expect.any(String) })
    const { sceneStr } = await auth.createScene({ deviceId: 'd' })
    await auth.handleScan({ sceneStr, openid: 'o' })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error('not authorized')
    const verified = await guard(new Request('http://app.test/api', { headers: { authorization: `Bearer ${status.sessionToken}` } }))
    expect(verified).toMatchObject({ token: status.sessionToken, userId: 1, deviceId: 'd' })
    expect(reported).toEqual([])
  })
})
