/**
 * The long poll (`status?wait=N`) and the event stream (`events`) as a framework adapter serves
 * them (docs/behaviour.md B-wait-2…5), over real sockets: part of {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth } from '@scanauth/core'
import { ManualClock } from '../clock'
import { RecordingQrProvider } from '../qr'
import { fetchJson } from './fetch-json'
import type { HttpHostOptions, HttpRoutesHost } from './host'
import { openEventStream, type EventStream, type SseMessage } from './sse'
import { eventually } from '../waiting'
import { WatchCountingStore } from './watch-counting-store'

/**
 * The first message of an event stream: the reconnection delay, then the scene's status when the
 * client connected, with the status as its id (B-wait-5).
 */
const PENDING_EVENT: SseMessage = { retry: 3000, id: 'pending', event: 'status', data: '{"status":"pending"}', comments: [] }

/** A reconnect as `EventSource` makes it: with the id of the last event it saw. */
const reconnect = (lastEventId: string): RequestInit => ({ headers: { 'last-event-id': lastEventId } })

/** The next message that is not a heartbeat (on a slow machine one may come between two events). */
async function nextEvent(stream: EventStream): Promise<SseMessage | undefined> {
  for (;;) {
    const message = await stream.next()
    if (message === undefined || message.event !== undefined || message.data !== undefined) return message
  }
}

/**
 * Registers the waiting routes' tests for one adapter (called by `describeHttpRoutes`). Each test
 * serves a fresh service on a {@link WatchCountingStore}, so it can wait for a wait to be in place
 * (one subscription) before it scans, and check that a departed client leaves none behind.
 */
