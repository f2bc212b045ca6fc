// Waiting for a scene to leave pending (docs/behaviour.md B-wait-1…4): waitForStatus, the long poll
// and the event stream of createHttpHandler, on MemoryStore with the real clock (expiry is woken by
// a timer at the deadline, so these waits are short but real).
import { describe, expect, it } from 'vitest'
import { eventually, RecordingQrProvider, WatchCountingStore } from '@scanauth/testkit'
import { createHttpHandler, createScanAuth, MemoryStore, type Store } from '@scanauth/core'
import { type LoadQuery, type LoadResult } from '@scanauth/core/store'

/** A store that counts its subscriptions (testkit's) and its loads, to show what a wait costs. */
class CountingStore extends WatchCountingStore {
  loads = 0
  override load(query: LoadQuery): Promise<LoadResult> {
    this.loads++
    return super.load(query)
  }
}

function setup(store: Store = new MemoryStore(), sceneTtlSeconds = 300) {
  const auth = createScanAuth({ store, qr: new RecordingQrProvider(), sceneTtlSeconds })
  return { auth, store }
}

async function collect(events: AsyncIterable<string>): Promise<string[]> {
  const chunks: string[] = []
  for await (const chunk of events) chunks.push(chunk)
  return chunks
}

describe('waitForStatus', () => {
  it('answers as soon as a scan authorizes the scene', async () => {
    const { auth } = setup()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 60_000 })
    setTimeout(() => void auth.handleScan({ sceneStr, openid: 'alice' }), 20)
    expect(await waiting).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
  })

  it('answers at once for a scene that is no longer pending, and many waiters of one scene share one subscription', async () => {
    const store = new CountingStore()
    const { auth } = setup(store)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const waits = Array.from({ length: 20 }, () => auth.waitForStatus(sceneStr, { timeoutMs: 60_000 }))
    await eventually('the wait to subscribe', () => store.subscriptions === 1)
    await auth.handleScan({ sceneStr, openid: 'alice' })
    const answers = await Promise.all(waits)
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set(['authorized']))
    expect(store.subscriptions).toBe(0)
    expect(await auth.waitForStatus(sceneStr, { timeoutMs: 60_000 })).toMatchObject({ status: 'authorized' })
  })

  it('wakes at the scene deadline with expired, by a timer and not by a poll', async () => {
    const store = new CountingStore()
    const { auth } = setup(store, 1)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const loadsBefore = store.loads
    expect(await auth.waitForStatus(sceneStr, { timeoutMs: 60_000 })).toEqual({ status: 'expired' })
    // The first read and the one at the deadline (then the expiry's commit reads it again at most
    // once); a wait that polled through the second would read far more.
    expect(store.loads - loadsBefore).toBeLessThanOrEqual(3)
  })

  it('refuses a string that cannot be a scene before it subscribes or reads', async () => {
    const store = new CountingStore()
    const { auth } = setup(store)
    await expect(auth.waitForStatus('garbage', { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'scene_not_found' })
    await expect(auth.waitForStatus('', { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'invalid_request' })
    expect({ subscribed: store.subscribed, loads: store.loads }).toEqual({ subscribed: 0, loads: 0 })
  })

  it('answers pending when the time is up without a change', async () => {
    const { auth } = setup()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect(await auth.waitForStatus(sceneStr, { timeoutMs: 30 })).toEqual({ status: 'pending' })
  })

  it('refuses an unknown scene (404) and a bad timeout (400)', async () => {
    const { auth } = setup()
    await expect(auth.waitForStatus(`pc_${'0'.repeat(32)}`, { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'scene_not_found', status: 404 })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    for (const timeoutMs of [0, -1, 1.5, 600_001, Number.NaN]) {
      await expect(auth.waitForStatus(sceneStr, { timeoutMs })).rejects.toMatchObject({ code: 'invalid_request' })
    }
  })

  it('1,000 aborted waits leave no waiter, timer or subscription behind', async () => {
    const store = new CountingStore()
    const { auth } = setup(store)
    const scenes = await Promise.all(Array.from({ length: 10 }, () => auth.createScene({ deviceId: 'tv' })))
    const controllers = Array.from({ length: 1000 }, () => new AbortController())
    const waits = controllers.map((c, i) => auth.waitForStatus((scenes[i % 10] as { sceneStr: string }).sceneStr, { timeoutMs: 60_000, signal: c.signal }))
    await eventually('the wait to subscribe', () => store.subscriptions === 1)
    for (const c of controllers) c.abort(new Error('client gone'))
    const outcomes = await Promise.allSettled(waits)
    expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as Error).message === 'client gone')).toBe(true)
    expect(store.subscriptions).toBe(0)
    // An aborted signal is refused before anything is read.
    const gone = new AbortController()
    gone.abort(new Error('already gone'))
    await expect(auth.waitForStatus((scenes[0] as { sceneStr: string }).sceneStr, { timeoutMs: 1000, signal: gone.signal })).rejects.toThrow('already gone')
  })
})

