// signIn against the real example server (examples/express, memory store, WeChat emulator), directly
// and through loopback proxies that pass, refuse or hold silent the event stream (docs/behaviour.md
// B-wait-1…3): the transport it ends up on, the requests it costs, expiry and refresh, errors.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createScanAuthClient, ScanAuthClientError, type SceneCode, type StatusUpdate } from '../src/index'
import { closedPort, startExample, type Example } from './support/example'
import { startProxy, type EventsMode, type Proxy } from './support/proxy'

let example: Example
const proxies: Proxy[] = []

beforeAll(async () => {
  example = await startExample()
})
afterAll(async () => {
  await example?.server.close()
})
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()))
})

async function proxy(mode: EventsMode): Promise<Proxy> {
  const started = await startProxy(example.server.url, mode)
  proxies.push(started)
  return started
}

/** A sign-in whose codes are scanned by the emulated phone as soon as they are shown. */
function scanning(openid: string) {
  const codes: SceneCode[] = []
  const statuses: StatusUpdate[] = []
  return {
    codes,
    statuses,
    onCode(code: SceneCode) {
      codes.push(code)
      void example.scan(code.sceneStr, openid)
    },
    onStatus(update: StatusUpdate) {
      statuses.push(update)
    },
  }
}

describe('signIn over the event stream', () => {
  it('signs in with create_scene and one event stream: 2 requests, no reconnect after the final status', async () => {
    const counting = await proxy('pass')
    const client = createScanAuthClient({ baseUrl: `${counting.url}/auth` })
    const flow = scanning('o_events')
    const result = await client.signIn({ deviceId: 'tv-1', onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result).toMatchObject({ status: 'authorized', sceneStr: flow.codes[0]?.sceneStr, authorization: { type: 'time', remainingPoints: 0 } })
    if (result.status !== 'authorized') throw new Error('not authorized')
    expect(result.sessionToken).toMatch(/.{20,}/)
    expect(flow.codes).toHaveLength(1)
    expect(flow.codes[0]).toMatchObject({ refresh: 0, qrUrl: expect.stringMatching(/^http/), qrContent: expect.any(String) })
    expect(Date.parse(flow.codes[0]!.expiresAt)).toBeGreaterThan(Date.now())
    expect(flow.statuses.every((s) => s.transport === 'events')).toBe(true)
    expect(flow.statuses.at(-1)?.status).toBe('authorized')
    // Give a reconnect the time it would take, then count.
    await new Promise((ok) => setTimeout(ok, 300))
    expect(counting.requests).toEqual(['/auth/create_scene', '/auth/events'])
    expect(counting.requests.length).toBeLessThanOrEqual(3)
    expect(counting.inFlight()).toBe(0)
  })

  it('uses the session it got: getSession, consume, logout, then getSession is null', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    const flow = scanning('o_session')
    const result = await client.signIn({ deviceId: 'tv-2', onCode: flow.onCode })
    if (result.status !== 'authorized') throw new Error('not authorized')
    const session = await client.getSession(result.sessionToken)
    expect(session).toMatchObject({ deviceId: 'tv-2', userId: expect.any(Number), authorization: { type: 'time' } })
    expect(await client.consume(result.sessionToken)).toMatchObject({ status: 'ok', authorization: { type: 'time' } })
    expect(await client.logout(result.sessionToken)).toBe(true)
    expect(await client.getSession(result.sessionToken)).toBeNull()
    expect(await client.logout(result.sessionToken)).toBe(false)
    await expect(client.consume(result.sessionToken)).rejects.toMatchObject({ code: 'http', status: 401 })
    expect((await client.listPlans()).length).toBeGreaterThan(0)
  })
})

