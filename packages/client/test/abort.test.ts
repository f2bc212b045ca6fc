// Aborting a sign-in: it rejects `aborted` and leaves no request open at the server (its connections,
// once the idle keep-alive ones are closed, go to zero), whichever way it was waiting; an `authorized`
// already read wins over an abort arriving at that moment.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createScanAuthClient, type StatusUpdate, type TransportOption } from '../src/index'
import { startExample, type Example } from './support/example'
import { startProxy } from './support/proxy'

let example: Example
beforeAll(async () => {
  example = await startExample()
})
afterAll(async () => {
  await example?.server.close()
})

async function noRequestOpen(): Promise<void> {
  await vi.waitFor(async () => expect(await example.openRequests()).toBe(0), { timeout: 3000, interval: 50 })
}

describe('abort', () => {
  for (const transport of ['auto', 'events', 'long-poll', 'poll'] as TransportOption[]) {
    it(`rejects aborted while waiting (${transport}) and leaves no request open`, async () => {
      const client = createScanAuthClient({ baseUrl: example.baseUrl })
      const controller = new AbortController()
      let told: () => void = () => {}
      const waiting = new Promise<void>((ok) => (told = ok))
      const result = client.signIn({
        deviceId: `abort-${transport}`,
        transport,
        pollIntervalMs: 200,
        signal: controller.signal,
        // A long poll answers `pending` only after 25 s: abort it a little after the code.
        onCode: () => void (transport === 'long-poll' && setTimeout(told, 300)),
        onStatus: (s: StatusUpdate) => s.status === 'pending' && told(),
      })
      await waiting
      // The stream and the long poll are open requests; the plain poll sleeps between requests.
      if (transport !== 'poll') expect(await example.openRequests()).toBeGreaterThan(0)
      controller.abort()
      await expect(result).rejects.toMatchObject({ name: 'ScanAuthClientError', code: 'aborted' })
      await noRequestOpen()
    })
  }

  it('rejects aborted while a silent proxy holds the stream, closing it there and at the server', async () => {
    const silent = await startProxy(example.server.url, 'silent')
    try {
      const client = createScanAuthClient({ baseUrl: `${silent.url}/auth` })
      const controller = new AbortController()
      const result = client.signIn({ deviceId: 'silent', signal: controller.signal, onCode: () => setTimeout(() => controller.abort(), 500) })
      await expect(result).rejects.toMatchObject({ code: 'aborted' })
      await vi.waitFor(() => expect(silent.inFlight()).toBe(0), { timeout: 3000, interval: 50 })
      await noRequestOpen()
      expect(silent.requests).toEqual(['/auth/create_scene', '/auth/events'])
    } finally {
      await silent.close()
    }
  })

  it('sends nothing for a signal aborted before the call', async () => {
    let requests = 0
    const client = createScanAuthClient({ baseUrl: example.baseUrl, fetch: (input, init) => (requests++, fetch(input, init)) })
    await expect(client.signIn({ deviceId: 'kiosk', signal: AbortSignal.abort(), onCode: () => {} })).rejects.toMatchObject({ code: 'aborted' })
    expect(requests).toBe(0)
  })

  it('resolves authorized when the abort arrives as the authorized status is read', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    const controller = new AbortController()
    const result = await client.signIn({
      deviceId: 'race',
      signal: controller.signal,
      onCode: (c) => void example.scan(c.sceneStr, 'o_race'),
      // The user closes the window in the same moment the status arrives.
      onStatus: (s) => s.status === 'authorized' && controller.abort(),
    })
    expect(result.status).toBe('authorized')
    await noRequestOpen()
  })

  it('rejects aborted while waiting for a payment', async () => {
    const client = createScanAuthClient({ baseUrl: example.baseUrl })
    const signedIn = await client.signIn({ deviceId: 'buyer', onCode: (c) => void example.scan(c.sceneStr, 'o_buyer_abort') })
    if (signedIn.status !== 'authorized') throw new Error('not authorized')
    const [plan] = await client.listPlans()
    const controller = new AbortController()
    const buying = client.purchase({ sessionToken: signedIn.sessionToken, plan: plan!.id, signal: controller.signal, onCode: () => setTimeout(() => controller.abort(), 100) })
    await expect(buying).rejects.toMatchObject({ code: 'aborted' })
    await noRequestOpen()
  })
})
