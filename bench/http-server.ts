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
 * `argv[4]` is the mode ({@link HttpMode}, default `plain`). In the `opt-in` mode (issue 20) the
 * instance is `createScanAuth({ confirm: 'link', confirmation: { url, oauth }, requirePollSecret: true })`,
 * with {@link benchOAuth} as WeChat web OAuth; both scenes are made as a device makes them, by
 * `POST /auth/create_scene` on the middleware's app (so the client address, 127.0.0.1, is stored
 * masked as `requestedFrom`, and the answer carries the `poll_secret`), and the second is authorized
 * through confirm on the phone: the scan (`scanned`, a ticket), `auth.openConfirmation` twice (the
 * OAuth redirect, then the scanner's code: the page and its CSRF token) and `auth.decideConfirmation`
 * with `confirm`. The ready message then carries both poll secrets. The scenes are checked before
 * anything is measured: both stored with a masked address and a secret digest, the pending one
 * polling `pending`, the authorized one `authorized` with its secret and `poll_secret_required` without.
 *
 * One framework per process, as in an application: with both in one process, core's handler would
 * see two frameworks' request objects and its inline caches would turn polymorphic, a cost no real
 * deployment pays. Both bare routes read the `scene` query parameter, as any status route must.
 * Messages: the parent sends `{ type: 'cpu' }` (answered with `process.cpuUsage()` and the store's
 * round trips so far, {@link ServerCpu}) and
 * `{ type: 'close' }`.
 *
 * `argv[5]`, on Express only, is the OpenTelemetry of the process (issue 21; {@link HttpTelemetry}, from
 * `bench/http-telemetry.ts`): `none`, `sdk` or `sdk+context`. Given, the process registers that SDK
 * before it creates the instance (nothing for `none`: the API alone, installed, as core finds it), serves
 * a third app, `traced`: the same `scanAuthRouter(auth)` at `/auth` behind middleware that runs each
 * request inside an HTTP server span (the API's no-op tracer under `none`), and counts the spans its
 * exporter was handed (`spans` in {@link ServerCpu}). With an SDK it checks, before it is ready, that the
 * setup's operations (the scenes made, the scan) were exported as spans.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Koa from 'koa'
import { createScanAuth, ScanAuthError, type ScanAuth, type ScanAuthOptions, type StatusResult, type WebOAuthProvider } from '@scanauth/core'
import { requireAuthorization, scanAuthRouter } from '@scanauth/express'
import { scanAuthMiddleware } from '@scanauth/koa'
import type { HttpTelemetry, RegisteredSdk } from './http-telemetry'
import { constantQr, openBenchStore, type BenchStore, type StoreKind } from './stores'
import { NO_RATE_LIMITS } from './lib'

/** The frameworks this file can serve. */
export type HttpFramework = 'express' | 'koa'

/**
 * How the instance is configured: `plain` (the defaults), or `opt-in`, the two opt-in modes of issue 20
 * together: `confirm: 'link'` with its `confirmation` (page address and OAuth) and `requirePollSecret: true`.
 */
export type HttpMode = 'plain' | 'opt-in'

/** The scanner of the authorized scene, in both modes. */
const SCANNER = 'bench-http-user'

/**
 * WeChat web OAuth as the benchmark plays it (the confirm page's OAuth round is setup here, not what
 * is measured): every code names the scanner.
 */
const benchOAuth: WebOAuthProvider = {
  authorizeUrl: ({ redirectUri, state }) => `https://oauth.example.test/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`,
  exchangeCode: async () => SCANNER,
}

/** The options of the `opt-in` mode. */
const OPT_IN = {
  confirm: 'link',
  confirmation: { url: 'https://app.example.test/auth/confirm', oauth: benchOAuth },
  requirePollSecret: true,
} as const satisfies Partial<ScanAuthOptions>

/** The message this process sends once it listens. */
export interface ServerReady {
  type: 'ready'
  /**
   * Port on 127.0.0.1 of the middleware's app (`scanauth`) and of the bare route's (`bare`); with
   * `argv[5]` also of the app that runs each request in an HTTP server span (`traced`).
   */
  ports: { scanauth: number; bare: number; traced?: number }
  /** A pending scene, valid for an hour. */
  scene: string
  /** An authorized scene. */
  authorizedScene: string
  /** The live session of the authorized scene's user (a time authorization: the free trial), for the guarded route. */
  sessionToken: string
  /** In the `opt-in` mode: the poll secret of each scene, as `create_scene` answered it. */
  pollSecrets?: { scene: string; authorizedScene: string }
}

/** The scenes a server process is measured on, and the authorized poll's wire body for the bare routes. */
interface BenchScenes {
  scene: string
  authorizedScene: string
  sessionToken: string
  authorizedBody: object
  pollSecrets?: { scene: string; authorizedScene: string }
}

/** The answer of the app's own route `GET /api/report`, guarded or not: the same JSON on both sides. */
export const REPORT_BODY = { report: 'daily', items: [{ id: 1, name: 'alpha', count: 3 }, { id: 2, name: 'beta', count: 5 }] }

/** The CPU and round trips this process reports when asked `{ type: 'cpu' }`. */
export interface ServerCpu {
  type: 'cpu'
  usage: NodeJS.CpuUsage
  /** The store's round trips so far (Redis commands, PostgreSQL statements); absent on the stores in process. */
  roundTrips?: number
  /** With `argv[5]`: the spans the SDK's exporter was handed so far (0 without an SDK). */
  spans?: number
}

async function main(): Promise<void> {
  const framework = process.argv[2] as HttpFramework
  const storeKind = (process.argv[3] ?? 'memory') as StoreKind
  const mode = (process.argv[4] ?? 'plain') as HttpMode
  if (process.send === undefined) throw new Error('bench/http-server.ts runs as a child of bench/http.ts (fork with IPC)')
  if (framework !== 'express' && framework !== 'koa') throw new Error(`bench/http-server.ts: unknown framework '${framework}'`)
  if (!['memory', 'sqlite', 'redis', 'postgres'].includes(storeKind)) throw new Error(`bench/http-server.ts: unknown store '${storeKind}'`)
  if (mode !== 'plain' && mode !== 'opt-in') throw new Error(`bench/http-server.ts: unknown mode '${mode}'`)
  const telemetry = process.argv[5] as HttpTelemetry | undefined
  if (telemetry !== undefined && (framework !== 'express' || !['none', 'sdk', 'sdk+context'].includes(telemetry))) {
    throw new Error(`bench/http-server.ts: telemetry '${telemetry}' is for Express only, one of none, sdk, sdk+context`)
  }
  // Loaded only here: the other server processes do not import the SDK at all.
  const otel = telemetry === undefined ? undefined : await import('./http-telemetry')
  // Before the instance, as an application starts its SDK before it builds its app.
  const sdk: RegisteredSdk | undefined = telemetry === 'sdk' || telemetry === 'sdk+context' ? otel?.registerSdk({ context: telemetry === 'sdk+context' }) : undefined
  const opened = await openBenchStore(storeKind)
  const auth = createScanAuth({
    store: opened.store,
    qr: constantQr,
    sceneTtlSeconds: 3600,
    // Off: the load generator polls one scene from one address thousands of times a second.
    rateLimits: NO_RATE_LIMITS,
    ...(mode === 'opt-in' ? OPT_IN : {}),
  })
  // The authorized poll's wire body, for the bare routes: set once the scenes are made, after the apps
  // listen (the opt-in mode makes its scenes through `create_scene`) and before the ready message.
  let authorizedBody: object = {}

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
      if (otel === undefined) return { app, bare }
      const traced = express()
      traced.use(otel.serverSpans())
      traced.use('/auth', scanAuthRouter(auth))
      return { app, bare, traced }
    }
    const app = new Koa()
    app.use(scanAuthMiddleware(auth, { basePath: '/auth' }))
    const bare = new Koa()
    bare.use(async (ctx, next) => {
      if ((ctx.path !== '/bare/status' && ctx.path !== '/bare/authorized') || ctx.method !== 'GET') return next()
      if (typeof ctx.query.scene !== 'string') ctx.throw(400, 'scene is required')
      ctx.body = ctx.path === '/bare/status' ? { status: 'pending' } : authorizedBody
    })
    return { app: app.callback(), bare: bare.callback(), traced: undefined }
  }
  const { app, bare, traced } = apps()

  const servers: Server[] = []
  const listen = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler)
    server.keepAliveTimeout = 60_000
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    servers.push(server)
    return (server.address() as AddressInfo).port
  }
  const ports = { scanauth: await listen(app), bare: await listen(bare), ...(traced === undefined ? {} : { traced: await listen(traced) }) }
  const scenes = mode === 'plain' ? await plainScenes(auth) : await optInScenes(auth, opened.store, `http://127.0.0.1:${ports.scanauth}/auth`)
  authorizedBody = scenes.authorizedBody
  if (sdk !== undefined) {
    // The setup made two scenes and scanned one: three operations, each a span through the SDK.
    await sdk.flush()
    if (sdk.exportedSpans() < 3) throw new Error(`bench/http-server.ts: the registered SDK exported ${sdk.exportedSpans()} spans for the setup's 3 operations`)
  }

  const close = () => {
    for (const server of servers) {
      server.close()
      server.closeAllConnections()
    }
    void opened.close().finally(() => process.disconnect?.())
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage(), roundTrips: opened.roundTrips?.(), spans: telemetry === undefined ? undefined : (sdk?.exportedSpans() ?? 0) } satisfies ServerCpu)
    if (message.type === 'close') close()
  })
  // The parent went away without saying so: do not outlive it.
  process.on('disconnect', () => {
    for (const server of servers) server.closeAllConnections()
    void opened.close().finally(() => process.exit(0))
  })
  const { scene, authorizedScene, sessionToken, pollSecrets } = scenes
  process.send({ type: 'ready', ports, scene, authorizedScene, sessionToken, ...(pollSecrets === undefined ? {} : { pollSecrets }) } satisfies ServerReady)
}

