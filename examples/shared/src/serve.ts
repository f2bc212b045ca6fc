/**
 * Serving an example app: listening, telling the emulator where the callback is, graceful shutdown,
 * and the `main` of both `server.ts` files.
 *
 * @module
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { configFromEnv, type ExampleConfig } from './config'
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

/** Serves `listener` as configured, tells the emulator where we are, and logs the address. */
export async function listenAndWire(listener: RequestListener, wiring: Wiring, config: ExampleConfig): Promise<RunningServer> {
  const server = createServer(listener)
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail)
      server.listen(config.port, config.host, () => ok())
    })
    const { port } = server.address() as AddressInfo
    const anyHost = config.host === undefined || config.host === '0.0.0.0' || config.host === '::'
    const reachable = anyHost ? '127.0.0.1' : config.host?.includes(':') ? `[${config.host}]` : config.host
    await wiring.listening(`http://${reachable}:${port}`)
    const url = `http://${anyHost ? 'localhost' : reachable}:${port}`
    wiring.log(`listening on ${url}`)
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
