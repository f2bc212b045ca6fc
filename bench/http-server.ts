/**
 * The server side of `bench/http.ts`, run as a child process so that the load generator and the
 * servers do not share an event loop. For the framework named in `argv[2]` and the store named in
 * `argv[3]` (`memory`, `sqlite` on a file in a temporary folder, `redis` at `REDIS_URL` under a key
 * prefix of its own, `postgres` at `DATABASE_URL` in a schema of its own; see `bench/stores.ts`) it serves two targets on 127.0.0.1 (free ports), each on
 * an app of its own, and reports where over IPC:
 *
 * - `express`: an Express 5 app with `scanAuthRouter(auth)` at `/auth`;
 *   `express-bare`: an Express 5 app with two routes: `GET /bare/status` answering `{status: 'pending'}`,
 *   and `GET /bare/authorized` answering the authorized scene's poll body (the same JSON, built
 *   once at start), each with `res.json`;
 * - `koa`: a Koa 3 app with `scanAuthMiddleware(auth, { basePath: '/auth' })`;
 *   `koa-bare`: a Koa 3 app whose one middleware answers `GET /bare/status` and `GET /bare/authorized` the same way.
 *
 * - and, on Express only, a route of the app's own, `GET /api/report` answering {@link REPORT_BODY}
 *   with `res.json`: behind `requireAuthorization({ auth })` on the `express` app (after the
 *   `/auth` mount, as an app has it), and the same handler unguarded on `express-bare` (issue 19).
 *
 * It makes a pending scene and an authorized one (scanned once: a new user with the free trial, a
 * time authorization, so its poll reads the scene, the user and the latest session, and answers
 * `authorized`); that scan's session token is the one the guarded route is called with.
 *
 * One framework per process, as in an application: with both in one process, core's handler would
 * see two frameworks' request objects and its inline caches would turn polymorphic, a cost no real
 * deployment pays. Both bare routes read the `scene` query parameter, as any status route must.
 * Messages: the parent sends `{ type: 'cpu' }` (answered with `process.cpuUsage()` and the store's
 * round trips so far, {@link ServerCpu}) and
 * `{ type: 'close' }`.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Koa from 'koa'
import { createScanAuth } from '@scanauth/core'
import { requireAuthorization, scanAuthRouter } from '@scanauth/express'
import { scanAuthMiddleware } from '@scanauth/koa'
import { constantQr, openBenchStore, type StoreKind } from './stores'
import { NO_RATE_LIMITS } from './lib'

/** The frameworks this file can serve. */
export type HttpFramework = 'express' | 'koa'

/** The message this process sends once it listens. */
export interface ServerReady {
  type: 'ready'
  /** Port on 127.0.0.1 of the middleware's app (`scanauth`) and of the bare route's (`bare`). */
  ports: { scanauth: number; bare: number }
  /** A pending scene, valid for an hour. */
  scene: string
  /** An authorized scene. */
  authorizedScene: string
  /** The live session of the authorized scene's user (a time authorization: the free trial), for the guarded route. */
  sessionToken: string
}

/** The answer of the app's own route `GET /api/report`, guarded or not: the same JSON on both sides. */
export const REPORT_BODY = { report: 'daily', items: [{ id: 1, name: 'alpha', count: 3 }, { id: 2, name: 'beta', count: 5 }] }

/** The CPU and round trips this process reports when asked `{ type: 'cpu' }`. */
export interface ServerCpu {
  type: 'cpu'
  usage: NodeJS.CpuUsage
  /** The store's round trips so far (Redis commands, PostgreSQL statements); absent on the stores in process. */
  roundTrips?: number
}

async function main(): Promise<void> {
  const framework = process.argv[2] as HttpFramework
  const storeKind = (process.argv[3] ?? 'memory') as StoreKind
  if (process.send === undefined) throw new Error('bench/http-server.ts runs as a child of bench/http.ts (fork with IPC)')
  if (framework !== 'express' && framework !== 'koa') throw new Error(`bench/http-server.ts: unknown framework '${framework}'`)
  if (!['memory', 'sqlite', 'redis', 'postgres'].includes(storeKind)) throw new Error(`bench/http-server.ts: unknown store '${storeKind}'`)
  const opened = await openBenchStore(storeKind)
  const auth = createScanAuth({
    store: opened.store,
    qr: constantQr,
    sceneTtlSeconds: 3600,
    // Off: the load generator polls one scene from one address thousands of times a second.
    rateLimits: NO_RATE_LIMITS,
  })
  const { sceneStr } = await auth.createScene({ deviceId: 'bench-http' })
  const { sceneStr: authorizedScene } = await auth.createScene({ deviceId: 'bench-http' })
  await auth.handleScan({ sceneStr: authorizedScene, openid: 'bench-http-user' })
  const authorized = await auth.getStatus(authorizedScene)
  if (authorized.status !== 'authorized') throw new Error(`bench/http-server.ts: the scanned scene is ${authorized.status}`)
  if (authorized.authorization.type !== 'time') throw new Error(`bench/http-server.ts: the trial is a ${authorized.authorization.type} authorization`)
  // The wire body of that poll (docs/behaviour.md B-wire-1), for the bare routes to answer.
  const a = authorized.authorization
  const authorizedBody = {
    status: 'authorized',
    session_token: authorized.sessionToken,
    authorization: { type: a.type, end_at: a.endAt, remaining_points: a.remainingPoints },
  }

  const apps = () => {
    if (framework === 'express') {
      const app = express()
      app.use('/auth', scanAuthRouter(auth))
      // A route of the app itself, as an app adopting the guards writes it (issue 19); the bare app
      // serves the same handler at the same path without the guard.
      const report: express.RequestHandler = (_req, res) => void res.json(REPORT_BODY)
      app.get('/api/report', requireAuthorization({ auth }), report)
      const bare = express()
      bare.get('/api/report', report)
      bare.get('/bare/status', (req, res) => {
        if (typeof req.query.scene !== 'string') return void res.status(400).json({ detail: 'scene is required' })
        res.json({ status: 'pending' })
      })
      bare.get('/bare/authorized', (req, res) => {
        if (typeof req.query.scene !== 'string') return void res.status(400).json({ detail: 'scene is required' })
        res.json(authorizedBody)
      })
      return { app, bare }
    }
    const app = new Koa()
    app.use(scanAuthMiddleware(auth, { basePath: '/auth' }))
    const bare = new Koa()
    bare.use(async (ctx, next) => {
      if ((ctx.path !== '/bare/status' && ctx.path !== '/bare/authorized') || ctx.method !== 'GET') return next()
      if (typeof ctx.query.scene !== 'string') ctx.throw(400, 'scene is required')
      ctx.body = ctx.path === '/bare/status' ? { status: 'pending' } : authorizedBody
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
    void opened.close().finally(() => process.disconnect?.())
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage(), roundTrips: opened.roundTrips?.() } satisfies ServerCpu)
    if (message.type === 'close') close()
  })
  // The parent went away without saying so: do not outlive it.
  process.on('disconnect', () => {
    for (const server of servers) server.closeAllConnections()
    void opened.close().finally(() => process.exit(0))
  })
  process.send({ type: 'ready', ports, scene: sceneStr, authorizedScene, sessionToken: authorized.sessionToken } satisfies ServerReady)
}

await main()
