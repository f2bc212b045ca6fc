// The OpenAPI document of the routes: served at GET {base}/openapi.json (the same document for every
// base path and every adapter), off with `openapi: false`; its paths and methods are the handler's;
// the answers the routes actually give conform to it (checked with Ajv), and so do the request bodies
// the routes accept, while the bodies they refuse break the documented schema.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  createFetchHandler,
  createHttpHandler,
  createScanAuth,
  MemoryStore,
  openApiDocument,
  openApiJson,
  ScanAuthError,
  type HttpHandler,
  type HttpRequest,
  type HttpResponse,
  type ScanAuth,
} from '@scanauth/core'
import { ManualClock, RecordingQrProvider, TEST_PLANS, TestPaymentService } from '@scanauth/testkit'
import { ROUTES } from '../src/http/routes'
import { conformance, type CheckedAnswer } from './openapi-conformance'

const DOCS_FILE = fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url))
const get = (path: string, extra: Partial<HttpRequest> = {}): HttpRequest => ({ method: 'GET', path, ...extra })

describe('GET {base}/openapi.json', () => {
  const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })

  it('answers the document, as the JSON of docs/openapi.json, cacheable for five minutes', async () => {
    const answer = await createHttpHandler(auth)(get('/auth/openapi.json'))
    expect(answer).toMatchObject({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' } })
    expect(answer?.body).toBe(openApiDocument())
    expect(answer?.text).toBe(openApiJson())
    expect(JSON.parse(answer?.text as string)).toEqual(openApiDocument())
    expect(answer?.text, 'docs/openapi.json is stale: run `npm run openapi`').toBe(readFileSync(DOCS_FILE, 'utf8'))
    expect(openApiDocument()).toMatchObject({ openapi: '3.1.0', jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema', servers: [{ url: '.' }] })
  })

  it('is the same document under every base path, HEAD included, and only GET/HEAD', async () => {
    for (const basePath of ['', '/api/v1/auth', 'auth/']) {
      const handle = createHttpHandler(auth, { basePath })
      const base = basePath === '' ? '' : `/${basePath.replace(/^\/|\/$/g, '')}`
      expect((await handle(get(`${base}/openapi.json`)))?.text, basePath).toBe(openApiJson())
      expect(handle.owns(`${base}/openapi.json`)).toBe(true)
      expect(await handle({ method: 'HEAD', path: `${base}/openapi.json` })).toMatchObject({ status: 200 })
      expect(await handle({ method: 'POST', path: `${base}/openapi.json` })).toMatchObject({ status: 405, headers: { allow: 'GET' } })
    }
  })

  it('is served by the Fetch handler, and HEAD gets the headers only', async () => {
    const handler = createFetchHandler(auth)
    const answer = await handler(new Request('http://x.test/auth/openapi.json'))
    expect([answer.status, answer.headers.get('cache-control'), await answer.text()]).toEqual([200, 'public, max-age=300', openApiJson()])
    const head = await handler(new Request('http://x.test/auth/openapi.json', { method: 'HEAD' }))
    expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([200, String(Buffer.byteLength(openApiJson())), ''])
  })

  it('with openapi: false the path is not ours: the request falls through (Fetch: 404), the routes stay', async () => {
    const handle = createHttpHandler(auth, { openapi: false })
    expect(await handle(get('/auth/openapi.json'))).toBeUndefined()
    expect(await handle({ method: 'POST', path: '/auth/openapi.json' })).toBeUndefined()
    expect(handle.owns('/auth/openapi.json')).toBe(false)
    expect(handle.owns('/auth/status')).toBe(true)
    expect(await handle(get('/auth/plans'))).toMatchObject({ status: 200, body: [] })
    const fetchHandler = createFetchHandler(auth, { openapi: false })
    const answer = await fetchHandler(new Request('http://x.test/auth/openapi.json'))
    expect([answer.status, await answer.json()]).toEqual([404, { detail: 'Not found' }])
    expect(fetchHandler.owns('/auth/openapi.json')).toBe(false)
    expect((await createHttpHandler(auth, { openapi: true })(get('/auth/openapi.json')))?.status).toBe(200)
  })

  it('refuses an openapi option that is not a boolean', () => {
    for (const openapi of ['yes', 1, null]) {
      expect(() => createHttpHandler(auth, { openapi: openapi as never })).toThrow(ScanAuthError)
      expect(() => createHttpHandler(auth, { openapi: openapi as never })).toThrow('createHttpHandler: openapi must be true or false')
    }
  })

  it('hands out one frozen document', () => {
    const document = openApiDocument()
    expect(Object.isFrozen(document)).toBe(true)
    expect(Object.isFrozen((document.paths as Record<string, unknown>)['/status'])).toBe(true)
    expect(openApiDocument()).toBe(document)
  })
})

describe('the document and the routes', () => {
  const document = openApiDocument() as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }

  it('lists exactly the handler’s paths, each with exactly its methods', () => {
    const documented = Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path, Object.keys(item).map((m) => m.toUpperCase())]))
    const declared: Record<string, string[]> = {}
    for (const route of ROUTES) (declared[route.path] ??= []).push(route.method)
    expect(documented).toEqual(declared)
  })

  it('names every error status a route answers with the {detail} schema (the specification\'s routes) or {error, detail}, and Retry-After on every 429', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }> }>)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const declared = ROUTES.find((route) => route.path === path && route.method.toLowerCase() === method)
          if (Number(status) < 400 || declared?.answers[200]?.body === 'html') continue
          const schema = declared?.specified === true ? 'Error' : 'CodedError'
          expect(response.content, `${method} ${path} ${status}`).toEqual({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } })
          if (status === '429') expect(response.headers, `${method} ${path}`).toEqual({ 'Retry-After': { $ref: '#/components/headers/Retry-After' } })
        }
      }
    }
    expect(Object.keys(document.paths['/create_scene']?.post as object)).toContain('requestBody')
  })

  it('documents request bodies the routes accept, and refuses what they refuse with 400', async () => {
    const { validate } = conformance()
    const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), rateLimits: false })
    const handle = createHttpHandler(auth)
    const cases: Array<[unknown, number]> = [
      [{ device_id: 'tv-1' }, 200],
      [{ device_id: 'tv-1', extra: true }, 200],
      [{ device_id: '😀'.repeat(128) }, 200],
      [{}, 400],
      [{ device_id: '' }, 400],
      [{ device_id: 42 }, 400],
      [{ device_id: null }, 400],
      [{ device_id: 'x'.repeat(129) }, 400],
      [{ device_id: 'a\nb' }, 400],
      [{ device_id: 'a\u0085b' }, 400],
    ]
    for (const [body, status] of cases) {
      const answer = await handle({ method: 'POST', path: '/auth/create_scene', body: JSON.stringify(body) })
      expect(answer?.status, JSON.stringify(body)).toBe(status)
      expect(validate('#/components/schemas/CreateSceneRequest', body), JSON.stringify(body)).toHaveLength(status === 200 ? 0 : 1)
    }
    for (const [body, valid] of [[{}, true], [{ points: 3 }, true], [{ points: 0 }, false], [{ points: 1.5 }, false], [{ points: '1' }, false]] as const) {
      expect(validate('#/components/schemas/ConsumeRequest', body), JSON.stringify(body)).toHaveLength(valid ? 0 : 1)
    }
    for (const [body, valid] of [[{ plan: 'p' }, true], [{ plan: 'p', scene: 's' }, true], [{}, false], [{ plan: '' }, false], [{ plan: 'p', scene: '' }, false], [{ plan: 'p', scene: 1 }, false]] as const) {
      expect(validate('#/components/schemas/PurchaseRequest', body), JSON.stringify(body)).toHaveLength(valid ? 0 : 1)
    }
    const examples = (document.paths['/purchase']?.post as { requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> } }).requestBody.content['application/json']?.examples
    for (const [name, example] of Object.entries(examples ?? {})) expect(validate('#/components/schemas/PurchaseRequest', example.value), name).toEqual([])
  })
})

