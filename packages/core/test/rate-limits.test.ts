// The rate limits of createScanAuth (docs/behaviour.md, B-rate-1…9) on a MemoryStore: scene creation
// per device, per address and by the daily budget, counted in the store (shared by instances) and
// checked before the QR provider; the per-instance poll ceiling; and the 429 with Retry-After over
// real sockets, through createHttpHandler on node:http and through createFetchHandler on Hono.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Hono } from 'hono'
import { beforeEach, describe, expect, it } from 'vitest'
import { createFetchHandler, createHttpHandler, createScanAuth, MemoryStore, ScanAuthError, type RateLimitOptions, type ScanAuth, type Store } from '@scanauth/core'
import { readRawBody } from '@scanauth/core/node'
import { ManualClock, RecordingQrProvider, serverPerTest } from '@scanauth/testkit'
import { createPollCeiling } from '../src/service/poll-ceiling'
import { honoServerPerTest } from './fetch-hono'

const serve = serverPerTest()
const serveHono = honoServerPerTest()

let clock: ManualClock
let qr: RecordingQrProvider
let store: MemoryStore

beforeEach(() => {
  // 30 s into a minute: the minute's windows end in 30 s, the UTC day in 23 h 59 min 30 s.
  clock = new ManualClock('2026-01-01T00:00:30.000Z')
  qr = new RecordingQrProvider()
  store = new MemoryStore()
})

const service = (rateLimits?: RateLimitOptions | false, over: Store = store) => createScanAuth({ store: over, qr, now: clock.now, rateLimits })

/** The error a promise rejects with (it must reject). */
async function refusal(promise: Promise<unknown>): Promise<ScanAuthError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ScanAuthError)
  return error as ScanAuthError
}

/** createScanAuth's HTTP handler on a bare node:http server, with the socket's address as the client's. */
function nodeListener(auth: ScanAuth) {
  const handle = createHttpHandler(auth, { basePath: '/auth' })
  return async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const body = req.method === 'POST' ? await readRawBody(req, 16 * 1024) : undefined
    const answer = await handle({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, clientAddress: req.socket.remoteAddress })
    res.writeHead(answer?.status ?? 404, answer?.headers).end(answer?.body === undefined ? undefined : JSON.stringify(answer.body))
  }
}

const postScene = (url: string, deviceId: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ device_id: deviceId }) })

describe('scene creation per device (B-rate-4), by default 10 a minute', () => {
  it('refuses the 11th with rate_limited and retryAfterSeconds, without calling the platform or storing a scene', async () => {
    const auth = service()
    for (let i = 0; i < 10; i++) await auth.createScene({ deviceId: 'tv-1' })
    const error = await refusal(auth.createScene({ deviceId: 'tv-1' }))
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 30 })
    expect(error.message).toBe('Too many QR codes requested for this device; try again in 30 s')
    expect(qr.requests).toHaveLength(10)
    expect(store.snapshot().scenes).toHaveLength(10)
    // Another device is not affected.
    await expect(auth.createScene({ deviceId: 'tv-2' })).resolves.toMatchObject({ expiresIn: 300 })
  })

  it('counts again from zero when the clock reaches the next window', async () => {
    const auth = service()
    for (let i = 0; i < 10; i++) await auth.createScene({ deviceId: 'tv-1' })
    clock.advanceSeconds(29)
    expect(await refusal(auth.createScene({ deviceId: 'tv-1' }))).toMatchObject({ retryAfterSeconds: 1 })
    clock.advanceSeconds(1)
    for (let i = 0; i < 10; i++) await auth.createScene({ deviceId: 'tv-1' })
    expect(await refusal(auth.createScene({ deviceId: 'tv-1' }))).toMatchObject({ retryAfterSeconds: 60 })
    expect(qr.requests).toHaveLength(20)
  })

  it('lets exactly the limit through when the calls race (the counter is atomic)', async () => {
    const auth = service()
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => auth.createScene({ deviceId: 'tv-1' })))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10)
    expect(qr.requests).toHaveLength(10)
  })

  it('is shared by two instances over one store', async () => {
    const [a, b] = [service(), service()]
    for (let i = 0; i < 5; i++) await a.createScene({ deviceId: 'tv-1' })
    for (let i = 0; i < 5; i++) await b.createScene({ deviceId: 'tv-1' })
    expect(await refusal(a.createScene({ deviceId: 'tv-1' }))).toMatchObject({ code: 'rate_limited' })
    expect(await refusal(b.createScene({ deviceId: 'tv-1' }))).toMatchObject({ code: 'rate_limited' })
    expect(store.snapshot().scenes).toHaveLength(10)
  })
})

