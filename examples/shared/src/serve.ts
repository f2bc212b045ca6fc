/**
 * Serving an example app: listening, telling the emulator where the callback is, graceful shutdown,
 * and the `main` of both `server.ts` files.
 *
 * @module
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConfigError, configFromEnv, DEFAULT_HOST, type ExampleConfig } from './config'
import type { Wiring } from './wiring'

/** A started example server. */
export interface RunningServer {
  /** Where to open the demo page, e.g. `http://localhost:3000`. */
  url: string
  port: number
  server: Server
  wiring: Wiring
  /** Stops accepting requests, lets the ones in flight finish (2 s at most), then closes the emulator and the store. */
  close(): Promise<void>
}

/**
 * Serves `listener` as configured (on `127.0.0.1` unless `config.host` says otherwise), tells the
 * emulator where we are, and logs the address. A port in use or an address that is not this
 * machine's fails with a {@link ConfigError} naming the variable to change.
 */
export async function listenAndWire(listener: RequestListener, wiring: Wiring, config: ExampleConfig): Promise<RunningServer> {
  const server = createServer(listener)
  const host = config.host ?? DEFAULT_HOST
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', (error) => fail(listenError(error, config.port, host)))
      server.listen(config.port, host, () => ok())
    })
    const { port } = server.address() as AddressInfo
    const anyHost = host === '0.0.0.0' || host === '::'
    const reachable = anyHost ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
    await wiring.listening(`http://${reachable}:${port}`)
    const url = `http://${anyHost ? 'localhost' : reachable}:${port}`
    // Every interface: the demo routes (an emulated scan signs anyone in) face the network. Say so.
    wiring.log(`listening on ${url}${anyHost ? ` (every interface, HOST=${host}: reachable from other machines)` : ''}`)
    let closing: Promise<void> | undefined
    return {
      url,
      port,
      server,
      wiring,
      close: () =>
        (closing ??= (async () => {
          await stopServer(server)
          await wiring.close()
        })()),
    }
  } catch (error) {
    await stopServer(server).catch(() => {})
    await wiring.close()
    throw error
  }
}

/** A listen failure in words a person can act on: which variable to set. Other errors pass unchanged. */
function listenError(error: Error & { code?: string }, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE') return new ConfigError(`port ${port} on ${host} is already in use: set PORT to another port (PORT=0 picks a free one)`)
  if (error.code === 'EADDRNOTAVAIL') return new ConfigError(`${host} is not an address of this machine: set HOST to one of its addresses (default ${DEFAULT_HOST})`)
  if (error.code === 'EACCES') return new ConfigError(`not allowed to listen on port ${port} on ${host}: set PORT to a port above 1023`)
  if (error.code === 'ENOTFOUND') return new ConfigError(`HOST ${host} does not resolve to an address of this machine`)
  return error
}

function stopServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve()
  return new Promise((ok, fail) => {
    const force = setTimeout(() => server.closeAllConnections(), 2000)
    server.close((error) => {
      clearTimeout(force)
      if (error) fail(error)
      else ok()
    })
    server.closeIdleConnections()
  })
}

/**
 * The body of `server.ts`: starts from the environment, and on SIGINT or SIGTERM closes the server,
 * the emulator and the store and exits 0 (another signal a second later exits at once with 1). A configuration
 * error is printed and exits 1.
 */
export async function main(start: (config: ExampleConfig) => Promise<RunningServer>): Promise<void> {
  let running: RunningServer
  try {
    running = await start(configFromEnv())
  } catch (error) {
    console.error(`scanauth example failed to start: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
  let stoppingSince: number | undefined
  const stop = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches npm, tsx and this process at once, and they pass it on: a repeat within a
    // second is that echo. A later one means "stop now".
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince > 1000) process.exit(1)
      return
    }
    stoppingSince = Date.now()
    running.wiring.log(`${signal}: shutting down`)
    running.close().then(
      () => {
        running.wiring.log('stopped')
        process.exit(0)
      },
      (error: unknown) => {
        console.error(`shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
