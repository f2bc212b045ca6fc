/**
 * `createHttpHandler`: the routes of scanauth as one framework-neutral function. Express, Koa or a
 * bare `node:http` server translate their request into an {@link HttpRequest}, call it, and send the
 * response; `undefined` means "not our path", so the app's own routes keep working.
 *
 * Routes (under `basePath`, default `/auth`):
 * - `POST create_scene` `{device_id}` → `{scene_str, qr_url, expires_in}`, plus `qr_content` when the QR
 *   provider gave the code's text; 502 when the platform fails.
 * - `GET events?scene=` → an event stream (B-wait-3, B-wait-5); a reconnect (`Last-Event-ID`) to a scene
 *   that has ended → 204, so that `EventSource` stops.
 * - `GET status?scene=` → `{status}` or `{status: 'authorized', session_token, authorization}`; 404 unknown.
 *   With the `purchaseUrl` option, a `need_purchase` answer (here and from `consume`) adds `purchase_url`.
 * - `GET session` with `Authorization: Bearer <token>` → `{user_id, device_id, expires_at, authorization}`; 401.
 * - `POST consume` `{points?}` with the Bearer token → `{status, authorization?}`; 401.
 * - `POST logout` with the Bearer token → 204, the session ended; 401 for an unknown or ended one.
 * - `GET plans` → `[{id, description, amount_fen, grant}]`, the catalog (empty without payments).
 * - `POST purchase` `{scene, plan}` (with `X-Scanauth-Poll-Secret` for a scene that has one), or `{plan}`
 *   with the Bearer token → `{order_id, code_url, amount_fen, expires_at}`; 404 unknown plan or scene,
 *   403 without the scene's poll secret, 409 a scene not scanned yet or no longer serving a purchase,
 *   429 over a purchase limit, 502 when the payment service fails.
 * - `GET order?id=` with the buyer's Bearer token → `{order_id, status, plan, amount_fen, expires_at, paid_at}`.
 * - `GET confirm?ticket=` and `POST confirm` (with `confirm: 'link'`): the confirm page, HTML for the
 *   scanner's phone, behind WeChat web OAuth (B-confirm-6…12).
 * - `GET openapi.json` → the OpenAPI 3.1 document of these routes (openapi.ts), unless `openapi: false`.
 * - With `requirePollSecret`, `status` and `events` read the scene's poll secret from
 *   `X-Scanauth-Poll-Secret` header (never the query string, which access logs keep); an `authorized`
 *   answer without it is 403 (B-secret-2).
 *
 * Errors answer `{detail}` with the status of their `ScanAuthError` code; malformed input is 400, a
 * wrong method on one of these paths 405, a rate limit 429 with `Retry-After` (B-rate-1, B-rate-9).
 * The bodies, query parameters and answers are the zod schemas of wire-schemas.ts: the routes parse
 * their input with them, and the OpenAPI document is generated from them.
 *
 * @module
 */
import type { ScanAuth } from '../api'
import { ScanAuthError } from '../errors'
import { parseInput } from '../validation'
import { bearerToken, headerValue, jsonObjectBody, queryParser } from './request'
import { DEFAULT_HEARTBEAT_MS, EVENT_STREAM_HEADERS, nextStep, statusEvents } from './events'
import { DEFAULT_MAX_BODY_BYTES, type HttpHandler, type HttpHandlerOptions, type HttpRequest, type HttpResponse } from './types'
import { consumeBody, createSceneBody, detailOf, errorBody, isUpstreamFailure, orderBody, plansBody, purchaseBody, sessionBody, statusBody } from './wire'
import { consumeRequest, createSceneRequest, eventsQuery, orderQuery, purchaseRequest, statusQuery } from './wire-schemas'
import { decideOnConfirmPage, openConfirmPage } from './confirm-routes'
import { OPENAPI_PATH, openApiResponse } from './openapi'

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }

/** What a route returns to answer 204 No Content. */
const NO_CONTENT = Symbol('no content')

/** What a route returns to answer with a response it built itself (the confirm page's HTML, its redirect). */
class Prepared {
  constructor(readonly response: HttpResponse) {}
}