describe('scene creation per client address (B-rate-5), by default 30 a minute', () => {
  it('refuses the 31st from one address whatever the device, and counts an IPv6 /64 as one address', async () => {
    const auth = service()
    for (let i = 0; i < 30; i++) await auth.createScene({ deviceId: `tv-${i}`, clientAddress: `2001:db8:1:2::${i.toString(16)}` })
    const error = await refusal(auth.createScene({ deviceId: 'tv-new', clientAddress: '2001:db8:1:2::ffff' }))
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 30, message: 'Too many QR codes requested from this address; try again in 30 s' })
    await expect(auth.createScene({ deviceId: 'tv-new', clientAddress: '2001:db8:1:3::1' })).resolves.toBeDefined()
    await expect(auth.createScene({ deviceId: 'tv-new' })).resolves.toBeDefined()
    expect(qr.requests).toHaveLength(32)
  })

  it('validates the address like an identifier, before counting anything', async () => {
    const auth = service()
    for (const clientAddress of ['', 'x'.repeat(129), 'a\nb', 42]) {
      expect(await refusal(auth.createScene({ deviceId: 'tv', clientAddress } as never))).toMatchObject({ code: 'invalid_request' })
    }
    for (let i = 0; i < 10; i++) await auth.createScene({ deviceId: 'tv', clientAddress: '192.0.2.1' })
  })
})

describe('the daily QR code budget (B-rate-6, B-rate-7)', () => {
  it('refuses past the budget until the next UTC day, for every device and address', async () => {
    const auth = service({ dailyQrBudget: 3 })
    for (let i = 0; i < 3; i++) await auth.createScene({ deviceId: `tv-${i}`, clientAddress: `192.0.2.${i}` })
    const error = await refusal(auth.createScene({ deviceId: 'tv-9', clientAddress: '192.0.2.9' }))
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 86_400 - 30 })
    expect(error.message).toMatch(/^The account's daily QR code budget is used up/)
    clock.set(Date.parse('2026-01-01T23:59:59.000Z'))
    expect(await refusal(auth.createScene({ deviceId: 'tv-9' }))).toMatchObject({ retryAfterSeconds: 1 })
    clock.set(Date.parse('2026-01-02T00:00:00.000Z'))
    await expect(auth.createScene({ deviceId: 'tv-9' })).resolves.toBeDefined()
    expect(qr.requests).toHaveLength(4)
  })

  it('is not spent by calls the device or address limits refuse', async () => {
    const auth = service({ dailyQrBudget: 12, perDevice: { limit: 10, windowSeconds: 60 } })
    for (let i = 0; i < 50; i++) await auth.createScene({ deviceId: 'tv-1' }).catch(() => undefined)
    expect(qr.requests).toHaveLength(10)
    await auth.createScene({ deviceId: 'tv-2' })
    await auth.createScene({ deviceId: 'tv-3' })
    expect(await refusal(auth.createScene({ deviceId: 'tv-4' }))).toMatchObject({ code: 'rate_limited' })
  })

  it('counts a call the platform then fails (the quota may be spent)', async () => {
    const auth = service({ dailyQrBudget: 1 })
    qr.failWith = 'network down'
    expect(await refusal(auth.createScene({ deviceId: 'tv-1' }))).toMatchObject({ code: 'qr_creation_failed' })
    qr.failWith = null
    expect(await refusal(auth.createScene({ deviceId: 'tv-1' }))).toMatchObject({ code: 'rate_limited' })
  })
})

