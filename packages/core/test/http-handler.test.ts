import { beforeEach, describe, expect, it } from 'vitest'
import { createHttpHandler, createScanAuth, ERROR_STATUS, MemoryStore, type HttpHandler } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'

let clock: ManualClock
let qr: RecordingQrProvider
let handle: HttpHandler
let auth: ReturnType<typeof createScanAuth>

beforeEach(() => {
  clock = new ManualClock()
  qr = new RecordingQrProvider()
  auth = createScanAuth({ store: new MemoryStore(), qr, now: clock.now })
  handle = createHttpHandler(auth, { basePath: '/auth' })
})

async function createScene(body: unknown = JSON.stringify({ device_id: 'tv-1' })) {
  return handle({ method: 'POST', path: '/auth/create_scene', headers: { 'content-type': 'application/json' }, body })
}

async function authorizedToken() {
  const created = (await createScene())?.body as { scene_str: string }
  await auth.handleScan({ sceneStr: created.scene_str, openid: 'alice' })
  const status = (await handle({ method: 'GET', path: '/auth/status', query: { scene: created.scene_str } }))?.body as { session_token: string }
  return { scene: created.scene_str, token: status.session_token }
}

describe('POST create_scene', () => {
  it('answers the documented body: scene_str, qr_url, expires_in', async () => {
    const res = await createScene()
    expect(res?.status).toBe(200)
    expect(res?.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
    const body = res?.body as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['expires_in', 'qr_url', 'scene_str'])
    expect(body.scene_str).toMatch(/^pc_[0-9a-f]{32}$/)
    expect(body.qr_url).toBe(`https://qr.example.test/${body.scene_str}`)
    expect(body.expires_in).toBe(300)
  })

  it('adds qr_content when the QR provider gives the code’s text, and auth.createScene answers it as qrContent', async () => {
    qr.content = (request) => `https://w.example.test/q/${request.sceneStr}`
    const body = (await createScene())?.body as Record<string, unknown>
    expect(body).toEqual({ scene_str: body.scene_str, qr_url: `https://qr.example.test/${body.scene_str}`, qr_content: `https://w.example.test/q/${body.scene_str}`, expires_in: 300 })
    const created = await auth.createScene({ deviceId: 'tv-2' })
    expect(created).toEqual({ sceneStr: created.sceneStr, qrUrl: `https://qr.example.test/${created.sceneStr}`, qrContent: `https://w.example.test/q/${created.sceneStr}`, expiresIn: 300 })
  })

  it('leaves qr_content out when the QR provider gives none, an empty one or one that is not text', async () => {
    for (const content of [() => '', () => 42 as unknown as string]) {
      qr.content = content
      const body = (await createScene())?.body as Record<string, unknown>
      expect(Object.keys(body).sort()).toEqual(['expires_in', 'qr_url', 'scene_str'])
      expect(Object.keys(await auth.createScene({ deviceId: 'tv-2' })).sort()).toEqual(['expiresIn', 'qrUrl', 'sceneStr'])
    }
  })

  it('accepts a body a parser already turned into an object, and a Buffer', async () => {
    expect((await createScene({ device_id: 'tv-1' }))?.status).toBe(200)
    expect((await createScene(Buffer.from('{"device_id":"tv-2"}')))?.status).toBe(200)
  })

  it.each([
    ['invalid JSON', '{"device_id":', 'Request body is not valid JSON'],
    ['a JSON array', '[1]', 'Request body must be a JSON object'],
    ['no device_id', '{}', 'device_id is required'],
    ['an empty body', '', 'device_id is required'],
    ['an empty device_id', '{"device_id":""}', 'device_id must not be empty'],
    ['a non-string device_id', '{"device_id":42}', 'device_id must be a string'],
    ['an over-long device_id', JSON.stringify({ device_id: 'x'.repeat(129) }), 'device_id must be at most 128 characters'],
    ['a control character', JSON.stringify({ device_id: 'a\nb' }), 'device_id must not contain control characters'],
  ])('answers 400 {detail} for %s, and stores nothing', async (_what, body, detail) => {
    const res = await createScene(body)
    expect(res).toMatchObject({ status: 400, body: { detail } })
    expect(qr.requests).toHaveLength(0)
  })

  it('answers 400 for a body over the size limit', async () => {
    const res = await createScene(JSON.stringify({ device_id: 'x', pad: 'y'.repeat(20_000) }))
    expect(res).toMatchObject({ status: 400, body: { detail: 'Request body is too large' } })
  })

  it("answers 502 in its own words when the platform fails; the platform's text goes to onError only (B-wire-5)", async () => {
    qr.failWith = 'errcode=40164 errmsg=invalid ip 198.51.100.4, not in whitelist'
    const res = await createScene()
    expect(res).toEqual({
      status: 502,
      headers: expect.any(Object),
      body: { detail: 'QR code creation failed: the messaging platform refused the request or could not be reached. Try again in a moment.' },
    })
    const reported: unknown[] = []
    const reporting = createHttpHandler(auth, { onError: (error) => void reported.push(error) })
    await reporting({ method: 'POST', path: '/auth/create_scene', headers: { 'content-type': 'application/json' }, body: '{"device_id":"tv"}' })
    expect(reported).toEqual([expect.objectContaining({ code: 'qr_creation_failed', message: 'QR code creation failed: errcode=40164 errmsg=invalid ip 198.51.100.4, not in whitelist' })])
  })
})