describe('HTTP: the long poll and the event stream', () => {
  it('status?wait=N waits for the scan; without wait it is the plain poll; a bad wait is 400', async () => {
    const { auth } = setup()
    const handle = createHttpHandler(auth)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect(await handle({ method: 'GET', path: '/auth/status', query: { scene: sceneStr } })).toMatchObject({ status: 200, body: { status: 'pending' } })
    const waiting = handle({ method: 'GET', path: '/auth/status', query: { scene: sceneStr, wait: '30' } })
    setTimeout(() => void auth.handleScan({ sceneStr, openid: 'alice' }), 20)
    expect(await waiting).toMatchObject({ status: 200, body: { status: 'authorized', session_token: expect.any(String) } })
    for (const wait of ['0', '31', 'x', '1.5', '', '-1']) {
      expect(await handle({ method: 'GET', path: '/auth/status', query: { scene: sceneStr, wait } })).toMatchObject({ status: 400 })
    }
  })

  it('events: a status event on connect, heartbeats while pending, the final status, then the end', async () => {
    const { auth } = setup()
    const handle = createHttpHandler(auth, { heartbeatMs: 20 })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const res = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr } })
    expect(res).toMatchObject({ status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' } })
    setTimeout(() => void auth.handleScan({ sceneStr, openid: 'alice' }), 70)
    const chunks = await collect(res?.events as AsyncIterable<string>)
    // retry once, at the start; the status as each event's id (B-wait-5).
    expect(chunks[0]).toBe('retry: 3000\nid: pending\nevent: status\ndata: {"status":"pending"}\n\n')
    expect(chunks.slice(1, -1).length).toBeGreaterThan(0)
    expect(chunks.slice(1, -1).every((c) => c === ': heartbeat\n\n')).toBe(true)
    expect(chunks.at(-1)).toMatch(/^id: authorized\nevent: status\ndata: \{"status":"authorized","session_token":"[^"]+","authorization":\{/)
  })

  it('events: an unknown scene is a plain 404; a final status is one event; HEAD has no stream', async () => {
    const { auth } = setup()
    const handle = createHttpHandler(auth)
    expect(await handle({ method: 'GET', path: '/auth/events', query: { scene: `pc_${'0'.repeat(32)}` } })).toMatchObject({ status: 404, body: { detail: expect.any(String) } })
    expect(await handle({ method: 'GET', path: '/auth/events', query: {} })).toMatchObject({ status: 400 })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'alice' })
    const done = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr } })
    expect(await collect(done?.events as AsyncIterable<string>)).toEqual([expect.stringMatching(/^retry: 3000\nid: authorized\nevent: status\ndata: \{"status":"authorized"/)])
    const head = await handle({ method: 'HEAD', path: '/auth/events', query: { scene: sceneStr } })
    expect(head).toMatchObject({ status: 200 })
    expect(head?.events).toBeUndefined()
  })

  it('events: a reconnect (Last-Event-ID, any case) to a scene that ended with the status it names is 204 with no body; one that ended otherwise gets that status; to a pending one a new stream (B-wait-5)', async () => {
    const store = new CountingStore()
    const { auth } = setup(store)
    const handle = createHttpHandler(auth)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const client = new AbortController()
    const pending = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr }, headers: { 'Last-Event-ID': 'pending' }, signal: client.signal })
    expect(pending).toMatchObject({ status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
    const reading = collect(pending?.events as AsyncIterable<string>)
    await eventually('the wait to subscribe', () => store.subscriptions === 1)
    client.abort()
    expect(await reading).toEqual(['retry: 3000\nid: pending\nevent: status\ndata: {"status":"pending"}\n\n'])

    await auth.handleScan({ sceneStr, openid: 'alice' })
    for (const headers of [{ 'Last-Event-ID': 'authorized' }, { 'last-event-id': 'authorized' }]) {
      const ended = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr }, headers })
      expect(ended).toEqual({ status: 204, headers: { 'cache-control': 'no-store' } })
    }
    // The scan came while the client was away (it last saw `pending`): a 204 would hide it, so it
    // gets the final status and the end, like a first connection.
    const missed = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr }, headers: { 'last-event-id': 'pending' } })
    expect(await collect(missed?.events as AsyncIterable<string>)).toEqual([expect.stringMatching(/^retry: 3000\nid: authorized\nevent: status\n/)])
    expect(await handle({ method: 'HEAD', path: '/auth/events', query: { scene: sceneStr }, headers: { 'last-event-id': 'authorized' } })).toMatchObject({ status: 204 })
    // A first connection (no Last-Event-ID, or an empty one) still gets the final status and the end (B-wait-3).
    for (const headers of [{}, { 'last-event-id': '' }]) {
      const first = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr }, headers })
      expect(await collect(first?.events as AsyncIterable<string>)).toEqual([expect.stringMatching(/^retry: 3000\nid: authorized\nevent: status\n/)])
    }
  })

  it('events: a client that goes away ends the stream and leaves nothing behind', async () => {
    const store = new CountingStore()
    const { auth } = setup(store)
    const handle = createHttpHandler(auth)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const client = new AbortController()
    const res = await handle({ method: 'GET', path: '/auth/events', query: { scene: sceneStr }, signal: client.signal })
    const reading = collect(res?.events as AsyncIterable<string>)
    await eventually('the wait to subscribe', () => store.subscriptions === 1)
    client.abort()
    expect(await reading).toEqual(['retry: 3000\nid: pending\nevent: status\ndata: {"status":"pending"}\n\n'])
    expect(store.subscriptions).toBe(0)
  })
})