/** What a route returns to answer with an event stream. */
class EventStream {
  constructor(readonly events: AsyncIterable<string> | undefined) {}
}

/** What every route may need besides the request. */
interface RouteContext {
  auth: ScanAuth
  maxBodyBytes: number
  /** `purchase_url` of the `need_purchase` answers, when configured. */
  purchaseUrl: string | undefined
  heartbeatMs: number
  onError: HttpHandlerOptions['onError']
}

export { MAX_WAIT_SECONDS } from './wire-schemas'

/**
 * The poll secret a device presents (B-secret-2): the `X-Scanauth-Poll-Secret` header only. A query
 * parameter would land in access logs beside `scene=`, the very leak the secret closes (B-secret-3).
 */
function pollSecretOf(request: HttpRequest): string | undefined {
  return headerValue(request, 'x-scanauth-poll-secret')
}

// The query parameters of each route, parsed with the schemas the OpenAPI document shows (wire-schemas.ts).
const readStatusQuery = queryParser(statusQuery)
const readEventsQuery = queryParser(eventsQuery)
const readOrderQuery = queryParser(orderQuery)

type Route = (request: HttpRequest, context: RouteContext) => Promise<unknown>

/** Each path: what each of its methods does; the body a route returns is sent with status 200. */
const ROUTES: Record<string, { GET?: Route; POST?: Route }> = {
  '/create_scene': {
    POST: async (request, { auth, maxBodyBytes }) => {
      const body = parseInput(createSceneRequest, jsonObjectBody(request, maxBodyBytes))
      // An empty address (Koa's `ctx.ip` when the socket is gone) is no address.
      const address = request.clientAddress
      return createSceneBody(await auth.createScene({ deviceId: body.device_id, clientAddress: address === '' ? undefined : address }))
    },
  },
  '/status': {
    GET: async (request, { auth, purchaseUrl }) => {
      const query = readStatusQuery(request)
      const { scene, wait } = query
      // Without `wait`, exactly the plain poll (one read when pending); with it, a long poll (B-wait-2).
      const pollSecret = pollSecretOf(request)
      const status = wait === undefined
        ? await auth.getStatus(scene, { pollSecret })
        : await auth.waitForStatus(scene, { timeoutMs: wait * 1000, signal: request.signal, pollSecret })
      return statusBody(status, purchaseUrl)
    },
  },
  '/events': {
    GET: async (request, { auth, purchaseUrl, heartbeatMs, onError }) => {
      const query = readEventsQuery(request)
      const sceneStr = query.scene
      // Read before the stream starts, so an unknown scene is a plain 404 with {detail}.
      const pollSecret = pollSecretOf(request)
      const first = await auth.getStatus(sceneStr, { pollSecret })
      // A reconnect to a scene that has ended with the status the client last saw: 204, which makes
      // a browser's EventSource stop reconnecting (B-wait-5). One that ended otherwise while the
      // client was away (a scan during a dropped connection) gets that status, like a first
      // connection gets the final status and the end (B-wait-3).
      const lastSeen = lastEventId(request)
      if (lastSeen !== undefined) {
        const step = await nextStep(auth, sceneStr, first, pollSecret)
        if (!step.goesOn && step.status.status === lastSeen) return NO_CONTENT
      }
      if (request.method.toUpperCase() === 'HEAD') return new EventStream(undefined)
      const report = (error: unknown) => onError?.(error, request)
      return new EventStream(statusEvents({ auth, sceneStr, first, pollSecret, signal: request.signal, heartbeatMs, purchaseUrl, onError: report }))
    },
  },
  '/session': {
    GET: async (request, { auth }) => {
      const info = await auth.verifySession(requireBearer(request))
      if (info === null) throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
      return sessionBody(info)
    },
  },
  '/logout': {
    POST: async (request, { auth }) => {
      // Ends the presented session only; the user's other devices stay signed in.
      if (!(await auth.revokeSession(requireBearer(request)))) {
        throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
      }
      return NO_CONTENT
    },
  },
  '/plans': {
    GET: async (_request, { auth }) => plansBody(auth.listPlans()),
  },
  '/purchase': {
    POST: async (request, { auth, maxBodyBytes }) => {
      const body = parseInput(purchaseRequest, jsonObjectBody(request, maxBodyBytes))
      // Purchases are limited per address as scenes are (B-rate-11); an empty address is no address.
      const address = request.clientAddress
      const clientAddress = address === '' ? undefined : address
      // The need_purchase device holds no usable session: it names its scene, with the scene's poll
      // secret when it has one (B-order-13). Anyone else presents a session.
      if (body.scene !== undefined) {
        return purchaseBody(await auth.purchase({ sceneStr: body.scene, pollSecret: pollSecretOf(request), plan: body.plan, clientAddress }))
      }
      return purchaseBody(await auth.purchase({ sessionToken: requireBearer(request), plan: body.plan, clientAddress }))
    },
  },
  '/order': {
    GET: async (request, { auth }) => {
      // The buyer's own order only: a session purchase has no scene to wait on, so its device asks here (B-order-11).
      const token = requireBearer(request)
      const { id } = readOrderQuery(request)
      const session = await auth.verifySession(token)
      if (session === null) throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
      const order = await auth.getOrder(id)
      // Another user's order is answered like an unknown one: an order id says nothing to a stranger.
      if (order === null || order.userId !== session.userId) throw new ScanAuthError('order_not_found', 'No order with that id for this session')
      return orderBody(order)
    },
  },
  '/confirm': {
    // The phone's browser, not a device: HTML pages and a redirect, refusals included (B-confirm-11, B-confirm-12).
    GET: async (request, { auth, onError }) => new Prepared(await openConfirmPage(auth, request, (error) => onError?.(error, request))),
    POST: async (request, { auth, maxBodyBytes, onError }) =>
      new Prepared(await decideOnConfirmPage(auth, request, maxBodyBytes, (error) => onError?.(error, request))),
  },
  '/consume': {
    POST: async (request, { auth, maxBodyBytes, purchaseUrl }) => {
      const token = requireBearer(request)
      const { points } = parseInput(consumeRequest, jsonObjectBody(request, maxBodyBytes))
      return consumeBody(await auth.consume({ sessionToken: token, points }), purchaseUrl)
    },
  },
  // The OpenAPI document of these routes (openapi.ts), the same for every handler: built once per process.
  [OPENAPI_PATH]: {
    GET: async () => new Prepared(openApiResponse()),
  },
}

