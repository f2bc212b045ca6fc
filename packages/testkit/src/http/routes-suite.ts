/**
 * `describeHttpRoutes`: the scanauth routes as a framework adapter serves them, one suite for every
 * adapter (Express, Koa, a Fetch handler on Hono, ...). It only talks HTTP to the URL the host gives
 * it, so it knows no framework. The rules behind each answer are in `docs/behaviour.md`.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth, type Store } from '@scanauth/core'
import { RecordingQrProvider } from '../qr'
import { fetchJson, postJson } from './fetch-json'
import { createPendingScene, pollAuthorized, useSession } from './flow'
import { describeConfirmRoutes } from './confirm-suite'
import { describePhoneRoutes } from './phone-suite'
import { describeSubscribeRoutes } from './subscribe-suite'
import { describePurchaseRuleRoutes } from './purchase-rules-suite'
import { describePurchaseRoutes } from './purchase-suite'
import { describeWaitingRoutes } from './waiting-suite'
import type { HttpHostOptions, HttpRoutesHost } from './host'

/** What the suite needs besides the host. */
export interface HttpRoutesSuiteOptions {
  /**
   * A real store that rejects every call, e.g. a `SqliteStore` whose database has been closed: the
   * suite checks that such a failure is answered 500 and reported to `onError`.
   */
  failingStore(): Promise<Store>
}

/** A service on a fresh MemoryStore and a QR provider that answers `https://qr.example.test/<scene>`. */
function memoryAuth(): ScanAuth {
  return createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
}

/**
 * Registers the route suite for one framework adapter: the whole flow (create, scan, poll, session,
 * consume), `HEAD`, the 400/401/404/405/500/502 answers with `{detail}`, falling through to the
 * app's own routes inside and outside `/auth`, and the long poll and event stream (a wait woken by a
 * scan, heartbeats, nothing left behind by a client that leaves). Real sockets; core only
 * (MemoryStore). Test what is the framework's own (its body parsers, mounting) next to it, in the
 * adapter's tests.
 *
 * @param framework - Its name, for the test titles.
 * @param host - Serves an app with the scanauth routes at `/auth`.
 * @param options - A store that fails, for the 500 test.
 *
 * @example
 * ```ts
 * const serve = serverPerTest()
 * describeHttpRoutes('express', (auth, { bodyParser = true, onError, heartbeatMs }) => {
 *   const app = express()
 *   if (bodyParser) app.use(express.json())
 *   app.use('/auth', scanAuthRouter(auth, { onError, heartbeatMs }))
 *   app.post('/auth/login', (req, res) => void res.json({ own: 'login', got: req.body ?? null }))
 *   app.get('/auth/profile', (_req, res) => void res.json({ own: 'profile' }))
 *   app.get('/health', (_req, res) => void res.type('text').send('ok'))
 *   return serve(app)
 * }, { failingStore: closedSqliteStore })
 * ```
 */
