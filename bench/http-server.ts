/**
 * The server side of `bench/http.ts`, run as a child process so that the load generator and the
 * servers do not share an event loop. For the framework named in `argv[2]` it serves two targets on
 * 127.0.0.1 (free ports), each on an app of its own, and reports where over IPC:
 *
 * - `express`: an Express 5 app with `scanAuthRouter(auth)` at `/auth` (MemoryStore);
 *   `express-bare`: an Express 5 app with one route, `GET /bare/status`, answering `{status: 'pending'}`;
 * - `koa`: a Koa 3 app with `scanAuthMiddleware(auth, { basePath: '/auth' })` (MemoryStore);
 *   `koa-bare`: a Koa 3 app whose one middleware answers `GET /bare/status` the same way.
 *
 * One framework per process, as in an application: with both in one process, core's handler would
 * see two frameworks' request objects and its inline caches would turn polymorphic, a cost no real
 * deployment pays. Both bare routes read the `scene` query parameter, as any status route must.
 * Messages: the parent sends `{ type: 'cpu' }` (answered with `process.cpuUsage()`) and
 * `{ type: 'close' }`.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Koa from 'koa'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { scanAuthRouter } from '@scanauth/express'
import { scanAuthMiddleware } from '@scanauth/koa'

/** The frameworks this file can serve. */
export type HttpFramework = 'express' | 'koa'

/** The message this process sends once it listens. */
export interface ServerReady {
  type: 'ready'
  /** Port on 127.0.0.1 of the middleware's app (`scanauth`) and of the bare route's (`bare`). */
  ports: { scanauth: number; bare: number }
  /** A pending scene, valid for an hour. */
  scene: string
}

async function main(): Promise<void> {
  const framework = process.argv[2] as HttpFramework
  if (process.send === undefined) throw new Error('bench/http-server.ts runs as a child of bench/http.ts (fork with IPC)')
  if (framework !== 'express' && framework !== 'koa') throw new Error(`bench/http-server.ts: unknown framework '${framework}'`)
  const auth = createScanAuth({
    store: new MemoryStore(),
    qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) },
    sceneTtlSeconds: 3600,
    // Off: the load generator polls one scene from one address thousands of times a second.
    rateLimits: { perDevice: false, perAddress: false, dailyQrBudget: false, statusPollsPerScene: false },
  })
  const { sceneStr } = await auth.createScene({ deviceId: 'bench-http' })

  const apps = () => {
    if (framework === 'express') {
      const app = express()
      app.use('/auth', scanAuthRouter(auth))
      const bare = express()
      bare.get('/bare/status', (req, res) => {
        if (typeof req.query.scene !== 'string') return void res.status(400).json({ detail: 'scene is required' })
        res.json({ status: 'pending' })
      })
      return { app, bare }
    }
    const app = new Koa()
    app.use(scanAuthMiddleware(auth, { basePath: '/auth' }))
    const bare = new Koa()
    bare.use(async (ctx, next) => {
      if (ctx.path !== '/bare/status' || ctx.method !== 'GET') return next()
      if (typeof ctx.query.scene !== 'string') ctx.throw(400, 'scene is required')
      ctx.body = { status: 'pending' }
    })
    return { app: app.callback(), bare: bare.callback() }
  }
  const { app, bare } = apps()

  const servers: Server[] = []
  const listen = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler)
    server.keepAliveTimeout = 60_000
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    servers.push(server)
    return (server.address() as AddressInfo).port
  }
  const ports = { scanauth: await listen(app), bare: await listen(bare) }

  const close = () => {
    for (const server of servers) {
      server.close()
      server.closeAllConnections()
    }
    process.disconnect?.()
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() })
    if (message.type === 'close') close()
  })
  // The parent went away without saying so: do not outlive it.
  process.on('disconnect', () => {
    for (const server of servers) server.closeAllConnections()
    process.exit(0)
  })
  process.send({ type: 'ready', ports, scene: sceneStr } satisfies ServerReady)
}

await main()
