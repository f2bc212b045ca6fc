/**
 * `describeRouteGuards`: the route guards (`requireSession`, `requireAuthorization`) as a framework
 * adapter serves them in front of an app's own routes, one suite for every adapter (Express, Koa,
 * the Fetch guards on Hono). It only talks HTTP to the URL the host gives it. The rules are
 * docs/behaviour.md B-guard-1…6.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth, type ScanAuthOptions, type Store } from '@scanauth/core'
import { ManualClock } from '../clock'
import { RecordingQrProvider } from '../qr'
import { fetchJson, type JsonAnswer } from './fetch-json'

/** What the suite passes to a host, for every guard it mounts. */
export interface GuardHostOptions {
  /** Pass it to every guard's `onError` option. */
  onError?: (error: unknown) => void
  /** Pass it to every guard's `basePath` option when set. */
  basePath?: string
}

/**
 * Serves, until the test ends, an app with three routes of its own behind the adapter's guards, each
 * given `{ auth, onError, basePath }`, and each answering 200 `{ route, scanauth }` with what the
 * guard placed on the request (`req.scanauth`, `ctx.state.scanauth`, the Fetch guard's value):
 * `GET /api/me` behind `requireSession`, `GET /api/paid` behind `requireAuthorization()` and
 * `POST /api/spend` behind `requireAuthorization({ points: 2 })`, `POST /api/spend-again` behind the
 * same (another route of the same price), `POST /api/spend-more` behind `requireAuthorization({ points: 3 })`
 * and `POST /api/spend-replayable` behind `requireAuthorization({ points: 2, replays: 'pass' })`
 * (`route` is the path's last segment: `me`, `paid`, `spend`, `spend-again`, …).
 * Resolves with the base URL (no trailing slash).
 */
export type GuardHost = (auth: ScanAuth, options: GuardHostOptions) => Promise<string>

/** What the suite needs besides the host. */
export interface RouteGuardSuiteOptions {
  /** A real store that rejects every call (a closed database): a failure is answered 500 and reported. */
  failingStore(): Promise<Store>
}

const DAY = 86_400_000

/** A service on a fresh MemoryStore and a manual clock, with a one-day free trial. */
function world(options: Partial<ScanAuthOptions> = {}) {
  const clock = new ManualClock()
  const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), now: clock.now, freeTrialDays: 1, ...options })
  /** A device signed in by a scan of `openid`: its session token. */
  const signIn = async (openid = 'alice', deviceId = 'tv') => {
    const { sceneStr } = await auth.createScene({ deviceId })
    await auth.handleScan({ sceneStr, openid })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error(`a sign-in of ${openid} answered ${status.status}`)
    return status.sessionToken
  }
  /** The trial over (its day has passed), the session still live (it lives 7 days). */
  const endTrial = () => clock.advance(DAY + 1)
  return { clock, auth, signIn, endTrial }
}

const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra })

function get(url: string, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return fetchJson(url, { headers })
}

function post(url: string, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return fetchJson(url, { method: 'POST', headers })
}

/** The 401 of B-guard-1: `{error: 'unauthorized', detail}`, `WWW-Authenticate: Bearer`, JSON never cached, the route not run. */
function expectUnauthorized(answer: JsonAnswer): void {
  expect(answer.status).toBe(401)
  expect(answer.headers.get('www-authenticate')).toBe('Bearer')
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  expect(answer.headers.get('cache-control')).toBe('no-store')
  expect(answer.body).toEqual({ error: 'unauthorized', detail: expect.any(String) })
}

/** The 402 of B-guard-3/4. */
function expectPurchase(answer: JsonAnswer, status: 'need_purchase' | 'insufficient_points', plansUrl = '/auth/plans'): void {
  expect(answer.status).toBe(402)
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  expect(answer.body).toEqual({ status, plans_url: plansUrl, error: status, detail: expect.any(String) })
}

/** The 409 of B-guard-5: a replayed key, the route not run. */
function expectReplay(answer: JsonAnswer): void {
  expect(answer.status).toBe(409)
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  expect(answer.headers.get('cache-control')).toBe('no-store')
  expect(answer.body).toEqual({ error: 'idempotency_replay', detail: expect.any(String) })
}

