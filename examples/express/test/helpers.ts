/**
 * Helpers the Express and Koa tests share (the Koa tests import this file by a relative path): a real
 * server on 127.0.0.1 and an ephemeral port, a QR provider for tests that need no platform, and a
 * port nothing listens on.
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { QrProvider } from '@scanauth/core'

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
