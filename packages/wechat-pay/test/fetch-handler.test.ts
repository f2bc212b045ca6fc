// createWechatPayFetchHandler as a Fetch-standard host calls it, over a real socket: Node's HTTP
// server turns the request into a `Request` the way Hono's node adapter would.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWechatPayFetchHandler } from '../src/index'
import { API_V3_KEY, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID } from './support/keys'
import { NOW, paidNotification, RecordingAuth } from './support/notify'

const auth = new RecordingAuth()
const notify = createWechatPayFetchHandler({ auth, verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem }, apiV3Key: API_V3_KEY, now: () => NOW })
let server: Server
let url = ''

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value)
    const response = await notify(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) }))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wxpay/notify`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe('createWechatPayFetchHandler', () => {
  it('applies a notification posted over HTTP and answers 204 with no body', async () => {
    const sent = paidNotification()
    const response = await fetch(url, { method: 'POST', headers: { ...sent.headers, 'content-type': 'application/json' }, body: sent.body })
    expect(response.status).toBe(204)
    expect(await response.text()).toBe('')
    expect(auth.payments).toHaveLength(1)
  })

  it('answers 401 with a FAIL body to a tampered one', async () => {
    const sent = paidNotification()
    const response = await fetch(url, { method: 'POST', headers: sent.headers, body: Buffer.concat([sent.body, Buffer.from('\n')]) })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({ code: 'FAIL', message: 'signature verification failed' })
    expect(auth.payments).toHaveLength(1)
  })

  it('answers 405 to anything but POST, naming POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await notify(new Request('http://127.0.0.1/wxpay/notify', { method }))
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
      expect(await response.json()).toEqual({ code: 'FAIL', message: 'use POST' })
    }
  })

  it('stops reading an endless unsigned body past the limit and answers 413', async () => {
    let pulled = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(1024))
      },
    })
    const response = await notify(new Request('http://127.0.0.1/wxpay/notify', { method: 'POST', body: endless, duplex: 'half' } as RequestInit))
    expect(response.status).toBe(413)
    // 64 KiB of 1 KiB chunks, one more to know it is over, and at most one the stream primed.
    expect(pulled).toBeLessThanOrEqual(66)
    expect(auth.payments).toHaveLength(1)
  })

  it('answers 413 past maxBodyBytes, by Content-Length or by counting, and applies nothing', async () => {
    const small = createWechatPayFetchHandler({ auth, verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem }, apiV3Key: API_V3_KEY, now: () => NOW, maxBodyBytes: 100 })
    const sent = paidNotification()
    expect(sent.body.length).toBeGreaterThan(100)
    const declared = await small(new Request('http://127.0.0.1/n', { method: 'POST', headers: sent.headers, body: sent.body }))
    expect(declared.status).toBe(413)
    const counted = await small(
      new Request('http://127.0.0.1/n', {
        method: 'POST',
        headers: sent.headers,
        body: new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(sent.body)), c.close()) }),
        duplex: 'half',
      } as RequestInit),
    )
    expect(counted.status).toBe(413)
    expect(await counted.json()).toEqual({ code: 'FAIL', message: 'the notification is too large' })
    expect(auth.payments).toHaveLength(1)
    expect(() => createWechatPayFetchHandler({ auth, verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem }, apiV3Key: API_V3_KEY, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/)
  })
})