/**
 * Registers the guard suite for one framework adapter: 401 with `WWW-Authenticate: Bearer` for a
 * missing, malformed, unknown, revoked or expired session; the verified session on the request; the
 * 402 `need_purchase` answer with the plans route; points spent once per request, never below zero,
 * never overspent by concurrent requests; a replayed `Idempotency-Key` refused 409 (or let through
 * marked `replayed` with `replays: 'pass'`), bound to its route and price; and a store failure
 * answered 500 and reported to `onError`. Real sockets; core only (MemoryStore, a manual clock).
 *
 * @param framework - Its name, for the test titles.
 * @param host - Serves the three guarded routes.
 * @param options - A store that fails, for the 500 test.
 *
 * @example
 * ```ts
 * describeRouteGuards('express', (auth, { onError, basePath }) => {
 *   const app = express()
 *   const reply = (route: string): express.RequestHandler => (req, res) => void res.json({ route, scanauth: req.scanauth })
 *   app.get('/api/me', requireSession({ auth, onError, basePath }), reply('me'))
 *   app.get('/api/paid', requireAuthorization({ auth, onError, basePath }), reply('paid'))
 *   app.post('/api/spend', requireAuthorization({ auth, onError, basePath, points: 2 }), reply('spend'))
 *   app.post('/api/spend-again', requireAuthorization({ auth, onError, basePath, points: 2 }), reply('spend-again'))
 *   app.post('/api/spend-more', requireAuthorization({ auth, onError, basePath, points: 3 }), reply('spend-more'))
 *   app.post('/api/spend-replayable', requireAuthorization({ auth, onError, basePath, points: 2, replays: 'pass' }), reply('spend-replayable'))
 *   return serve(app)
 * }, { failingStore })
 * ```
 */