describe('GET status', () => {
  it('answers {status: pending} and nothing else', async () => {
    const scene = ((await createScene())?.body as { scene_str: string }).scene_str
    expect(await handle({ method: 'GET', path: '/auth/status', query: { scene } })).toMatchObject({ status: 200, body: { status: 'pending' } })
    expect((await handle({ method: 'GET', path: `/auth/status?scene=${scene}` }))?.body).toEqual({ status: 'pending' })
    expect((await handle({ method: 'GET', path: '/auth/status', query: new URLSearchParams({ scene }) }))?.body).toEqual({ status: 'pending' })
  })

  it('answers the authorized body in snake_case', async () => {
    const { scene } = await authorizedToken()
    const res = await handle({ method: 'GET', path: '/auth/status', query: { scene } })
    expect(res?.body).toEqual({
      status: 'authorized',
      session_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      authorization: { type: 'time', end_at: new Date(clock.now() + 7 * 86_400_000).toISOString(), remaining_points: 0 },
    })
  })

  it('answers 404 {detail} for an unknown scene and 400 when scene is missing', async () => {
    expect(await handle({ method: 'GET', path: '/auth/status', query: { scene: `pc_${'0'.repeat(32)}` } })).toMatchObject({ status: 404, body: { detail: 'Scene does not exist' } })
    expect(await handle({ method: 'GET', path: '/auth/status', query: {} })).toMatchObject({ status: 400, body: { detail: 'scene is required' } })
    expect(await handle({ method: 'GET', path: '/auth/status', query: { scene: ['', 'x'] } })).toMatchObject({ status: 400 })
  })
})