/** `routes` without the confirm page, when `drop`. */
function withoutConfirm(routes: typeof ROUTES, drop: boolean): typeof ROUTES {
  if (!drop) return routes
  const { '/confirm': _confirm, ...rest } = routes
  return rest
}

/** The routes of a handler with `openapi: false`. */
const { [OPENAPI_PATH]: _document, ...WITHOUT_DOCUMENT } = ROUTES

/** Each path and its methods, for the tests that compare them with the OpenAPI document. */
export const ROUTE_METHODS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(ROUTES).map(([path, methods]) => [path, Object.keys(methods)]),
)

/**
 * The `Last-Event-ID` of a reconnect: the status the client last saw (every `status` event's id is
 * its status, B-wait-5), which `EventSource` sends back once a stream has given it an id; undefined
 * for a first connection (no header, or an empty one).
 */
function lastEventId(request: HttpRequest): string | undefined {
  const id = headerValue(request, 'last-event-id')
  return id === undefined || id === '' ? undefined : id
}

function requireBearer(request: HttpRequest): string {
  const token = bearerToken(request)
  if (token === undefined) throw new ScanAuthError('unauthorized', 'Authorization: Bearer <session token> is required')
  return token
}

/** Normalizes a base path: a leading slash, no trailing one (`''` for the root). */
function normalizeBase(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '')
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/**
 * Creates the HTTP handler for a scanauth instance.
 *
 * @example
 * ```ts
 * const handle = createHttpHandler(auth, { basePath: '/auth', purchaseUrl: 'https://shop.example.com/scanauth' })
 * const res = await handle({ method: 'GET', path: '/auth/status', query: { scene } })
 * if (res) reply(res.status, res.headers, JSON.stringify(res.body))
 * ```
 */
