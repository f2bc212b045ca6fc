/**
 * Real servers for HTTP tests: a Node request listener served on 127.0.0.1 and a free port, closed
 * with every connection it holds when the test ends.
 *
 * @module
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

/** A server that {@link listen} started. */
export interface Listening {
  /** Its base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string
  /** The Node server itself. */
  server: Server
  /** Stops the server and closes every connection it still holds. */
  close(): Promise<void>
}

/**
 * Serves `listener` (an Express app, a Koa app's `callback()`, any Node request listener) on
 * 127.0.0.1 and a free port.
 */
export async function listen(listener: RequestListener): Promise<Listening> {
  const server = createServer(listener)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, server, close: () => closeServer(server) }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()))
    // Keep-alive connections of fetch would hold the server open until they time out.
    server.closeAllConnections()
  })
}

/**
 * Registers an `afterEach` that closes every server started during the test, and returns `serve`:
 * it serves a listener with {@link listen} and resolves with the base URL. Call it once at the top
 * of a test file.
 *
 * @example
 * ```ts
 * const serve = serverPerTest()
 * it('answers', async () => {
 *   const url = await serve(app)          // an Express app, or koaApp.callback()
 *   expect((await fetch(`${url}/health`)).status).toBe(200)
 * })
 * ```
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

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago), for "cannot connect" tests. */
export async function closedPort(): Promise<number> {
  const { server, close } = await listen(() => {})
  const { port } = server.address() as AddressInfo
  await close()
  return port
}