describe('GET session and POST consume', () => {
  it('verifies the Bearer token', async () => {
    const { token } = await authorizedToken()
    const res = await handle({ method: 'GET', path: '/auth/session', headers: { Authorization: `Bearer ${token}` } })
    expect(res?.status).toBe(200)
    expect(res?.body).toEqual({
      user_id: 1,
      device_id: 'tv-1',
      expires_at: new Date(clock.now() + 168 * 3_600_000).toISOString(),
      authorization: { type: 'time', end_at: new Date(clock.now() + 7 * 86_400_000).toISOString(), remaining_points: 0 },
    })
  })

  it('answers 401 with WWW-Authenticate without a token or with an unknown one', async () => {
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer nope' }]) {
      const res = await handle({ method: 'GET', path: '/auth/session', headers })
      expect(res).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' }, body: { detail: expect.any(String) } })
    }
    expect(await handle({ method: 'POST', path: '/auth/consume', headers: { authorization: 'Bearer nope' }, body: '{}' })).toMatchObject({ status: 401 })
  })

  it('POST logout ends the presented session: 204 without a body, then 401 for it', async () => {
    const { token } = await authorizedToken()
    const headers = { authorization: `Bearer ${token}` }
    const out = await handle({ method: 'POST', path: '/auth/logout', headers })
    expect(out).toEqual({ status: 204, headers: { 'cache-control': 'no-store' } })
    expect(await handle({ method: 'GET', path: '/auth/session', headers })).toMatchObject({ status: 401 })
    expect(await handle({ method: 'POST', path: '/auth/logout', headers })).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } })
    expect(await handle({ method: 'POST', path: '/auth/logout' })).toMatchObject({ status: 401 })
    expect(await handle({ method: 'GET', path: '/auth/logout', headers })).toMatchObject({ status: 405, headers: { allow: 'POST' } })
  })

  it('consumes points and reports need_purchase and insufficient_points', async () => {
    const { token } = await authorizedToken()
    const headers = { authorization: `Bearer ${token}` }
    clock.advance(7 * 86_400_000 - 1)
    await auth.grant({ userId: 1, type: 'points', points: 2 })
    const timeUse = await handle({ method: 'POST', path: '/auth/consume', headers, body: '' })
    expect(timeUse?.body).toEqual({ status: 'ok', authorization: { type: 'time', end_at: expect.any(String), remaining_points: 0 } })
    expect((await handle({ method: 'POST', path: '/auth/consume', headers, body: '{"points":0}' }))?.status).toBe(400)
    expect((await handle({ method: 'POST', path: '/auth/consume', headers, body: '{"points":"2"}' }))?.status).toBe(400)
  })
})

describe('the purchaseUrl option', () => {
  const PURCHASE_URL = 'https://shop.example.test/buy?item=30d'

  it('adds purchase_url to the need_purchase answers of status and consume, and to nothing else', async () => {
    const withUrl = createHttpHandler(auth, { basePath: '/auth', purchaseUrl: PURCHASE_URL })
    const created = (await createScene())?.body as { scene_str: string }
    const scene = created.scene_str
    expect((await withUrl({ method: 'GET', path: '/auth/status', query: { scene } }))?.body).toEqual({ status: 'pending' })
    await auth.handleScan({ sceneStr: scene, openid: 'alice' })
    const authorized = (await withUrl({ method: 'GET', path: '/auth/status', query: { scene } }))?.body as Record<string, unknown>
    expect(Object.keys(authorized).sort()).toEqual(['authorization', 'session_token', 'status'])
    const headers = { authorization: `Bearer ${authorized.session_token as string}` }

    // The free trial is withdrawn: nothing is current, the session lives on.
    const trial = (await auth.getUser({ openid: 'alice' }))?.current
    await auth.revokeAuthorization({ authorizationId: trial?.id as number })
    expect(await withUrl({ method: 'GET', path: '/auth/status', query: { scene } })).toMatchObject({
      status: 200,
      body: { status: 'need_purchase', purchase_url: PURCHASE_URL },
    })
    expect((await withUrl({ method: 'POST', path: '/auth/consume', headers, body: '' }))?.body).toEqual({ status: 'need_purchase', purchase_url: PURCHASE_URL })
    // Without the option the bodies are exactly the documented ones.
    expect((await handle({ method: 'GET', path: '/auth/status', query: { scene } }))?.body).toEqual({ status: 'need_purchase' })
    expect((await handle({ method: 'POST', path: '/auth/consume', headers, body: '' }))?.body).toEqual({ status: 'need_purchase' })

    // insufficient_points and expired answers stay as they are.
    await auth.grant({ openid: 'alice', type: 'points', points: 1 })
    expect((await withUrl({ method: 'POST', path: '/auth/consume', headers, body: '{"points":2}' }))?.body).toEqual({ status: 'insufficient_points' })
    const other = ((await createScene())?.body as { scene_str: string }).scene_str
    clock.advance(300_000)
    expect((await withUrl({ method: 'GET', path: '/auth/status', query: { scene: other } }))?.body).toEqual({ status: 'expired' })
  })

  it('refuses anything but a non-empty string when the handler is created', () => {
    for (const purchaseUrl of ['', '  ', 42, null]) {
      expect(() => createHttpHandler(auth, { purchaseUrl: purchaseUrl as string })).toThrow(
        expect.objectContaining({ code: 'invalid_options', message: 'createHttpHandler: purchaseUrl must be a non-empty string' }),
      )
    }
    expect(createHttpHandler(auth, { purchaseUrl: '/shop' }).owns('/auth/status')).toBe(true)
  })
})