export function describeHttpRoutes(framework: string, host: HttpRoutesHost, options: HttpRoutesSuiteOptions): void {
  const serveHost = (auth: ScanAuth, hostOptions: HttpHostOptions = {}) => host(auth, hostOptions)

  describe(`the ${framework} adapter's routes`, () => {
    it('runs the whole flow: create, scan, poll, session, consume', async () => {
      const auth = memoryAuth()
      const url = await serveHost(auth)

      const created = await createPendingScene(url, 'device-1')
      // Without a content from the QR provider, exactly the three fields (no qr_content).
      expect(created).toEqual({ scene_str: expect.stringMatching(/^pc_[0-9a-f]{32}$/), qr_url: expect.any(String), expires_in: 300 })
      const scene = created.scene_str as string
      expect(created.qr_url).toBe(`https://qr.example.test/${scene}`)

      expect(await auth.handleScan({ sceneStr: scene, openid: 'openid-1' })).toMatchObject({ result: 'authorized' })
      const { bearer } = await pollAuthorized(url, scene)
      expect(await useSession(url, bearer, 'device-1')).toMatchObject({ user_id: 1 })
    })

    it('create_scene adds qr_content only when the QR provider gives the code’s text', async () => {
      const qr = new RecordingQrProvider()
      qr.content = (request) => `https://w.example.test/q/${request.sceneStr}`
      const url = await serveHost(createScanAuth({ store: new MemoryStore(), qr }))
      const created = await createPendingScene(url, 'device-1')
      const scene = created.scene_str as string
      expect(created).toEqual({ scene_str: scene, qr_url: `https://qr.example.test/${scene}`, qr_content: `https://w.example.test/q/${scene}`, expires_in: 300 })
      // An empty content is no content: the body keeps its three fields.
      qr.content = () => ''
      expect(Object.keys(await createPendingScene(url, 'device-2')).sort()).toEqual(['expires_in', 'qr_url', 'scene_str'])
    })

    it('signs a device out: POST logout answers 204 without a body, then the token is refused', async () => {
      const auth = memoryAuth()
      const url = await serveHost(auth)
      const created = await createPendingScene(url, 'device-1')
      await auth.handleScan({ sceneStr: created.scene_str as string, openid: 'openid-1' })
      const { bearer } = await pollAuthorized(url, created.scene_str as string)
      const out = await fetch(`${url}/auth/logout`, { method: 'POST', headers: bearer })
      expect(out.status).toBe(204)
      expect(await out.text()).toBe('')
      const session = await fetch(`${url}/auth/session`, { headers: bearer })
      expect(session.status).toBe(401)
      await session.body?.cancel()
      const again = await fetch(`${url}/auth/logout`, { method: 'POST', headers: bearer })
      expect(again.status).toBe(401)
      expect(again.headers.get('www-authenticate')).toBe('Bearer')
      // logout is ours, not the specification's: its refusal names its code (B-wire-7).
      expect(await again.json()).toEqual({ error: 'unauthorized', detail: expect.any(String) })
      const status = await fetch(`${url}/auth/status?scene=${created.scene_str as string}`)
      expect(await status.json()).toEqual({ status: 'expired' })
    })

    it('answers HEAD on a GET route like GET, without the body', async () => {
      const auth = memoryAuth()
      const url = await serveHost(auth)
      const { sceneStr } = await auth.createScene({ deviceId: 'd' })
      const get = await fetch(`${url}/auth/status?scene=${sceneStr}`)
      const getBody = await get.text()
      expect(JSON.parse(getBody)).toEqual({ status: 'pending' })

      const head = await fetch(`${url}/auth/status?scene=${sceneStr}`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)))
      expect(await head.text()).toBe('')
    })

    it('answers 405 without a body to HEAD on a POST-only route', async () => {
      const url = await serveHost(memoryAuth())
      const head = await fetch(`${url}/auth/create_scene`, { method: 'HEAD' })
      expect(head.status).toBe(405)
      expect(head.headers.get('allow')).toBe('POST')
      expect(await head.text()).toBe('')
    })

    it('answers 400 with {detail} for malformed input', async () => {
      const url = await serveHost(memoryAuth(), { bodyParser: false })
      const bad = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id":' })
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual({ detail: expect.stringMatching(/JSON/) })
      expect((await postJson(`${url}/auth/create_scene`, {})).status).toBe(400)
      expect((await postJson(`${url}/auth/create_scene`, { device_id: 'x'.repeat(129) })).status).toBe(400)
      expect((await postJson(`${url}/auth/create_scene`, { device_id: 'y'.repeat(20_000) })).body).toEqual({ detail: expect.stringMatching(/too large/) })
      const missing = await fetchJson(`${url}/auth/status`)
      expect(missing.status).toBe(400)
      expect(missing.body.detail).toEqual(expect.any(String))
    })

    it('answers 404 for an unknown scene, 405 for a wrong method, 401 without a valid session', async () => {
      const url = await serveHost(memoryAuth())
      const unknown = await fetchJson(`${url}/auth/status?scene=pc_${'0'.repeat(32)}`)
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual({ detail: expect.any(String) })

      const wrong = await fetchJson(`${url}/auth/create_scene`)
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get('allow')).toBe('POST')
      expect((await postJson(`${url}/auth/status`, {})).status).toBe(405)

      const noToken = await fetchJson(`${url}/auth/session`)
      expect(noToken.status).toBe(401)
      expect(noToken.headers.get('www-authenticate')).toBe('Bearer')
      expect((await fetchJson(`${url}/auth/session`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
    })

    it("answers 502 in its own words when the platform cannot create the code, reports the platform's text to onError only, and stores nothing", async () => {
      const store = new MemoryStore()
      const qr = new RecordingQrProvider()
      // What WeChat answers a server whose address is not on the account's allow list (40164).
      qr.failWith = 'errcode 40164: invalid ip 203.0.113.7 ipv6 ::ffff:203.0.113.7, not in whitelist rid: 6565'
      const reported: unknown[] = []
      const url = await serveHost(createScanAuth({ store, qr }), { onError: (e) => reported.push(e) })
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res.status).toBe(502)
      expect(res.body).toEqual({ detail: expect.stringMatching(/^QR code creation failed: the messaging platform refused/) })
      expect(JSON.stringify(res.body)).not.toMatch(/203\.0\.113|whitelist|40164|rid/)
      expect(reported).toHaveLength(1)
      expect(reported[0]).toMatchObject({ code: 'qr_creation_failed', message: expect.stringContaining('203.0.113.7') })
      expect(store.snapshot().scenes).toEqual([])
    })

    it('answers 415 to a JSON route whose body is not sent as application/json, with or without a body parser, and changes nothing (B-wire-6)', async () => {
      for (const bodyParser of [true, false]) {
        const store = new MemoryStore()
        const qr = new RecordingQrProvider()
        const auth = createScanAuth({ store, qr, rateLimits: false })
        const url = await serveHost(auth, { bodyParser })
        const json = JSON.stringify({ device_id: 'cross-site' })
        // What a page of another site can make a browser send without a CORS preflight.
        const simple: Array<Record<string, string>> = [
          { 'content-type': 'text/plain;charset=UTF-8' },
          { 'content-type': 'application/x-www-form-urlencoded' },
          { 'content-type': 'multipart/form-data; boundary=x' },
          {},
        ]
        for (const headers of simple) {
          const body = headers['content-type']?.startsWith('application/x-www') ? 'device_id=cross-site' : json
          // A Blob without a type is how fetch sends a body with no content type at all.
          const res = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers, body: 'content-type' in headers ? body : new Blob([body]) })
          expect(res.status, JSON.stringify(headers)).toBe(415)
          expect(res.body).toEqual({ detail: expect.any(String) })
          expect(res.headers.get('cache-control')).toBe('no-store')
        }
        expect(qr.requests).toEqual([])
        expect(store.snapshot().scenes).toEqual([])
        // consume checks the session first (401 without one); with one, its body like the others.
        const scene = (await createPendingScene(url, 'device-1')).scene_str as string
        await auth.handleScan({ sceneStr: scene, openid: 'openid-1' })
        const { bearer } = await pollAuthorized(url, scene)
        const spent = await fetchJson(`${url}/auth/consume`, { method: 'POST', headers: { ...bearer, 'content-type': 'text/plain' }, body: '{"points":1}' })
        expect(spent.status).toBe(415)
        expect((await auth.listLedger({ openid: 'openid-1' })).entries.filter((e) => e.kind === 'consume')).toEqual([])
        // JSON with parameters, and a JSON subtype, are JSON.
        for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json']) {
          const res = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': type }, body: json })
          expect(res.status, type).toBe(200)
        }
      }
    })

    it('answers 500 {detail} for a store failure and reports the error to onError', async () => {
      const store = await options.failingStore()
      // The error this store fails with, to recognise it in what onError receives.
      const failure: unknown = await store.load({ sceneStr: `pc_${'1'.repeat(32)}` }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(failure, 'failingStore() must give a store that rejects every call').toBeInstanceOf(Error)
      const reported: unknown[] = []
      const url = await serveHost(createScanAuth({ store, qr: new RecordingQrProvider() }), { onError: (e) => reported.push(e) })
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
      expect(reported).toHaveLength(1)
      expect(String(reported[0])).toBe(String(failure))
    })

    it("falls through to the app's own routes, inside and outside the prefix", async () => {
      const url = await serveHost(memoryAuth())
      expect((await postJson(`${url}/auth/login`, { user: 'ann' })).body).toEqual({ own: 'login', got: { user: 'ann' } })
      expect((await fetchJson(`${url}/auth/profile`)).body).toEqual({ own: 'profile' })
      expect((await fetchJson(`${url}/health`)).body).toBe('ok')
      expect((await fetchJson(`${url}/auth/nothing-here`)).status).toBe(404)
    })
  })

  describeWaitingRoutes(framework, host)
  describePurchaseRoutes(framework, host)
  describePurchaseRuleRoutes(framework, host)
  describeConfirmRoutes(framework, host)
  describePhoneRoutes(framework, host)
  describeSubscribeRoutes(framework, host)
}
