// Expired codes and rate limits: a short scene lifetime (the example's `sceneTtlSeconds`) shows the
// refresh and its cap; the example's `createScenePerMinute` shows 429 + Retry-After (B-rate-1…8).
import { afterEach, describe, expect, it } from 'vitest'
import { createScanAuthClient, type SceneCode } from '../src/index'
import { startExample, type Example } from './support/example'

const running: Example[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.server.close()))
})

async function example(overrides: Parameters<typeof startExample>[0]): Promise<Example> {
  const started = await startExample(overrides)
  running.push(started)
  return started
}

/** A fetch that records `<path> <status>` of every answer. */
function recordingFetch(log: string[]) {
  return async (input: string, init: RequestInit) => {
    const response = await fetch(input, init)
    log.push(`${new URL(input).pathname} ${response.status}`)
    return response
  }
}

describe('expired codes', () => {
  for (const transport of ['auto', 'long-poll', 'poll'] as const) {
    it(`refreshes an expired code maxRefreshes times, then rejects expired (${transport})`, async () => {
      const server = await example({ sceneTtlSeconds: 1 })
      const client = createScanAuthClient({ baseUrl: server.baseUrl })
      const codes: SceneCode[] = []
      const error = await client.signIn({ deviceId: 'kiosk', maxRefreshes: 2, transport, pollIntervalMs: 200, onCode: (c) => codes.push(c) }).catch((e: unknown) => e)
      expect(error).toMatchObject({ name: 'ScanAuthClientError', code: 'expired' })
      expect(codes.map((c) => c.refresh)).toEqual([0, 1, 2])
      expect(new Set(codes.map((c) => c.sceneStr)).size).toBe(3)
    })
  }

  it('signs in with a refreshed code', async () => {
    const server = await example({ sceneTtlSeconds: 1 })
    const client = createScanAuthClient({ baseUrl: server.baseUrl })
    const codes: SceneCode[] = []
    const result = await client.signIn({
      deviceId: 'kiosk',
      onCode(code) {
        codes.push(code)
        if (code.refresh === 1) void server.scan(code.sceneStr, 'o_refreshed')
      },
    })
    expect(result).toMatchObject({ status: 'authorized', sceneStr: codes[1]?.sceneStr })
    expect(codes).toHaveLength(2)
  })

  it('with maxRefreshes 0, rejects expired after the first code', async () => {
    const server = await example({ sceneTtlSeconds: 1 })
    const client = createScanAuthClient({ baseUrl: server.baseUrl })
    const codes: SceneCode[] = []
    await expect(client.signIn({ deviceId: 'kiosk', maxRefreshes: 0, onCode: (c) => codes.push(c) })).rejects.toMatchObject({ code: 'expired' })
    expect(codes).toHaveLength(1)
  })
})

describe('rate limits', () => {
  it('waits out a short Retry-After on create_scene and goes on', async () => {
    // The server's clock runs 1.5 s before the end of a minute: the second scene of this address is
    // refused until the next window, with Retry-After 2.
    const start = Date.now()
    const base = Date.parse('2026-01-01T00:00:58.500Z')
    const server = await example({ createScenePerMinute: 1, now: () => base + (Date.now() - start) })
    const log: string[] = []
    const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(log) })
    const signIn = () => client.signIn({ deviceId: 'kiosk', onCode: (c) => void server.scan(c.sceneStr, 'o_limited') })
    expect((await signIn()).status).toBe('authorized')
    expect((await signIn()).status).toBe('authorized')
    expect(log.filter((line) => line.startsWith('/auth/create_scene'))).toEqual(['/auth/create_scene 200', '/auth/create_scene 429', '/auth/create_scene 200'])
  })

  it('rejects rate_limited with retryAfterSeconds when the wait is longer than the client waits', async () => {
    const at = Date.parse('2026-01-01T00:00:30.000Z')
    const server = await example({ createScenePerMinute: 1, now: () => at })
    const client = createScanAuthClient({ baseUrl: server.baseUrl, maxRateLimitWaitSeconds: 10 })
    const first = await client.signIn({ deviceId: 'kiosk', onCode: (c) => void server.scan(c.sceneStr, 'o_limited_2') })
    expect(first.status).toBe('authorized')
    const error = await client.signIn({ deviceId: 'kiosk', onCode: () => {} }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 30, detail: expect.stringMatching(/Too many/) })
  })
})
