// Serving a Hono app (or any Fetch handler) with @hono/node-server on 127.0.0.1 and a free port, for
// the Fetch handler's tests over real sockets. Servers close, with their connections, after each test.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'
import { afterEach } from 'vitest'

/** Anything with a Fetch-standard `fetch`, such as a Hono app. */
export interface FetchApp {
  /** `bindings`: what @hono/node-server hands on (its `incoming` request, whose socket has the client's address). */
  fetch(request: Request, bindings?: object): Response | Promise<Response>
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
      const server = serve({ fetch: (request, bindings) => app.fetch(request, bindings), port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
        resolve(`http://127.0.0.1:${info.port}`)
      }) as Server
      open.push(server)
    })
}

/**
 * The connection's address of each request, for the Fetch handler's `clientAddress` option (a
 * `Request` carries none): the app's route calls `remember(c)` as it hands the request on, and the
 * handler reads the address back when a route is limited per address (create_scene, purchase).
 */
export function connectionAddresses(): { clientAddress: (request: Request) => string | undefined; remember: (c: Context) => Request } {
  const addresses = new WeakMap<Request, string>()
  return {
    clientAddress: (request) => addresses.get(request),
    remember(c) {
      const address = getConnInfo(c).remote.address
      if (address !== undefined) addresses.set(c.req.raw, address)
      return c.req.raw
    },
  }
}