describe('routing', () => {
  it('returns undefined for paths that are not ours', async () => {
    for (const path of ['/', '/auth', '/auth/', '/auth/other', '/authx/status', '/other/status', '/auth/status/extra', '/auth/__proto__', '/auth/toString']) {
      expect(await handle({ method: 'GET', path })).toBeUndefined()
    }
  })

  it('answers 405 with Allow for a wrong method on our paths', async () => {
    expect(await handle({ method: 'GET', path: '/auth/create_scene' })).toEqual({
      status: ERROR_STATUS.method_not_allowed,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', allow: 'POST' },
      body: { detail: 'Method GET is not allowed; use POST' },
    })
    expect(await handle({ method: 'DELETE', path: '/auth/status' })).toMatchObject({ status: 405, headers: { allow: 'GET' } })
    expect(await handle({ method: 'POST', path: '/auth/session' })).toMatchObject({ status: 405 })
    expect(await handle({ method: 'GET', path: '/auth/consume' })).toMatchObject({ status: 405 })
  })

  it('answers HEAD like GET on GET routes', async () => {
    expect(await handle({ method: 'HEAD', path: '/auth/status', query: {} })).toMatchObject({ status: 400 })
    expect(await handle({ method: 'HEAD', path: '/auth/create_scene' })).toMatchObject({ status: 405 })
  })

  it('serves at another base path, or at the root', async () => {
    const atRoot = createHttpHandler(auth, { basePath: '' })
    expect((await atRoot({ method: 'POST', path: '/create_scene', body: { device_id: 'x' } }))?.status).toBe(200)
    const nested = createHttpHandler(auth, { basePath: 'api/v1/auth/' })
    expect((await nested({ method: 'POST', path: '/api/v1/auth/create_scene', body: { device_id: 'x' } }))?.status).toBe(200)
    expect(await nested({ method: 'POST', path: '/auth/create_scene', body: { device_id: 'x' } })).toBeUndefined()
  })

  it('hides unexpected errors behind a 500 {detail} and reports them to onError', async () => {
    const broken = createScanAuth({
      store: {
        load: () => Promise.reject(new Error('disk on fire')),
        commit: () => Promise.reject(new Error('disk on fire')),
        listLedger: () => Promise.reject(new Error('disk on fire')),
        endSessions: () => Promise.reject(new Error('disk on fire')),
        watchScenes: () => () => {},
        incrementCounter: () => Promise.reject(new Error('disk on fire')),
        deleteCounter: () => Promise.reject(new Error('disk on fire')),
      },
      qr,
      now: clock.now,
    })
    const reported: unknown[] = []
    const res = await createHttpHandler(broken, { onError: (e) => reported.push(e) })({ method: 'GET', path: '/auth/status', query: { scene: `pc_${'1'.repeat(32)}` } })
    expect(res).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
    expect(reported).toEqual([new Error('disk on fire')])
  })

  it('owns() tells whether a path is one of its routes, for any method', () => {
    expect(handle.owns('/auth/status')).toBe(true)
    expect(handle.owns('/auth/create_scene?x=1')).toBe(true)
    expect(handle.owns('/auth/constructor')).toBe(false)
    expect(handle.owns('/auth/elsewhere')).toBe(false)
    expect(handle.owns('/status')).toBe(false)
  })
})
