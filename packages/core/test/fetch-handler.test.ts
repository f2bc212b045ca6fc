// createFetchHandler on Hono over real sockets (@hono/node-server on 127.0.0.1): the whole flow, every
// error answer, and the same statuses, headers and bodies as createHttpHandler for the same requests.
import { Hono } from 'hono'
import { beforeEach, describe, expect, it } from 'vitest'
import { createFetchHandler, createHttpHandler, createScanAuth, MemoryStore, type FetchHandlerOptions, type ScanAuth } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { honoServerPerTest } from './fetch-hono'

const serveApp = honoServerPerTest()
const UNKNOWN_SCENE = `pc_${'0'.repeat(32)}`

let clock: ManualClock
let qr: RecordingQrProvider
let auth: ScanAuth

beforeEach(() => {
  clock = new ManualClock()
  qr = new RecordingQrProvider()
  auth = createScanAuth({ store: new MemoryStore(), qr, now: clock.now })
})

/** A Hono app as the brief's users write it: routes of its own, and scanauth's routes under /auth. */
function honoApp(service: ScanAuth, options: FetchHandlerOptions = {}) {
  const handler = createFetchHandler(service, options)
  const app = new Hono()
  app.get('/health', (c) => c.text('ok'))
  app.get('/auth/profile', (c) => c.json({ own: 'profile' }))
  app.all('/auth/*', (c) => handler(c.req.raw))
  return app
}

async function read(res: Response) {
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) }
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(read)