export function createHttpHandler(auth: ScanAuth, options: HttpHandlerOptions = {}): HttpHandler {
  const base = normalizeBase(options.basePath ?? '/auth')
  const { purchaseUrl } = options
  if (purchaseUrl !== undefined && (typeof purchaseUrl !== 'string' || purchaseUrl.trim() === '')) {
    throw new ScanAuthError('invalid_options', 'createHttpHandler: purchaseUrl must be a non-empty string')
  }
  const { heartbeatMs = DEFAULT_HEARTBEAT_MS } = options
  if (!Number.isInteger(heartbeatMs) || heartbeatMs < 1 || heartbeatMs > 600_000) {
    throw new ScanAuthError('invalid_options', 'createHttpHandler: heartbeatMs must be a whole number of milliseconds from 1 to 600000')
  }
  const { openapi = true } = options
  if (typeof openapi !== 'boolean') throw new ScanAuthError('invalid_options', 'createHttpHandler: openapi must be true or false')
  const context: RouteContext = {
    auth,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    purchaseUrl,
    heartbeatMs,
    onError: options.onError,
  }
  // `openapi: false`: the document's path is not ours, and falls through like any other. Without
  // confirm on the phone, neither is the confirm page's: an app's own `{base}/confirm` keeps working.
  const routes = withoutConfirm(openapi ? ROUTES : WITHOUT_DOCUMENT, auth.confirmMode !== 'link')

  const routeOf = (pathWithQuery: string) => {
    const q = pathWithQuery.indexOf('?')
    const path = q >= 0 ? pathWithQuery.slice(0, q) : pathWithQuery
    return path.startsWith(`${base}/`) && Object.hasOwn(routes, path.slice(base.length)) ? routes[path.slice(base.length)] : undefined
  }

  const handle = async function handle(request: HttpRequest): Promise<HttpResponse | undefined> {
    const route = routeOf(request.path)
    if (route === undefined) return undefined
    const method = request.method.toUpperCase()
    // HEAD is a GET without a body (the server drops it); any method the path does not have is 405.
    const run = method === 'GET' || method === 'HEAD' ? route.GET : method === 'POST' ? route.POST : undefined
    if (run === undefined) {
      const allowed = Object.keys(route).join(', ')
      const wrongMethod = new ScanAuthError('method_not_allowed', `Method ${method} is not allowed; use ${allowed}`)
      return errorResponse(wrongMethod, { allow: allowed })
    }
    try {
      const body = await run(request, context)
      if (body === NO_CONTENT) return { status: 204, headers: { 'cache-control': 'no-store' } }
      if (body instanceof Prepared) return body.response
      if (body instanceof EventStream) return { status: 200, headers: { ...EVENT_STREAM_HEADERS }, events: body.events }
      return respond(200, body)
    } catch (error) {
      // A long poll ended by the client going away is no failure, and nobody reads the answer. A
      // failure of a service we call is reported too: its own text goes only there (detailOf).
      if ((!(error instanceof ScanAuthError) || isUpstreamFailure(error)) && request.signal?.aborted !== true) options.onError?.(error, request)
      return errorResponse(error)
    }
  }
  return Object.assign(handle, { owns: (path: string) => routeOf(path) !== undefined })
}

function respond(status: number, body: unknown, extra: Record<string, string> = {}): HttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...extra }, body }
}

/**
 * A `ScanAuthError` answers its own status and message; anything else is answered as `internal_error`,
 * a 500 that reveals nothing (its message may carry internals). `headers` adds what only the caller
 * knows, such as `allow` for `method_not_allowed`.
 */
function errorResponse(error: unknown, headers: Record<string, string> = {}): HttpResponse {
  const answer = error instanceof ScanAuthError ? error : new ScanAuthError('internal_error', 'Internal error', { cause: error })
  const extra: Record<string, string> = answer.code === 'unauthorized' ? { 'www-authenticate': 'Bearer', ...headers } : headers
  // A 429 says when to come back (B-rate-8), in whole seconds as RFC 9110 writes it.
  if (answer.retryAfterSeconds !== undefined) extra['retry-after'] = String(answer.retryAfterSeconds)
  return respond(answer.status, errorBody(detailOf(answer)), extra)
}