describe('signIn behind proxies', () => {
  for (const status of [404, 502]) {
    it(`falls back to the long poll when a proxy refuses the stream with ${status}`, async () => {
      const refusing = await proxy({ refuse: status })
      const client = createScanAuthClient({ baseUrl: `${refusing.url}/auth` })
      const flow = scanning(`o_refused_${status}`)
      const result = await client.signIn({ deviceId: 'tv-3', onCode: flow.onCode, onStatus: flow.onStatus })
      expect(result.status).toBe('authorized')
      expect(flow.statuses.at(-1)).toMatchObject({ status: 'authorized', transport: 'long-poll' })
      expect(refusing.requests.slice(0, 3)).toEqual(['/auth/create_scene', '/auth/events', '/auth/status'])
    })
  }

  it('falls back to the long poll when a proxy holds the stream silent for 5 s, and closes that stream', async () => {
    const silent = await proxy('silent')
    const client = createScanAuthClient({ baseUrl: `${silent.url}/auth` })
    const flow = scanning('o_silent')
    const result = await client.signIn({ deviceId: 'tv-4', onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result.status).toBe('authorized')
    expect(flow.statuses.map((s) => s.transport)).toEqual(['long-poll'])
    expect(silent.requests).toEqual(['/auth/create_scene', '/auth/events', '/auth/status'])
    expect(silent.inFlight()).toBe(0)
  })

  it('falls back to the long poll when a proxy holds back even the stream’s headers for 5 s', async () => {
    const holding = await proxy('hold')
    const client = createScanAuthClient({ baseUrl: `${holding.url}/auth` })
    const flow = scanning('o_held')
    const result = await client.signIn({ deviceId: 'tv-4h', onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result.status).toBe('authorized')
    expect(flow.statuses.map((s) => s.transport)).toEqual(['long-poll'])
    expect(holding.requests).toEqual(['/auth/create_scene', '/auth/events', '/auth/status'])
    expect(holding.inFlight()).toBe(0)
  })

  it('falls back to the long poll when a proxy resets the stream’s connection every time', async () => {
    const resetting = await proxy('reset')
    const client = createScanAuthClient({ baseUrl: `${resetting.url}/auth` })
    const flow = scanning('o_reset')
    const result = await client.signIn({ deviceId: 'tv-4r', onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result.status).toBe('authorized')
    expect(flow.statuses.at(-1)).toMatchObject({ status: 'authorized', transport: 'long-poll' })
    expect(resetting.requests.filter((p) => p === '/auth/status').length).toBeGreaterThanOrEqual(1)
  })

  it('fails with the proxy’s answer when the stream is forced and refused', async () => {
    const refusing = await proxy({ refuse: 502 })
    const client = createScanAuthClient({ baseUrl: `${refusing.url}/auth` })
    await expect(client.signIn({ deviceId: 'tv-5', onCode: () => {}, transport: 'events' })).rejects.toMatchObject({ code: 'http', status: 502 })
  })
})

describe('signIn by the long poll and the poll', () => {
  for (const transport of ['long-poll', 'poll'] as const) {
    it(`signs in with transport '${transport}'`, async () => {
      const client = createScanAuthClient({ baseUrl: example.baseUrl })
      const statuses: StatusUpdate[] = []
      const result = await client.signIn({
        deviceId: 'tv-6',
        transport,
        pollIntervalMs: 200,
        onStatus: (s) => statuses.push(s),
        // Scanned a little later, so that the wait has begun.
        onCode: (code) => void setTimeout(() => void example.scan(code.sceneStr, `o_${transport}`), 300),
      })
      expect(result.status).toBe('authorized')
      expect(new Set(statuses.map((s) => s.transport))).toEqual(new Set([transport]))
      if (transport === 'poll') expect(statuses.filter((s) => s.status === 'pending').length).toBeGreaterThan(0)
    })
  }
})

describe('errors', () => {
  it('rejects network after its attempts when the server cannot be reached', async () => {
    const client = createScanAuthClient({ baseUrl: `http://127.0.0.1:${await closedPort()}/auth`, networkAttempts: 2 })
    const error = await client.signIn({ deviceId: 'tv-7', onCode: () => {} }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ScanAuthClientError)
    expect(error).toMatchObject({ code: 'network' })
  })

  it('rejects http with the status and the server’s detail', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    const error = await client.signIn({ deviceId: 'x'.repeat(129), onCode: () => {} }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'http', status: 400, detail: expect.stringMatching(/device_id/) })
  })

  it('refuses bad options with a TypeError', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    await expect(client.signIn({ deviceId: 'tv', onCode: () => {}, transport: 'sse' as never })).rejects.toThrow(TypeError)
    await expect(client.signIn({ deviceId: '', onCode: () => {} })).rejects.toThrow(TypeError)
    expect(() => createScanAuthClient({ baseUrl: '' })).toThrow(TypeError)
  })
})
