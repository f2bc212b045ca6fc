// Serving a Hono app (or any Fetch handler) with @hono/node-server on 127.0.0.1 and a free port, for
// the Fetch handler's tests over real sockets. Servers close, with their connections, after each test.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach } from 'vitest'

/** Anything with a Fetch-standard `fetch`, such as a Hono app. */
export interface FetchApp {
  fetch(request: Request): Response | Promise<Response>
}

/**
 * Registers an `afterEach` that closes every server started during the test, and returns `serveApp`:
 * it serves an app and resolves with its base URL (no trailing slash). Call it once per test file.
 */
export function honoServerPerTest(): (app: FetchApp) => Promise<string> {
  const open: Server[] = []
  afterEach(async () => {
    await Promise.all(
      open.splice(0).map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            // fetch keeps connections alive; they would hold the server open until they time out.
            server.closeAllConnections()
          }),
      ),
    )
  })
  return (app) =>
    new Promise((resolve) => {
      const server = serve({ fetch: (request) => app.fetch(request), port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
        resolve(`http://127.0.0.1:${info.port}`)
      }) as Server
      open.push(server)
    })
}