describe('the rateLimits option', () => {
  it('turns each limit off with false', async () => {
    const auth = service({ perDevice: false, perAddress: false, dailyQrBudget: false, statusPollsPerScene: false })
    for (let i = 0; i < 40; i++) await auth.createScene({ deviceId: 'tv-1', clientAddress: '192.0.2.1' })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv-1' })
    for (let i = 0; i < 200; i++) await auth.getStatus(sceneStr)
    expect(qr.requests).toHaveLength(41)
  })

  it('turns every limit off with rateLimits: false, in one word', async () => {
    const auth = service(false)
    for (let i = 0; i < 60; i++) await auth.createScene({ deviceId: 'tv-1', clientAddress: '192.0.2.1' })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv-1' })
    for (let i = 0; i < 200; i++) await auth.getStatus(sceneStr)
    expect(qr.requests).toHaveLength(61)
  })

  it.each([
    [true, 'rateLimits'],
    [{ perDevice: { limit: 0, windowSeconds: 60 } }, 'rateLimits.perDevice'],
    [{ perAddress: { limit: 5, windowSeconds: 86_401 } }, 'rateLimits.perAddress'],
    [{ perAddress: { limit: 5 } }, 'rateLimits.perAddress'],
    [{ dailyQrBudget: 1.5 }, 'rateLimits.dailyQrBudget'],
    [{ dailyQrBudget: true }, 'rateLimits.dailyQrBudget'],
    [{ statusPollsPerScene: { limit: 1, windowSeconds: 1, burst: 3 } }, 'rateLimits.statusPollsPerScene'],
    [{ perIp: { limit: 1, windowSeconds: 1 } }, 'rateLimits'],
    [{ purchasesPerUser: { limit: 10, windowSeconds: 86_401 } }, 'rateLimits.purchasesPerUser'],
    [{ purchasesPerAddress: 30 }, 'rateLimits.purchasesPerAddress'],
  ])('refuses %j with invalid_options naming it', (rateLimits, named) => {
    const attempt = () => service(rateLimits as RateLimitOptions)
    expect(attempt).toThrow(ScanAuthError)
    expect(attempt).toThrow(`createScanAuth: ${named}`)
  })
})

describe('the poll ceiling (B-rate-9), by default 120 polls per scene a minute, in memory', () => {
  /** A store that counts its reads, to show a refused poll reads nothing. */
  function countingStore() {
    const inner = new MemoryStore()
    const reads = { count: 0 }
    const counted: Store = Object.assign(Object.create(inner) as MemoryStore, {
      load: (query: Parameters<Store['load']>[0]) => (reads.count++, inner.load(query)),
    })
    return { store: counted, reads }
  }

  it('refuses the 121st poll of a scene in a window before reading the store; the next window polls again', async () => {
    const { store: counted, reads } = countingStore()
    const auth = service(undefined, counted)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv-1' })
    const other = (await auth.createScene({ deviceId: 'tv-1' })).sceneStr
    for (let i = 0; i < 120; i++) expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
    expect(reads.count).toBe(120)
    expect(await refusal(auth.getStatus(sceneStr))).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 30, message: 'Too many polls of this scene; try again in 30 s' })
    expect(reads.count).toBe(120)
    expect(await auth.getStatus(other)).toEqual({ status: 'pending' })
    clock.advanceSeconds(30)
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
  })

  it('a device polling every second for the whole scene lifetime never meets it', async () => {
    const auth = service()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv-1' })
    for (let s = 0; s < 300; s++, clock.advanceSeconds(1)) await auth.getStatus(sceneStr)
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
  })

  it('is per instance: another instance over the same store still answers', async () => {
    const [a, b] = [service({ statusPollsPerScene: { limit: 2, windowSeconds: 60 } }), service({ statusPollsPerScene: { limit: 2, windowSeconds: 60 } })]
    const { sceneStr } = await a.createScene({ deviceId: 'tv-1' })
    await a.getStatus(sceneStr)
    await a.getStatus(sceneStr)
    expect(await refusal(a.getStatus(sceneStr))).toMatchObject({ code: 'rate_limited' })
    expect(await b.getStatus(sceneStr)).toEqual({ status: 'pending' })
  })

  it('does not count strings that cannot be a scene: they are 404 without a read, as before', async () => {
    const auth = service({ statusPollsPerScene: { limit: 1, windowSeconds: 60 } })
    for (let i = 0; i < 3; i++) expect(await refusal(auth.getStatus('nope'))).toMatchObject({ code: 'scene_not_found' })
  })

  it('remembers a bounded number of scenes, forgetting the oldest first', () => {
    const ceiling = createPollCeiling({ limit: 1, windowSeconds: 60 }, 3)
    const at = clock.now()
    for (const scene of ['a', 'b', 'c']) ceiling(scene, at)
    expect(() => ceiling('a', at)).toThrow(ScanAuthError)
    ceiling('d', at) // forgets 'a', the oldest
    expect(() => ceiling('a', at)).not.toThrow() // counted afresh; that forgets 'b'
    expect(() => ceiling('c', at)).toThrow(ScanAuthError)
    expect(() => ceiling('b', at)).not.toThrow()
  })
})