/** The authorized poll's answer, which must be a time authorization (the free trial), and its wire body (docs/behaviour.md B-wire-1). */
function authorizedAnswer(status: StatusResult): { sessionToken: string; authorizedBody: object } {
  if (status.status !== 'authorized') throw new Error(`bench/http-server.ts: the scanned scene is ${status.status}`)
  const a = status.authorization
  if (a.type !== 'time') throw new Error(`bench/http-server.ts: the trial is a ${a.type} authorization`)
  return {
    sessionToken: status.sessionToken,
    authorizedBody: { status: 'authorized', session_token: status.sessionToken, authorization: { type: a.type, end_at: a.endAt, remaining_points: a.remainingPoints } },
  }
}

/** The plain mode's scenes: both made by `auth.createScene`, the second scanned once (the scan is the consent). */
async function plainScenes(auth: ScanAuth): Promise<BenchScenes> {
  const { sceneStr } = await auth.createScene({ deviceId: 'bench-http' })
  const { sceneStr: authorizedScene } = await auth.createScene({ deviceId: 'bench-http' })
  await auth.handleScan({ sceneStr: authorizedScene, openid: SCANNER })
  return { scene: sceneStr, authorizedScene, ...authorizedAnswer(await auth.getStatus(authorizedScene)) }
}

