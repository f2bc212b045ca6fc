/**
 * Helpers the Express and Koa tests share (the Koa tests import this file by a relative path): a real
 * server on 127.0.0.1 and an ephemeral port, a QR provider for tests that need no platform, a port
 * nothing listens on, and the steps of the sign-in flow every suite walks through.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect } from 'vitest'
import { createScanAuth, MemoryStore, type QrProvider, type ScanAuth } from '@scanauth/core'
import { computeSignature, createWechatCallback } from '@scanauth/wechat'

export interface Listening {
  url: string
  server: Server
  close(): Promise<void>
}

/** Serves `listener` on 127.0.0.1 and a free port. */
export async function listen(listener: RequestListener): Promise<Listening> {
  const server = createServer(listener)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, server, close: () => closeServer(server) }
}

/** Closes a server and every connection it still holds. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()))
    server.closeAllConnections()
  })
}

/**
 * Registers an `afterEach` that closes every server started during the test, and returns `serve`:
 * serves a listener (an Express app, a Koa app's `callback()`) and resolves with its base URL. Call
 * once at the top of a test file.
 */
export function serverPerTest(): (listener: RequestListener) => Promise<string> {
  const open: Listening[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()))
  })
  return async (listener) => {
    const l = await listen(listener)
    open.push(l)
    return l.url
  }
}

/** A service on a fresh MemoryStore and `qr` (by default {@link testQr}). */
export function memoryAuth(qr: QrProvider = testQr()): ScanAuth {
  return createScanAuth({ store: new MemoryStore(), qr })
}

/** A QR provider that answers a made-up address, or fails with `reason` when given one. */
export function testQr(reason?: string): QrProvider {
  return {
    async createQr({ sceneStr }) {
      if (reason !== undefined) throw new Error(reason)
      return { url: `https://qr.example.test/${sceneStr}.png` }
    },
  }
}

/** A port on 127.0.0.1 that nothing listens on (it was just free). */
export async function closedPort(): Promise<number> {
  const { server, close } = await listen(() => {})
  const { port } = server.address() as AddressInfo
  await close()
  return port
}

/** `fetch` and the parsed JSON body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
export async function fetchJson(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, init)
  const text = await res.text()
  let body: unknown = text
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body }
}

/** A JSON POST. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetchJson(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

/** `POST /auth/create_scene` for `deviceId`, which must answer 200 with a scene that polls as pending. Returns the answer's body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
export async function createPendingScene(url: string, deviceId: string): Promise<any> {
  const created = await postJson(`${url}/auth/create_scene`, { device_id: deviceId })
  expect(created.status).toBe(200)
  expect((await fetchJson(`${url}/auth/status?scene=${created.body.scene_str}`)).body).toEqual({ status: 'pending' })
  return created.body
}

/**
 * Polls `scene`, which must be authorized by now with the free trial (a time authorization): a JSON
 * answer that is never cached, with the session token. Returns the token and its `authorization` header.
 */
export async function pollAuthorized(url: string, scene: string): Promise<{ token: string; bearer: { authorization: string } }> {
  const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
  expect(polled.status).toBe(200)
  expect(polled.headers.get('content-type')).toMatch(/^application\/json/)
  expect(polled.headers.get('cache-control')).toBe('no-store')
  expect(polled.body).toEqual({
    status: 'authorized',
    session_token: expect.any(String),
    authorization: { type: 'time', end_at: expect.any(String), remaining_points: 0 },
  })
  const token = polled.body.session_token as string
  return { token, bearer: { authorization: `Bearer ${token}` } }
}

/**
 * Reads the session behind `bearer`, which must be on `deviceId` with a time authorization, then
 * consumes once with it (`ok`). Returns the session's body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
export async function useSession(url: string, bearer: { authorization: string }, deviceId: string): Promise<any> {
  const session = await fetchJson(`${url}/auth/session`, { headers: bearer })
  expect(session.status).toBe(200)
  expect(session.body).toMatchObject({ device_id: deviceId, authorization: { type: 'time' } })
  expect((await postJson(`${url}/auth/consume`, {}, bearer)).body).toMatchObject({ status: 'ok', authorization: { type: 'time' } })
  return session.body
}

/** The Official Account the callback tests sign for (plain mode). */
export const CALLBACK_ACCOUNT = { token: 'test-token', appId: 'wx0000test0000app' }

/**
 * The real WeChat callback over a real service, and what WeChat would send it: a signed plain-mode
 * `SCAN` push for a fresh pending scene, and a signed URL verification. A middleware that hands the
 * callback the raw body intact gets `success` and leaves the scene authorized.
 */
export async function realCallback() {
  const auth = memoryAuth()
  const callback = createWechatCallback({ auth, ...CALLBACK_ACCOUNT, reply: false })
  const sceneStr = (await auth.createScene({ deviceId: 'tv' })).sceneStr
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signed = (nonce: string) => `signature=${computeSignature(CALLBACK_ACCOUNT.token, timestamp, nonce)}&timestamp=${timestamp}&nonce=${nonce}`
  const xml =
    `<xml><ToUserName><![CDATA[gh_test]]></ToUserName><FromUserName><![CDATA[openid-cb]]></FromUserName>` +
    `<CreateTime>${timestamp}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[SCAN]]></Event>` +
    `<EventKey><![CDATA[${sceneStr}]]></EventKey></xml>`
  return {
    callback,
    xml,
    /** A fresh signed query string for a push (each push needs its own nonce). */
    pushQuery: () => signed(randomBytes(6).toString('hex')),
    verifyQuery: `${signed('v1')}&echostr=echo-42`,
    /** Whether the scene was processed (the push reached core with its body intact). */
    scanned: async () => (await auth.getStatus(sceneStr)).status === 'authorized',
  }
}