describe('the answers of the routes conform to the document', () => {
  let clock: ManualClock
  let auth: ScanAuth
  let payments: TestPaymentService
  let handle: HttpHandler
  let problems: string[]
  /** `METHOD path status` of every answer checked. */
  let seen: Set<string>
  const { check, validate } = conformance()

  /** Asks the handler and checks its answer against the document. */
  async function ask(request: HttpRequest): Promise<HttpResponse> {
    const answer = (await handle(request)) as HttpResponse
    expect(answer, `${request.method} ${request.path}`).toBeDefined()
    const checked: CheckedAnswer = { status: answer.status, headers: answer.headers ?? {}, body: answer.body }
    const path = request.path.replace(/^\/auth/, '').replace(/\?.*$/, '')
    problems.push(...check(request.method, path, checked))
    seen.add(`${request.method} ${path} ${answer.status}`)
    return answer
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

  beforeEach(() => {
    clock = new ManualClock()
    payments = new TestPaymentService(clock.now)
    auth = createScanAuth({
      store: new MemoryStore(),
      qr: new RecordingQrProvider(),
      now: clock.now,
      freeTrialDays: 1,
      payments: { provider: payments, plans: TEST_PLANS },
      rateLimits: { perDevice: { limit: 2, windowSeconds: 60 }, statusPollsPerScene: { limit: 5, windowSeconds: 60 } },
    })
    handle = createHttpHandler(auth, { purchaseUrl: '/shop' })
    problems = []
    seen = new Set()
  })

  async function signIn(device: string, openid: string) {
    const created = (await ask({ method: 'POST', path: '/auth/create_scene', body: JSON.stringify({ device_id: device }) })).body as { scene_str: string }
    await auth.handleScan({ sceneStr: created.scene_str, openid })
    const status = (await ask(get('/auth/status', { query: { scene: created.scene_str } }))).body as { status: string; session_token: string }
    return { scene: created.scene_str, status }
  }

  it('create_scene, status pending and authorized, session, consume, plans, purchase, order, logout', async () => {
    const created = await ask({ method: 'POST', path: '/auth/create_scene', body: JSON.stringify({ device_id: 'tv-1' }) })
    const scene = (created.body as { scene_str: string }).scene_str
    expect((await ask(get('/auth/status', { query: { scene } }))).body).toEqual({ status: 'pending' })
    await auth.handleScan({ sceneStr: scene, openid: 'alice' })
    const authorized = await ask(get('/auth/status', { query: { scene, wait: '5' } }))
    expect(authorized.body).toMatchObject({ status: 'authorized' })
    const token = (authorized.body as { session_token: string }).session_token
    expect((await ask(get('/auth/session', { headers: bearer(token) }))).status).toBe(200)
    expect((await ask({ method: 'POST', path: '/auth/consume', headers: bearer(token), body: '' })).body).toMatchObject({ status: 'ok' })
    expect((await ask({ method: 'POST', path: '/auth/consume', headers: bearer(token), body: '{"points":2}' })).status).toBe(200)
    expect((await ask(get('/auth/plans'))).body).toHaveLength(TEST_PLANS.length)

    const bought = await ask({ method: 'POST', path: '/auth/purchase', headers: bearer(token), body: JSON.stringify({ plan: 'points-100' }) })
    expect(bought.status).toBe(200)
    const orderId = (bought.body as { order_id: string }).order_id
    expect((await ask(get('/auth/order', { query: { id: orderId }, headers: bearer(token) }))).body).toMatchObject({ order_id: orderId, status: 'open', paid_at: null })
    expect((await ask({ method: 'POST', path: '/auth/logout', headers: bearer(token) })).status).toBe(204)
    expect((await ask({ method: 'POST', path: '/auth/logout', headers: bearer(token) })).status).toBe(401)
    expect((await ask(get('/auth/status', { query: { scene } }))).body).toEqual({ status: 'expired' })
    expect((await ask(get('/auth/openapi.json'))).status).toBe(200)
    expect(problems).toEqual([])
  })

  it('need_purchase with purchase_url, a purchase by scene, insufficient points', async () => {
    const first = await signIn('tv-1', 'bob')
    clock.advance(2 * 86_400_000)
    const { scene, status } = await signIn('tv-2', 'bob')
    expect(status).toEqual({ status: 'need_purchase', purchase_url: '/shop' })
    expect((await ask({ method: 'POST', path: '/auth/consume', headers: bearer(first.status.session_token), body: '{}' })).body).toMatchObject({ status: expect.any(String) })
    const bought = await ask({ method: 'POST', path: '/auth/purchase', body: JSON.stringify({ scene, plan: 'points-100' }) })
    expect(bought.status).toBe(200)
    const order = (bought.body as { order_id: string }).order_id
    const paid = await auth.applyPayment(payments.pay(order))
    expect(paid).toMatchObject({ result: 'granted' })
    const now = (await ask(get('/auth/status', { query: { scene } }))).body as { status: string; session_token: string }
    expect(now.status).toBe('authorized')
    expect((await ask(get('/auth/order', { query: { id: order }, headers: bearer(now.session_token) }))).body).toMatchObject({ status: 'paid', paid_at: expect.any(String) })
    expect((await ask({ method: 'POST', path: '/auth/consume', headers: bearer(now.session_token), body: '{"points":1000}' })).body).toEqual({ status: 'insufficient_points' })
    expect(problems).toEqual([])
  })

  it('every error: 400, 401, 404, 405, 409, 429 with Retry-After, 502; HEAD', async () => {
    await ask({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":' })
    await ask({ method: 'POST', path: '/auth/create_scene', body: '[1]' })
    await ask({ method: 'POST', path: '/auth/create_scene', body: '{}' })
    await ask(get('/auth/status'))
    await ask(get('/auth/status', { query: { scene: `pc_${'0'.repeat(32)}`, wait: '31' } }))
    await ask(get('/auth/status', { query: { scene: `pc_${'0'.repeat(32)}` } }))
    await ask(get('/auth/events', { query: { scene: `pc_${'0'.repeat(32)}` } }))
    await ask(get('/auth/session'))
    await ask(get('/auth/session', { headers: bearer('nope') }))
    await ask({ method: 'POST', path: '/auth/consume', headers: bearer('nope'), body: '{"points":0}' })
    await ask({ method: 'POST', path: '/auth/consume', headers: bearer('nope'), body: '{}' })
    await ask({ method: 'POST', path: '/auth/purchase', body: '{"plan":"days-30"}' })
    await ask({ method: 'POST', path: '/auth/purchase', body: '{"plan":"nope","scene":"x"}' })
    await ask({ method: 'POST', path: '/auth/purchase', body: '{"plan":""}' })
    await ask(get('/auth/order', { headers: bearer('nope') }))
    await ask(get('/auth/create_scene'))
    await ask({ method: 'PUT', path: '/auth/status' })
    await ask({ method: 'HEAD', path: '/auth/plans' })
    const pending = (await ask({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":"tv-9"}' })).body as { scene_str: string }
    expect((await ask({ method: 'POST', path: '/auth/purchase', body: JSON.stringify({ scene: pending.scene_str, plan: 'days-30' }) })).status).toBe(409)
    await ask({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":"tv-9"}' })
    const limited = await ask({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":"tv-9"}' })
    expect(limited).toMatchObject({ status: 429, headers: { 'retry-after': expect.stringMatching(/^\d+$/) } })
    for (let i = 0; i < 6; i++) await ask(get('/auth/status', { query: { scene: pending.scene_str } }))
    const { session_token: token } = (await signIn('tv-5', 'carol')).status
    payments.failWith = 'SYSTEM_ERROR'
    expect((await ask({ method: 'POST', path: '/auth/purchase', headers: bearer(token), body: '{"plan":"days-30"}' })).status).toBe(502)
    expect(problems).toEqual([])
    for (const answer of [
      'POST /create_scene 400',
      'GET /status 400',
      'GET /status 404',
      'GET /events 404',
      'GET /session 401',
      'POST /consume 400',
      'POST /consume 401',
      'POST /purchase 400',
      'POST /purchase 401',
      'POST /purchase 404',
      'POST /purchase 409',
      'POST /purchase 502',
      'GET /order 400',
      'GET /create_scene 405',
      'PUT /status 405',
      'HEAD /plans 200',
      'POST /create_scene 429',
      'GET /status 429',
    ]) {
      expect(seen, answer).toContain(answer)
    }
  })

  it('flags what does not conform: an extra field, an undocumented status, a missing Retry-After, a wrong Allow', () => {
    const json = { 'content-type': 'application/json; charset=utf-8' }
    expect(check('GET', '/status', { status: 200, headers: json, body: { status: 'pending', extra: 1 } })).toHaveLength(1)
    expect(check('GET', '/status', { status: 200, headers: json, body: { status: 'authorized', session_token: 't' } })).toHaveLength(1)
    expect(check('GET', '/plans', { status: 200, headers: json, body: [{ id: 'p', description: 'd', amount_fen: 0, grant: { type: 'time', days: 1 } }] })).toHaveLength(1)
    expect(check('GET', '/plans', { status: 404, headers: json, body: { detail: 'x' } })).toHaveLength(1)
    expect(check('POST', '/create_scene', { status: 429, headers: json, body: { detail: 'x' } })).toHaveLength(1)
    expect(check('POST', '/create_scene', { status: 400, headers: json, body: { detail: 1 } })).toHaveLength(1)
    expect(check('POST', '/create_scene', { status: 400, headers: { 'content-type': 'text/plain' }, body: 'x' })).toHaveLength(1)
    expect(check('PUT', '/status', { status: 405, headers: { ...json, allow: 'GET, POST' }, body: { detail: 'x' } })).toHaveLength(1)
    expect(check('GET', '/nowhere', { status: 200, headers: json, body: {} })).toHaveLength(1)
    expect(validate('#/components/schemas/Session', { user_id: 1, device_id: 'd', expires_at: 'yesterday', authorization: null })).toHaveLength(1)
  })

  it('the event stream: status events carry the Status schema, the error event the Error schema', async () => {
    const scene = ((await ask({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":"tv-1"}' })).body as { scene_str: string }).scene_str
    await auth.handleScan({ sceneStr: scene, openid: 'dave' })
    const stream = await ask(get('/auth/events', { query: { scene } }))
    expect(stream.headers?.['content-type']).toBe('text/event-stream; charset=utf-8')
    const events = eventSchemas()
    let text = ''
    for await (const chunk of stream.events as AsyncIterable<string>) text += chunk
    const blocks = text.split('\n\n').filter((block) => block.includes('data: '))
    expect(blocks.length).toBeGreaterThan(0)
    for (const block of blocks) {
      const name = /^event: (.*)$/m.exec(block)?.[1] as string
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] as string) as unknown
      expect(validate(events[name]?.data.$ref as string, data), block).toEqual([])
    }
    const reconnect = await ask(get('/auth/events', { query: { scene }, headers: { 'last-event-id': 'authorized' } }))
    expect(reconnect.status).toBe(204)
    expect(problems).toEqual([])
  })
})

/** The events of `GET events` as the document describes them (`x-scanauth-events`): each one's data schema. */
function eventSchemas(): Record<string, { data: { $ref: string } }> {
  type Media = { 'x-scanauth-events': Record<string, { data: { $ref: string } }> }
  const document = openApiDocument() as { paths: { '/events': { get: { responses: { '200': { content: { 'text/event-stream': Media } } } } } } }
  return document.paths['/events'].get.responses['200'].content['text/event-stream']['x-scanauth-events']
}