describe('createFetchHandler on Hono', () => {
  it('runs the whole flow: create → scan → authorized poll → session → consume, beside the app’s own routes', async () => {
    const url = await serveApp(honoApp(auth))
    const created = await post(`${url}/auth/create_scene`, JSON.stringify({ device_id: 'tv-1' }))
    expect(created.status).toBe(200)
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(created.headers.get('cache-control')).toBe('no-store')
    expect(created.body).toEqual({ scene_str: expect.stringMatching(/^pc_[0-9a-f]{32}$/), qr_url: expect.any(String), expires_in: 300 })
    const scene = created.body.scene_str as string

    expect((await fetch(`${url}/auth/status?scene=${scene}`).then(read)).body).toEqual({ status: 'pending' })
    expect(await auth.handleScan({ sceneStr: scene, openid: 'o_alice' })).toEqual({ result: 'authorized', userId: 1 })

    const polled = await fetch(`${url}/auth/status?scene=${scene}`).then(read)
    const endAt = new Date(clock.now() + 7 * 86_400_000).toISOString()
    expect(polled.body).toEqual({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'time', end_at: endAt, remaining_points: 0 } })
    const bearer = { authorization: `Bearer ${polled.body.session_token}` }

    const session = await fetch(`${url}/auth/session`, { headers: bearer }).then(read)
    expect(session).toMatchObject({ status: 200, body: { user_id: 1, device_id: 'tv-1', expires_at: expect.any(String), authorization: { type: 'time' } } })

    // The free trial is a time authorization: consuming uses it without a decrement.
    const consumed = await post(`${url}/auth/consume`, JSON.stringify({ points: 2 }), bearer)
    expect(consumed).toMatchObject({ status: 200, body: { status: 'ok', authorization: { type: 'time', end_at: endAt, remaining_points: 0 } } })

    expect(await fetch(`${url}/health`).then((r) => r.text())).toBe('ok')
    expect((await fetch(`${url}/auth/profile`).then(read)).body).toEqual({ own: 'profile' })
  })

  it('passes purchaseUrl on: need_purchase answers carry purchase_url', async () => {
    const url = await serveApp(honoApp(auth, { purchaseUrl: '/shop' }))
    const scene = (await auth.createScene({ deviceId: 'tv' })).sceneStr
    await auth.handleScan({ sceneStr: scene, openid: 'o_buyer' })
    const trial = (await auth.getUser({ openid: 'o_buyer' }))?.current
    await auth.revokeAuthorization({ authorizationId: trial?.id as number })
    expect((await fetch(`${url}/auth/status?scene=${scene}`).then(read)).body).toEqual({ status: 'need_purchase', purchase_url: '/shop' })
  })

  it('answers 404 {detail} for a path that is not its own (there is no next() in Fetch)', async () => {
    const handler = createFetchHandler(auth)
    for (const path of ['/', '/auth', '/auth/', '/auth/other', '/authx/status', '/auth/status/extra', '/auth/__proto__']) {
      const res = await handler(new Request(`http://app.test${path}`, { method: 'POST', body: '{}' })).then(read)
      expect(res, path).toMatchObject({ status: 404, body: { detail: 'Not found' } })
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    }
    expect(handler.owns('/auth/status')).toBe(true)
    expect(handler.owns('/auth/other')).toBe(false)
    // Over Hono the same: the app sends every /auth/* path to the handler.
    const url = await serveApp(honoApp(auth))
    expect(await fetch(`${url}/auth/other`).then(read)).toMatchObject({ status: 404, body: { detail: 'Not found' } })
  })

  it('serves at the base path it is given (default /auth)', async () => {
    const handler = createFetchHandler(auth, { basePath: '/api/v1/auth/' })
    const created = await handler(new Request('http://app.test/api/v1/auth/create_scene', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id":"tv"}' }))
    expect(created.status).toBe(200)
    expect((await handler(new Request('http://app.test/auth/create_scene', { method: 'POST', body: '{"device_id":"tv"}' }))).status).toBe(404)
  })

  it('answers 405 with Allow for a wrong method, and HEAD like GET without a body', async () => {
    const url = await serveApp(honoApp(auth))
    const wrong = await fetch(`${url}/auth/create_scene`).then(read)
    expect(wrong).toMatchObject({ status: 405, body: { detail: expect.any(String) } })
    expect(wrong.headers.get('allow')).toBe('POST')
    const put = await fetch(`${url}/auth/status`, { method: 'PUT', body: '{}' }).then(read)
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toBe('GET')

    const scene = (await auth.createScene({ deviceId: 'tv' })).sceneStr
    const get = await fetch(`${url}/auth/status?scene=${scene}`).then(read)
    const head = await fetch(`${url}/auth/status?scene=${scene}`, { method: 'HEAD' }).then(read)
    expect(head).toMatchObject({ status: 200, text: '' })
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)))
    expect((await fetch(`${url}/auth/status`, { method: 'HEAD' })).status).toBe(400)
    expect((await fetch(`${url}/auth/create_scene`, { method: 'HEAD' })).status).toBe(405)
  })

  it('answers 400 {detail} for invalid JSON and for a body over the limit', async () => {
    const url = await serveApp(honoApp(auth, { maxBodyBytes: 1024 }))
    expect(await post(`${url}/auth/create_scene`, '{"device_id":')).toMatchObject({ status: 400, body: { detail: 'Request body is not valid JSON' } })
    expect(await post(`${url}/auth/create_scene`, '[1]')).toMatchObject({ status: 400, body: { detail: 'Request body must be a JSON object' } })
    const padded = JSON.stringify({ device_id: 'tv', pad: 'y'.repeat(1024) })
    expect(await post(`${url}/auth/create_scene`, padded)).toMatchObject({ status: 400, body: { detail: 'Request body is too large' } })
    // A body of megabytes is answered just the same, and the connection keeps working.
    expect(await post(`${url}/auth/create_scene`, 'x'.repeat(4 * 1024 * 1024))).toMatchObject({ status: 400, body: { detail: 'Request body is too large' } })
    expect(await post(`${url}/auth/create_scene`, JSON.stringify({ device_id: 'tv' }))).toMatchObject({ status: 200 })
    expect(qr.requests).toHaveLength(1)
  })

  it('reads no more than the limit of an endless body, and cancels the rest', async () => {
    let pulled = 0
    let cancelled = false
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => void (pulled++, controller.enqueue(new Uint8Array(1024).fill(0x20))),
      cancel: () => void (cancelled = true),
    })
    const handler = createFetchHandler(auth, { maxBodyBytes: 8 * 1024 })
    const res = await handler(new Request('http://app.test/auth/create_scene', { method: 'POST', headers: { 'content-type': 'application/json' }, body: endless, duplex: 'half' })).then(read)
    expect(res).toMatchObject({ status: 400, body: { detail: 'Request body is too large' } })
    expect(cancelled).toBe(true)
    expect(pulled).toBeLessThan(16)
  })

  it('answers 401 with WWW-Authenticate: Bearer without a valid session', async () => {
    const url = await serveApp(honoApp(auth))
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer nope' }]
    for (const headers of attempts) {
      const res = await fetch(`${url}/auth/session`, { headers }).then(read)
      expect(res).toMatchObject({ status: 401, body: { detail: expect.any(String) } })
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
    const consume = await post(`${url}/auth/consume`, '{}', { authorization: 'Bearer nope' })
    expect(consume.status).toBe(401)
    expect(consume.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('answers 502 {detail} when the QR provider fails', async () => {
    const url = await serveApp(honoApp(auth))
    qr.failWith = 'errcode=40013 errmsg=invalid appid'
    const res = await post(`${url}/auth/create_scene`, JSON.stringify({ device_id: 'tv' }))
    // In our words; WeChat's text is for onError and the log only (B-wire-5).
    expect(res).toMatchObject({ status: 502, body: { detail: expect.stringMatching(/^QR code creation failed: the messaging platform refused/) } })
    expect(JSON.stringify(res.body)).not.toMatch(/40013|invalid appid/)
  })

  it('hides a failing store behind 500 {detail: Internal error} and reports it to onError with the Request', async () => {
    const failure = new Error('disk on fire')
    const fail = () => Promise.reject(failure)
    const broken = createScanAuth({ store: { load: fail, commit: fail, listLedger: fail, endSessions: fail, incrementCounter: fail, deleteCounter: fail, watchScenes: () => () => undefined }, qr, now: clock.now })
    const reported: Array<{ error: unknown; request: Request }> = []
    const url = await serveApp(honoApp(broken, { onError: (error, request) => void reported.push({ error, request }) }))
    const res = await fetch(`${url}/auth/status?scene=${UNKNOWN_SCENE}`).then(read)
    expect(res).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(reported).toHaveLength(1)
    expect(reported[0]?.error).toBe(failure)
    expect(reported[0]?.request).toBeInstanceOf(Request)
    expect(new URL(reported[0]!.request.url).pathname).toBe('/auth/status')
  })

  it('answers 500 and reports a body the client broke off, or one already read', async () => {
    const reported: unknown[] = []
    const handler = createFetchHandler(auth, { onError: (error) => void reported.push(error) })
    const broken = new ReadableStream<Uint8Array>({ start: (controller) => controller.error(new Error('client went away')) })
    const res = await handler(new Request('http://app.test/auth/create_scene', { method: 'POST', headers: { 'content-type': 'application/json' }, body: broken, duplex: 'half' })).then(read)
    expect(res).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
    expect(reported).toEqual([new Error('client went away')])

    // A Request whose body something upstream already read: the same answer, and onError says why.
    const consumed = new Request('http://app.test/auth/create_scene', { method: 'POST', body: '{"device_id":"tv"}' })
    await consumed.text()
    expect((await handler(consumed)).status).toBe(500)
    expect(String(reported[1])).toMatch(/body was already read/)
    expect(qr.requests).toHaveLength(0)
  })
})

describe('createFetchHandler answers exactly as createHttpHandler', () => {
  it('for the same requests: status, every header, and the body', async () => {
    const url = await serveApp(honoApp(auth))
    const core = createHttpHandler(auth)
    const fetchHandler = createFetchHandler(auth)
    const scene = (await auth.createScene({ deviceId: 'tv' })).sceneStr
    await auth.handleScan({ sceneStr: scene, openid: 'o_same' })
    const token = ((await auth.getStatus(scene)) as { sessionToken: string }).sessionToken
    const bearer = { authorization: `Bearer ${token}` }
    const JSON_TYPE = { 'content-type': 'application/json' }

    const requests: Array<{ method: string; path: string; headers?: Record<string, string>; body?: string }> = [
      { method: 'GET', path: `/auth/status?scene=${scene}` },
      { method: 'HEAD', path: `/auth/status?scene=${scene}` },
      { method: 'GET', path: `/auth/status?scene=${UNKNOWN_SCENE}` },
      { method: 'GET', path: '/auth/status' },
      { method: 'GET', path: '/auth/session', headers: bearer },
      { method: 'GET', path: '/auth/session', headers: { authorization: 'Bearer nope' } },
      { method: 'POST', path: '/auth/consume', headers: { ...bearer, ...JSON_TYPE }, body: '{"points":1}' },
      { method: 'POST', path: '/auth/consume', headers: { ...bearer, ...JSON_TYPE }, body: '{"points":0}' },
      { method: 'POST', path: '/auth/create_scene', headers: JSON_TYPE, body: '{"device_id":' },
      { method: 'POST', path: '/auth/create_scene', headers: JSON_TYPE, body: '{"device_id":""}' },
      { method: 'POST', path: '/auth/create_scene', headers: JSON_TYPE, body: JSON.stringify({ device_id: 'x', pad: 'y'.repeat(20_000) }) },
      // Sent as text/plain (as fetch sends a string body by default): 415 from both (B-wire-6).
      { method: 'POST', path: '/auth/create_scene', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: '{"device_id":"x"}' },
      { method: 'DELETE', path: '/auth/status' },
      { method: 'GET', path: '/auth/consume' },
    ]
    for (const request of requests) {
      const at = new URL(request.path, 'http://app.test')
      const expected = await core({ method: request.method, path: at.pathname, query: at.searchParams, headers: request.headers ?? {}, body: request.body })
      if (expected === undefined) throw new Error(`createHttpHandler does not serve ${request.path}`)
      const expectedText = request.method === 'HEAD' ? '' : JSON.stringify(expected.body)
      const init = { method: request.method, headers: request.headers ?? {}, body: request.body ?? null }

      const direct = await fetchHandler(new Request(`http://app.test${request.path}`, init))
      const names = [...direct.headers.keys()].sort()
      expect(names, `${request.method} ${request.path}`).toEqual([...Object.keys(expected.headers ?? {}), 'content-length'].sort())

      for (const res of [direct, await fetch(`${url}${request.path}`, init)]) {
        const what = `${request.method} ${request.path}`
        expect(res.status, what).toBe(expected.status)
        for (const [name, value] of Object.entries(expected.headers ?? {})) expect(res.headers.get(name), `${what}: ${name}`).toBe(value)
        expect(await res.text(), what).toBe(expectedText)
      }
    }
  })
})
