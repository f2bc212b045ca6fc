// The example Express server (examples/express) with the emulators, as the client's tests use it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { startServer } from '@scanauth/example-express'
import type { ExampleConfig, RunningServer } from '@scanauth/example-shared'

/** The server and its clock (`ahead` ms past the real time: move it to end a free trial). */
export interface Example {
  server: RunningServer
  clock: { ahead: number }
  /** The client's base URL: `<server>/auth`. */
  baseUrl: string
  /**
   * The emulated phone scans `sceneStr`. Never rejects (tests fire it and forget it, and the server
   * may close before the push returns): a failed push is kept in `scanFailures`.
   */
  scan(sceneStr: string, openid?: string): Promise<void>
  scanFailures: string[]
  /** The emulated phone pays `orderId` at the WeChat Pay emulator. */
  pay(orderId: string): Promise<void>
  /**
   * What is still open at the server: its responses not yet closed plus its sockets that carried a
   * request and stay open once the idle keep-alive ones are closed. 0 means no request of the client is open.
   */
  openRequests(): Promise<number>
}

export async function startExample(overrides: Partial<ExampleConfig> = {}): Promise<Example> {
  const clock = { ahead: 0 }
  const scanFailures: string[] = []
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'memory' },
    wechat: { kind: 'emulator' },
    createScenePerMinute: false,
    reconcileEveryMs: false,
    purgeEveryMs: false,
    log: () => {},
    now: () => Date.now() + clock.ahead,
    ...overrides,
  })
  // Sockets that carried a request, and responses not yet closed, counted from the server's events.
  // (A socket that never carried a request is left out: Node 20's fetch (undici 6) opens a spare
  // connection to the origin after an aborted request, which holds no request; and
  // `getConnections` was seen to keep counting a socket that had closed.)
  const carrying = new Set<Socket>()
  let responses = 0
  server.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    if (!carrying.has(socket)) {
      carrying.add(socket)
      socket.once('close', () => carrying.delete(socket))
    }
    responses++
    res.once('close', () => responses--)
  })
  return {
    server,
    clock,
    baseUrl: `${server.url}/auth`,
    scanFailures,
    async scan(sceneStr, openid = 'o_client_test') {
      try {
        const push = await server.wiring.emulator!.scan({ sceneStr, openid })
        if (push.status !== 200) scanFailures.push(`${sceneStr}: the push answered ${push.status}`)
      } catch (error) {
        scanFailures.push(`${sceneStr}: ${String(error)}`)
      }
    },
    async pay(orderId) {
      await server.wiring.payEmulator!.pay({ outTradeNo: orderId })
    },
    async openRequests() {
      server.server.closeIdleConnections()
      // Let the closes of those idle sockets arrive before counting.
      await new Promise((ok) => setTimeout(ok, 20))
      return responses + carrying.size
    },
  }
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((ok) => server.close(() => ok()))
  return port
}