export function describeRouteGuards(framework: string, host: GuardHost, options: RouteGuardSuiteOptions): void {
  const serve = (auth: ScanAuth, hostOptions: GuardHostOptions = {}) => host(auth, hostOptions)

  describe(`the ${framework} adapter's route guards`, () => {
    it('answer 401 with WWW-Authenticate: Bearer for a missing, malformed, unknown, revoked or expired session (B-guard-1)', async () => {
      const { auth, clock, signIn } = world({ freeTrialDays: 30 })
      const url = await serve(auth)
      const token = await signIn()
      const revoked = await signIn('bob')
      await auth.revokeSession(revoked)
      for (const path of ['/api/me', '/api/paid']) {
        expectUnauthorized(await get(`${url}${path}`))
        expectUnauthorized(await get(`${url}${path}`, { authorization: `Basic ${token}` }))
        expectUnauthorized(await get(`${url}${path}`, { authorization: 'Bearer' }))
        expectUnauthorized(await get(`${url}${path}`, bearer('not-a-session')))
        expectUnauthorized(await get(`${url}${path}`, bearer(revoked)))
      }
      expectUnauthorized(await post(`${url}/api/spend`, bearer(revoked)))
      expect((await get(`${url}/api/me`, bearer(token))).status).toBe(200)
      // Sessions live 168 hours (B-session-2): at the deadline it is over (B-expiry-1).
      clock.advance(168 * 3_600_000)
      expectUnauthorized(await get(`${url}/api/me`, bearer(token)))
      expectUnauthorized(await post(`${url}/api/spend`, bearer(token)))
    })

    it('put the verified session on the request: the session of verifySession and its token (B-guard-2)', async () => {
      const { auth, signIn } = world()
      const url = await serve(auth)
      const token = await signIn('alice', 'tv-livingroom')
      const verified = await auth.verifySession(token)
      expect(verified).not.toBeNull()
      const me = await get(`${url}/api/me`, { authorization: `bearer  ${token} ` })
      expect(me.status).toBe(200)
      expect(me.body).toEqual({ route: 'me', scanauth: { ...verified, token } })
      expect(me.body.scanauth).toMatchObject({ userId: 1, deviceId: 'tv-livingroom', authorization: { type: 'time', source: 'free' } })
      expect((await get(`${url}/api/paid`, bearer(token))).body).toEqual({ route: 'paid', scanauth: { ...verified, token } })
    })

    it('requireAuthorization answers 402 need_purchase with the plans route when the user has none; requireSession lets through (B-guard-3)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      const url = await serve(auth)
      const me = await get(`${url}/api/me`, bearer(token))
      expect(me.status).toBe(200)
      expect(me.body.scanauth).toMatchObject({ token, userId: 1, authorization: null })
      expectPurchase(await get(`${url}/api/paid`, bearer(token)), 'need_purchase')
      expectPurchase(await post(`${url}/api/spend`, bearer(token)), 'need_purchase')
      // The plans route follows basePath.
      const elsewhere = await serve(auth, { basePath: '/shop/auth/' })
      expectPurchase(await get(`${elsewhere}/api/paid`, bearer(token)), 'need_purchase', '/shop/auth/plans')
    })

    it('requireAuthorization() without points spends nothing', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 5 })
      const url = await serve(auth)
      for (let i = 0; i < 3; i++) {
        const paid = await get(`${url}/api/paid`, bearer(token))
        expect(paid.status).toBe(200)
        expect(paid.body.scanauth.authorization).toMatchObject({ type: 'points', remainingPoints: 5 })
      }
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(5)
    })

    it('spend the points once per request, and answer 402 insufficient_points when too few are left (B-guard-4)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 5 })
      const url = await serve(auth)
      const first = await post(`${url}/api/spend`, bearer(token))
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ route: 'spend', scanauth: { token, userId: 1, authorization: { type: 'points', remainingPoints: 3 } } })
      expect((await post(`${url}/api/spend`, bearer(token))).body.scanauth.authorization.remainingPoints).toBe(1)
      expectPurchase(await post(`${url}/api/spend`, bearer(token)), 'insufficient_points')
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(1)
      // A time authorization is used as it is (B-consume-3).
      await auth.grant({ openid: 'bob', type: 'time', durationSeconds: 3600 })
      const bob = await signIn('bob')
      expect((await post(`${url}/api/spend`, bearer(bob))).body.scanauth.authorization).toMatchObject({ type: 'time' })
    })

    it('spend once per Idempotency-Key of a session, and refuse a replay 409 idempotency_replay without running the route (B-guard-5)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 6 })
      const url = await serve(auth)
      const once = await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'req-1' }))
      expect(once.status).toBe(200)
      expect(once.body.scanauth.authorization.remainingPoints).toBe(4)
      expectReplay(await post(`${url}/api/spend`, bearer(token, { 'Idempotency-Key': 'req-1' })))
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(4)
      // Keys belong to a session: another device of the same user spends with the same key.
      const tablet = await signIn('alice', 'tablet')
      expect((await post(`${url}/api/spend`, bearer(tablet, { 'idempotency-key': 'req-1' }))).body.scanauth.authorization.remainingPoints).toBe(2)
      // The request that spent the last points is not served again by its key.
      const last = await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'req-2' }))
      expect(last.body.scanauth.authorization.remainingPoints).toBe(0)
      expectReplay(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'req-2' })))
      expectPurchase(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'req-3' })), 'need_purchase')
      // A refused request repeated is refused again the same way: nothing ran, nothing to protect.
      expectPurchase(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'req-3' })), 'need_purchase')
      // A key the store cannot take is refused before anything is spent.
      const tooLong = await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'k'.repeat(100) }))
      expect(tooLong.status).toBe(400)
      expect(tooLong.body).toEqual({ error: 'invalid_request', detail: expect.any(String) })
    })

    it('never serve a replay after the points are gone or the authorization was revoked (B-guard-5)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      const bought = await auth.grant({ openid: 'alice', type: 'points', points: 2 })
      const url = await serve(auth)
      expect((await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'paid-once' }))).status).toBe(200)
      // Repeated many times once nothing is left: never the route again.
      for (let i = 0; i < 3; i++) expectReplay(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'paid-once' })))
      // A refund revokes what was bought; the key still buys nothing.
      await auth.grant({ openid: 'alice', type: 'points', points: 4 })
      const before = await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'refunded' }))
      expect(before.status).toBe(200)
      const current = (await auth.getUser({ openid: 'alice' }))?.current
      expect(current?.id).not.toBe(bought.id)
      await auth.revokeAuthorization({ authorizationId: current?.id as number, reason: 'refund' })
      expectReplay(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'refunded' })))
      expectPurchase(await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'after-refund' })), 'need_purchase')
    })

    it('bind a key to its route and price: the same key on another route or with other points is 409 idempotency_conflict (B-guard-5)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 10 })
      const url = await serve(auth)
      expect((await post(`${url}/api/spend`, bearer(token, { 'idempotency-key': 'k1' }))).status).toBe(200)
      for (const path of ['/api/spend-again', '/api/spend-more', '/api/spend?other=query-is-the-same-route']) {
        const reused = await post(`${url}${path}`, bearer(token, { 'idempotency-key': 'k1' }))
        if (path.startsWith('/api/spend?')) {
          expectReplay(reused)
          continue
        }
        expect(reused.status).toBe(409)
        expect(reused.body).toEqual({ error: 'idempotency_conflict', detail: expect.any(String) })
      }
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(8)
    })

    it("let a replay through marked replayed, spending nothing, with replays: 'pass' (B-guard-5)", async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 6 })
      const url = await serve(auth)
      const first = await post(`${url}/api/spend-replayable`, bearer(token, { 'idempotency-key': 'r1' }))
      expect(first.status).toBe(200)
      expect(first.body.scanauth.replayed).toBeUndefined()
      expect(first.body.scanauth.authorization.remainingPoints).toBe(4)
      const again = await post(`${url}/api/spend-replayable`, bearer(token, { 'idempotency-key': 'r1' }))
      expect(again.status).toBe(200)
      expect(again.body).toEqual({ route: 'spend-replayable', scanauth: { ...first.body.scanauth, replayed: true } })
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(4)
    })

    it('never overspend under concurrent requests, with or without a key (B-guard-4, B-conc-2)', async () => {
      const { auth, signIn, endTrial } = world()
      const token = await signIn()
      endTrial()
      await auth.grant({ openid: 'alice', type: 'points', points: 11 })
      const url = await serve(auth)
      const answers = await Promise.all(Array.from({ length: 12 }, () => post(`${url}/api/spend`, bearer(token))))
      expect(answers.filter((a) => a.status === 200)).toHaveLength(5)
      for (const refused of answers.filter((a) => a.status !== 200)) expectPurchase(refused, 'insufficient_points')
      expect((await auth.getUser({ openid: 'alice' }))?.current?.remainingPoints).toBe(1)

      // Points granted before the first scan: the trial waits behind them (B-free-3).
      await auth.grant({ openid: 'carol', type: 'points', points: 10 })
      const carol = await signIn('carol')
      const keyed = await Promise.all(Array.from({ length: 6 }, () => post(`${url}/api/spend`, bearer(carol, { 'idempotency-key': 'same' }))))
      // One request ran the route; the others replayed its key and were refused.
      const served = keyed.filter((a) => a.status === 200)
      expect(served).toHaveLength(1)
      expect(served[0]?.body.scanauth.authorization.remainingPoints).toBe(8)
      for (const refused of keyed.filter((a) => a.status !== 200)) expectReplay(refused)
      expect((await auth.getUser({ openid: 'carol' }))?.current?.remainingPoints).toBe(8)
    })

    it('answer 500 {detail} for a store failure and report it to onError; a missing token costs no read (B-guard-6)', async () => {
      const store = await options.failingStore()
      const reported: unknown[] = []
      const url = await serve(createScanAuth({ store, qr: new RecordingQrProvider() }), { onError: (e) => reported.push(e) })
      for (const [method, path] of [['GET', '/api/me'], ['GET', '/api/paid'], ['POST', '/api/spend']] as const) {
        const failed = await fetchJson(`${url}${path}`, { method, headers: bearer('a-token') })
        expect(failed).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
      }
      expect(reported).toHaveLength(3)
      expect(reported.every((e) => e instanceof Error)).toBe(true)
      expectUnauthorized(await get(`${url}/api/me`))
      expect(reported).toHaveLength(3)
    })
  })
}