export function describeWaitingRoutes(framework: string, host: HttpRoutesHost): void {
  async function setup(hostOptions: HttpHostOptions = {}) {
    const store = new WatchCountingStore()
    const clock = new ManualClock()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
    const url = await host(auth, hostOptions)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const released = () => eventually('the store subscription to be released', () => store.subscriptions === 0)
    return { store, clock, auth, url, sceneStr, released }
  }

  describe(`the ${framework} adapter's long poll and event stream`, () => {
    it('answers a long poll (wait=30) as soon as the scene is scanned, with the poll’s answer (B-wait-2)', async () => {
      const { store, auth, url, sceneStr, released } = await setup()
      const polling = fetchJson(`${url}/auth/status?scene=${sceneStr}&wait=30`)
      await eventually('the long poll to wait', () => store.subscriptions === 1)
      await auth.handleScan({ sceneStr, openid: 'openid-1' })
      // Nothing else would answer it within the test's time limit: wait=30 outlasts it.
      const answer = await polling
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
      expect(answer.headers.get('cache-control')).toBe('no-store')
      expect(answer.body).toMatchObject({ status: 'authorized', session_token: expect.any(String) })
      expect(answer.body).toEqual((await fetchJson(`${url}/auth/status?scene=${sceneStr}`)).body)
      await released()
    })

    it('answers a long poll pending when nothing happens within wait=1', async () => {
      const { url, sceneStr, released } = await setup()
      const answer = await fetchJson(`${url}/auth/status?scene=${sceneStr}&wait=1`)
      expect(answer).toMatchObject({ status: 200, body: { status: 'pending' } })
      await released()
    })

    it('answers 400 {detail} for a wait outside 1–30 whole seconds', async () => {
      const { store, url, sceneStr } = await setup()
      for (const wait of ['0', '31', 'soon', '1.5', '']) {
        const answer = await fetchJson(`${url}/auth/status?scene=${sceneStr}&wait=${wait}`)
        expect(answer, `wait=${wait}`).toMatchObject({ status: 400, body: { detail: expect.any(String) } })
      }
      expect(store.subscribed).toBe(0)
    })

    it('streams the status: pending on connect, the authorized poll after the scan, then the server ends it (B-wait-3)', async () => {
      const { store, auth, url, sceneStr, released } = await setup()
      const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      expect(stream.response.status).toBe(200)
      expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(stream.response.headers.get('cache-control')).toBe('no-store')
      expect(stream.response.headers.get('x-accel-buffering')).toBe('no')
      expect(stream.response.headers.get('content-length')).toBeNull()
      expect(await stream.next()).toEqual(PENDING_EVENT)

      await eventually('the stream to wait', () => store.subscriptions === 1)
      await auth.handleScan({ sceneStr, openid: 'openid-1' })
      const authorized = await nextEvent(stream)
      expect(authorized?.event).toBe('status')
      // The id is the status; retry came once, with the first event.
      expect(authorized?.id).toBe('authorized')
      expect(authorized?.retry).toBeUndefined()
      expect(JSON.parse(authorized?.data ?? 'null')).toEqual((await fetchJson(`${url}/auth/status?scene=${sceneStr}`)).body)
      expect(JSON.parse(authorized?.data ?? 'null')).toMatchObject({ status: 'authorized', session_token: expect.any(String) })
      expect(await stream.next(), 'the server ends the stream after a final status').toBeUndefined()
      await released()
    })

    it('sends heartbeat comments while nothing changes (heartbeatMs)', async () => {
      const { url, sceneStr, released } = await setup({ heartbeatMs: 50 })
      const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      expect(await stream.next()).toEqual(PENDING_EVENT)
      expect(await stream.next()).toEqual({ comments: ['heartbeat'] })
      expect(await stream.next()).toEqual({ comments: ['heartbeat'] })
      stream.abort()
      await released()
    })

    it('leaves nothing behind when the client aborts mid-stream (B-wait-4)', async () => {
      const { store, auth, url, sceneStr, released } = await setup()
      const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      expect(await stream.next()).toEqual(PENDING_EVENT)
      await eventually('the stream to wait', () => store.subscriptions === 1)
      stream.abort()
      await released()
      // The scene is untouched, and the next client is served as usual.
      expect(await auth.handleScan({ sceneStr, openid: 'openid-1' })).toMatchObject({ result: 'authorized' })
      const again = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      expect(JSON.parse((await again.next())?.data ?? 'null')).toMatchObject({ status: 'authorized' })
      expect(await again.next()).toBeUndefined()
    })

    it('answers a reconnect (Last-Event-ID) to a pending scene with a new stream: retry, then the current status (B-wait-5)', async () => {
      const { store, url, sceneStr, released } = await setup()
      const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`, reconnect('pending'))
      expect(stream.response.status).toBe(200)
      expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(await stream.next()).toEqual(PENDING_EVENT)
      await eventually('the stream to wait', () => store.subscriptions === 1)
      stream.abort()
      await released()
    })

    it('answers a reconnect (Last-Event-ID) to a scene that ended as the client last saw it 204 without a body, so EventSource stops; one that ended while it was away gets the end (B-wait-5)', async () => {
      const { store, clock, auth, url, sceneStr } = await setup()
      await auth.handleScan({ sceneStr, openid: 'openid-1' })
      // The first connection after the end still gets the final status, with its id, and the end (B-wait-3).
      const first = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      const final = await first.next()
      expect(final).toMatchObject({ retry: 3000, id: 'authorized', event: 'status' })
      expect(await first.next()).toBeUndefined()
      // EventSource comes back with that id: it is told to stop.
      for (const method of ['GET', 'HEAD']) {
        const again = await fetch(`${url}/auth/events?scene=${sceneStr}`, { method, headers: { accept: 'text/event-stream', 'last-event-id': final?.id ?? '' } })
        expect(again.status, method).toBe(204)
        expect(again.headers.get('content-type'), method).toBeNull()
        expect(await again.text(), method).toBe('')
      }
      // A client that last saw `pending` missed the scan while it was away: a 204 would hide it, so
      // it gets the final status and the end.
      const missed = await openEventStream(`${url}/auth/events?scene=${sceneStr}`, reconnect('pending'))
      expect(await missed.next()).toMatchObject({ id: 'authorized', event: 'status' })
      expect(await missed.next()).toBeUndefined()
      // An expired scene the client last saw expired is as ended; one it last saw pending gets `expired`.
      const { sceneStr: lapsed } = await auth.createScene({ deviceId: 'tv-2' })
      clock.advanceSeconds(301)
      const lapsedMissed = await openEventStream(`${url}/auth/events?scene=${lapsed}`, reconnect('pending'))
      expect(await lapsedMissed.next()).toMatchObject({ id: 'expired', event: 'status' })
      expect(await lapsedMissed.next()).toBeUndefined()
      const expired = await fetch(`${url}/auth/events?scene=${lapsed}`, reconnect('expired'))
      expect(expired.status).toBe(204)
      expect(await expired.text()).toBe('')
      // An empty Last-Event-ID is no reconnect (EventSource sends none before it has seen an id).
      const fresh = await openEventStream(`${url}/auth/events?scene=${lapsed}`, reconnect(''))
      expect(fresh.response.status).toBe(200)
      expect(await fresh.next()).toEqual({ retry: 3000, id: 'expired', event: 'status', data: '{"status":"expired"}', comments: [] })
      expect(await fresh.next()).toBeUndefined()
      expect(store.subscribed, 'an ended scene needs no wait').toBe(0)
      // An unknown scene is 404 whether or not it is a reconnect.
      const unknown = await fetchJson(`${url}/auth/events?scene=pc_${'0'.repeat(32)}`, reconnect('pending'))
      expect(unknown).toMatchObject({ status: 404, body: { detail: expect.any(String) } })
    })

    it('leaves nothing behind when the client abandons a long poll (B-wait-4)', async () => {
      const { store, url, sceneStr, released } = await setup()
      const client = new AbortController()
      const polling = fetch(`${url}/auth/status?scene=${sceneStr}&wait=30`, { signal: client.signal })
      await eventually('the long poll to wait', () => store.subscriptions === 1)
      client.abort()
      await expect(polling).rejects.toThrow()
      await released()
      expect(store.subscribed).toBe(1)
    })

    it('answers a final scene with one event and the end; an unknown scene 404 {detail}; HEAD with the headers only', async () => {
      const { store, auth, url, sceneStr } = await setup()
      const unknown = await fetchJson(`${url}/auth/events?scene=pc_${'0'.repeat(32)}`)
      expect(unknown).toMatchObject({ status: 404, body: { detail: expect.any(String) } })
      expect(unknown.headers.get('content-type')).toMatch(/^application\/json/)
      expect((await fetchJson(`${url}/auth/events`)).status).toBe(400)

      const head = await fetch(`${url}/auth/events?scene=${sceneStr}`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(await head.text()).toBe('')

      await auth.handleScan({ sceneStr, openid: 'openid-1' })
      const stream = await openEventStream(`${url}/auth/events?scene=${sceneStr}`)
      expect(JSON.parse((await stream.next())?.data ?? 'null')).toMatchObject({ status: 'authorized' })
      expect(await stream.next()).toBeUndefined()
      expect(store.subscribed, 'a final scene needs no wait').toBe(0)
    })
  })
}
