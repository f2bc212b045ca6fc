/**
 * The server of `bench/push-connections.ts`, holding many waiting event streams
 * (`GET /auth/events?scene=…`, docs/behaviour.md B-wait-3), run as a child process with
 * `--expose-gc` so that its memory can be read after a collection and its CPU is its own:
 *
 * - `scanauth`: an Express 5 app with `scanAuthRouter` at `/auth` on a `MemoryStore`;
 * - `bare`: the baseline, an Express 5 app whose one route answers `GET /auth/events` with the least
 *   an event stream needs: the same headers, one `status` event saying `pending`, a heartbeat
 *   comment every 15 s from a timer, and the timer cleared when the client goes away. No store, no
 *   waiter: what any Express app pays to hold a waiting stream.
 *
 *   argv: <scenes> <scanauth | bare>      node flags: --expose-gc
 *
 * It creates `scenes` pending scenes (valid for an hour: none expires during the run) before it
 * says it is ready, so that their records are in the memory baseline and the connections' share is
 * what remains. Messages: `{ type: 'memory' }` (collects garbage twice, answers {@link ServerMemory}),
 * `{ type: 'cpu' }` (answers `process.cpuUsage()`), `{ type: 'close' }`.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type Request, type Response } from 'express'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { scanAuthRouter } from '@scanauth/express'
import { constantQr } from './stores'
import { NO_RATE_LIMITS } from './lib'

/** Sent once the server listens. */
export interface PushServerReady {
  type: 'ready'
  port: number
  /** The pending scenes, one per connection to open. */
  scenes: string[]
}

/** The answer to `{ type: 'memory' }`, after two full collections. */
export interface ServerMemory {
  type: 'memory'
  /** `process.memoryUsage()` fields, bytes. */
  rss: number
  heapUsed: number
  external: number
  arrayBuffers: number
  /** Open connections on the server. */
  connections: number
}

/** The baseline's event stream: headers, one `pending` event, heartbeats, until the client goes away. */
function bareEvents(req: Request, res: Response): void {
  if (typeof req.query.scene !== 'string') return void res.status(400).json({ detail: 'scene is required' })
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' })
  res.flushHeaders()
  res.write('event: status\ndata: {"status":"pending"}\n\n')
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), 15_000)
  res.on('close', () => clearInterval(heartbeat))
}

async function main(): Promise<void> {
  const count = Number(process.argv[2])
  const mode = process.argv[3]
  const gc = (globalThis as { gc?: () => void }).gc
  if (process.send === undefined || !(count > 0) || (mode !== 'scanauth' && mode !== 'bare')) {
    throw new Error('bench/push-server.ts runs as a child of bench/push-connections.ts: <scenes> <scanauth | bare>')
  }
  if (gc === undefined) throw new Error('bench/push-server.ts needs --expose-gc')
  const auth = createScanAuth({ store: new MemoryStore(), qr: constantQr, sceneTtlSeconds: 3600, rateLimits: NO_RATE_LIMITS })
  const scenes: string[] = []
  for (let i = 0; i < count; i++) scenes.push((await auth.createScene({ deviceId: `bench-push-${i}` })).sceneStr)

  const app = express()
  if (mode === 'scanauth') app.use('/auth', scanAuthRouter(auth))
  else app.get('/auth/events', bareEvents)
  const server = createServer(app)
  server.listen(0, '127.0.0.1', 1024)
  await once(server, 'listening')

  const connections = () => new Promise<number>((resolve) => server.getConnections((_error, n) => resolve(n)))
  const close = () => {
    server.close()
    server.closeAllConnections()
    process.disconnect?.()
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() })
    if (message.type === 'memory') {
      void (async () => {
        gc()
        // A second collection after a turn of the event loop frees what the first one's finalizers released.
        await new Promise((resolve) => setImmediate(resolve))
        gc()
        const m = process.memoryUsage()
        const reply: ServerMemory = { type: 'memory', rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, connections: await connections() }
        process.send?.(reply)
      })()
    }
    if (message.type === 'close') close()
  })
  // The parent went away without saying so: do not outlive it.
  process.on('disconnect', () => {
    server.closeAllConnections()
    process.exit(0)
  })
  process.send({ type: 'ready', port: (server.address() as AddressInfo).port, scenes } satisfies PushServerReady)
}

await main()