/**
 * The opt-in mode's scenes: both made by `POST {base}/create_scene` (a client address stored masked,
 * a poll secret answered), the second authorized through confirm on the phone; checked as the module says.
 */
async function optInScenes(auth: ScanAuth, store: BenchStore['store'], base: string): Promise<BenchScenes> {
  const create = async () => {
    const response = await fetch(`${base}/create_scene`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ device_id: 'bench-http' }),
    })
    const body = (await response.json()) as { scene_str?: unknown; poll_secret?: unknown }
    if (!response.ok || typeof body.scene_str !== 'string' || typeof body.poll_secret !== 'string') {
      throw new Error(`bench/http-server.ts: create_scene answered ${response.status} ${JSON.stringify(body)}`)
    }
    const { scene } = await store.load({ sceneStr: body.scene_str })
    if (scene?.requestedFrom == null || scene.pollSecretHash === null) throw new Error('bench/http-server.ts: the scene has no masked address or no poll secret digest')
    return { sceneStr: body.scene_str, pollSecret: body.poll_secret }
  }
  const pending = await create()
  const authorized = await create()
  const scan = await auth.handleScan({ sceneStr: authorized.sceneStr, openid: SCANNER })
  if (scan.result !== 'scanned') throw new Error(`bench/http-server.ts: a scan in confirm mode answered ${scan.result}`)
  const { ticket } = scan
  const redirect = await auth.openConfirmation({ ticket })
  if (redirect.step !== 'authorize') throw new Error('bench/http-server.ts: the confirm page did not send the phone to OAuth first')
  const state = new URL(redirect.location).searchParams.get('state') ?? ''
  const page = await auth.openConfirmation({ ticket, code: 'bench-code', state })
  if (page.step !== 'decide') throw new Error('bench/http-server.ts: the confirm page did not show the decision')
  const decided = await auth.decideConfirmation({ ticket, csrf: page.csrf, decision: 'confirm' })
  if (decided.result !== 'authorized') throw new Error(`bench/http-server.ts: the confirmation answered ${decided.result}`)
  const pendingPoll = await auth.getStatus(pending.sceneStr, { pollSecret: pending.pollSecret })
  if (pendingPoll.status !== 'pending') throw new Error(`bench/http-server.ts: the pending scene polls ${pendingPoll.status}`)
  // Without the secret the session token is withheld (B-secret-2): the measured poll does check it.
  const refused = await auth.getStatus(authorized.sceneStr).then(
    () => null,
    (error: unknown) => (error instanceof ScanAuthError ? error.code : String(error)),
  )
  if (refused !== 'poll_secret_required') throw new Error(`bench/http-server.ts: a poll without the secret got ${refused ?? 'the session token'}`)
  return {
    scene: pending.sceneStr,
    authorizedScene: authorized.sceneStr,
    ...authorizedAnswer(await auth.getStatus(authorized.sceneStr, { pollSecret: authorized.pollSecret })),
    pollSecrets: { scene: pending.pollSecret, authorizedScene: authorized.pollSecret },
  }
}

await main()
