/**
 * Listening, for both emulators (the Official Account's and WeChat Pay's): a plain `node:http`
 * server on `host:port` whose handler's failures are answered by `fail` (or end the response when
 * its head is already out), the base URL it can be reached at, and closing it.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Starts `handle` on `host:port` (0 picks a free port) and resolves with the server and its base URL. */
export async function listenOn(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  fail: (res: ServerResponse, message: string) => void,
  port: number,
  host: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) fail(res, `emulator error: ${error instanceof Error ? error.message : String(error)}`)
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return { server, url: `http://${hostPart}:${address.port}` }
}

/** Stops `server` and resolves once it is closed, ending its open connections (hanging requests and keep-alive sockets would hold it open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}
