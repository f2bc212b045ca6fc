// createFetchHandler's event stream and long poll, called directly with Fetch `Request`s (no host in
// between), for what hosts differ in: whether they abort `request.signal` when the client goes away,
// or only cancel the response body (docs/behaviour.md B-wait-4). Over real sockets, the same routes
// run in fetch-routes.test.ts (testkit's route suite on Hono).
import { expect, it } from 'vitest'
import { createFetchHandler, createScanAuth } from '@scanauth/core'
import { eventually, RecordingQrProvider, WatchCountingStore } from '@scanauth/testkit'

const PENDING_EVENT = 'retry: 3000\nid: pending\nevent: status\ndata: {"status":"pending"}\n\n'

async function setup() {
  const store = new WatchCountingStore()
  const auth = createScanAuth({ store, qr: new RecordingQrProvider() })
  const handler = createFetchHandler(auth)
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  return { store, auth, handler, sceneStr }
}

it('ends the wait of an event stream whose body is cancelled, though the request signal never aborts', async () => {
  const { store, handler, sceneStr } = await setup()
  const res = await handler(new Request(`http://app.test/auth/events?scene=${sceneStr}`))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toBe(PENDING_EVENT)
  // The next read pulls from the stream, which waits for the scene to change.
  const reading = reader.read()
  await eventually('the stream to wait', () => store.subscriptions === 1)
  await reader.cancel()
  expect(await reading).toEqual({ done: true, value: undefined })
  await eventually('the store subscription to be released', () => store.subscriptions === 0)
})

it('ends the event stream when the request signal aborts, and streams each change as it comes', async () => {
  const { store, auth, handler, sceneStr } = await setup()
  const client = new AbortController()
  const res = await handler(new Request(`http://app.test/auth/events?scene=${sceneStr}`, { signal: client.signal }))
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toBe(PENDING_EVENT)
  const reading = reader.read()
  await eventually('the stream to wait', () => store.subscriptions === 1)
  client.abort()
  // The wait ends, the iteration with it, and the body closes: nothing more to read.
  expect(await reading).toEqual({ done: true, value: undefined })
  await eventually('the store subscription to be released', () => store.subscriptions === 0)
  // The scene is untouched: a scan still authorizes it, and a new stream reports that and ends.
  await auth.handleScan({ sceneStr, openid: 'openid-1' })
  const after = await (await handler(new Request(`http://app.test/auth/events?scene=${sceneStr}`))).text()
  expect(after).toMatch(/^retry: 3000\nid: authorized\nevent: status\ndata: \{"status":"authorized","session_token":"[^"]+"/)
})

it('answers a reconnect (Last-Event-ID) to an ended scene 204 with no body (B-wait-5)', async () => {
  const { store, auth, handler, sceneStr } = await setup()
  await auth.handleScan({ sceneStr, openid: 'openid-1' })
  const res = await handler(new Request(`http://app.test/auth/events?scene=${sceneStr}`, { headers: { 'last-event-id': 'authorized' } }))
  expect(res.status).toBe(204)
  expect(res.body).toBeNull()
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('content-type')).toBeNull()
  expect(store.subscribed).toBe(0)
})

it('ends a long poll when the request signal aborts', async () => {
  const { store, handler, sceneStr } = await setup()
  const client = new AbortController()
  const polling = handler(new Request(`http://app.test/auth/status?scene=${sceneStr}&wait=30`, { signal: client.signal }))
  await eventually('the long poll to wait', () => store.subscriptions === 1)
  client.abort()
  // Nobody reads this answer; what matters is that the wait ended well before its 30 s.
  await polling
  expect(store.subscriptions).toBe(0)
})