describe('over HTTP: 429, Retry-After and {detail}', () => {
  it('createHttpHandler on node:http limits per address (the socket address) and per poll', async () => {
    const auth = service({ perAddress: { limit: 3, windowSeconds: 60 }, statusPollsPerScene: { limit: 2, windowSeconds: 60 } })
    const url = await serve(nodeListener(auth))
    const scenes: string[] = []
    for (let i = 0; i < 3; i++) scenes.push(((await (await postScene(url, `tv-${i}`)).json()) as { scene_str: string }).scene_str)
    const refused = await postScene(url, 'tv-9')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('30')
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(refused.headers.get('cache-control')).toBe('no-store')
    expect(await refused.json()).toEqual({ detail: 'Too many QR codes requested from this address; try again in 30 s' })
    expect(qr.requests).toHaveLength(3)
    expect(store.snapshot().scenes).toHaveLength(3)

    const poll = () => fetch(`${url}/auth/status?scene=${scenes[0]}`)
    expect((await poll()).status).toBe(200)
    expect((await poll()).status).toBe(200)
    const ceiling = await poll()
    expect([ceiling.status, ceiling.headers.get('retry-after'), await ceiling.json()]).toEqual([429, '30', { detail: 'Too many polls of this scene; try again in 30 s' }])
  })

  it('createHttpHandler answers 429 per device without an address', async () => {
    const handle = createHttpHandler(service(), { basePath: '/auth' })
    const create = () => handle({ method: 'POST', path: '/auth/create_scene', body: '{"device_id":"tv-1"}' })
    for (let i = 0; i < 10; i++) expect((await create())?.status).toBe(200)
    expect(await create()).toMatchObject({ status: 429, headers: { 'retry-after': '30' }, body: { detail: expect.stringContaining('this device') } })
  })

  it('createFetchHandler on Hono takes the address from its clientAddress option, only for create_scene', async () => {
    const asked: string[] = []
    const handler = createFetchHandler(service({ perAddress: { limit: 2, windowSeconds: 60 }, dailyQrBudget: 3 }), {
      clientAddress: (request) => (asked.push(new URL(request.url).pathname), request.headers.get('x-real-ip') ?? undefined),
    })
    const app = new Hono()
    app.all('/auth/*', (c) => handler(c.req.raw))
    const url = await serveHono(app)
    const from = (ip: string, device: string) => postScene(url, device, { 'x-real-ip': ip })
    expect((await from('192.0.2.1', 'tv-1')).status).toBe(200)
    const scene = ((await (await from('192.0.2.1', 'tv-2')).json()) as { scene_str: string }).scene_str
    const refused = await from('192.0.2.1', 'tv-3')
    expect([refused.status, refused.headers.get('retry-after'), await refused.json()]).toEqual([429, '30', { detail: 'Too many QR codes requested from this address; try again in 30 s' }])
    // Another address passes the address limit, then meets the budget (3 a day): Retry-After to midnight UTC.
    expect((await from('192.0.2.2', 'tv-4')).status).toBe(200)
    const budget = await from('192.0.2.3', 'tv-5')
    expect([budget.status, budget.headers.get('retry-after')]).toEqual([429, String(86_400 - 30)])
    expect(qr.requests).toHaveLength(3)
    await fetch(`${url}/auth/status?scene=${scene}`)
    expect(asked).toEqual(Array(5).fill('/auth/create_scene'))
  })

  it('createFetchHandler answers 500 when the clientAddress function throws, and reports it', async () => {
    const reported: unknown[] = []
    const handler = createFetchHandler(service(), {
      clientAddress: () => {
        throw new Error('no address table')
      },
      onError: (error) => void reported.push(error),
    })
    const res = await handler(new Request('http://localhost/auth/create_scene', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id":"tv"}' }))
    expect([res.status, await res.json()]).toEqual([500, { detail: 'Internal error' }])
    expect(reported).toEqual([new Error('no address table')])
    expect(qr.requests).toHaveLength(0)
  })
})
