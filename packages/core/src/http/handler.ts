/**
 * `createHttpHandler`: the routes of scanauth as one framework-neutral function. Express, Koa or a
 * bare `node:http` server translate their request into an {@link HttpRequest}, call it, and send the
 * response; `undefined` means "not our path", so the app's own routes keep working.
 *
 * The routes are those of the route table (routes.ts), under `basePath` (default `/auth`): the
 * handler dispatches from it, by a map of the full paths built once per handler, and gives each
 * route its input parsed with the schemas the table names. The confirm page is served only with
 * `confirm: 'link'`, the OpenAPI document unless `openapi: false`; otherwise their paths fall through.
 *
 * Errors answer `{detail}` with the status of their `ScanAuthError` code; malformed input is 400, a
 * wrong method on one of these paths 405, a rate limit 429 with `Retry-After` (B-rate-1, B-rate-9).
 *
 * @module
 */
import type { z } from 'zod'
import type { ScanAuth } from '../service/api'
import { ScanAuthError } from '../errors'
import { parseInput } from '../service/validation'
import { jsonObjectBody, queryParser } from './request'
import { DEFAULT_HEARTBEAT_MS, EVENT_STREAM_HEADERS } from './events'
import { DEFAULT_MAX_BODY_BYTES, type HttpHandler, type HttpHandlerOptions, type HttpRequest, type HttpResponse } from './types'
import { codedErrorBody, detailOf, errorBody, isUpstreamFailure } from './wire'
import { EventStream, NO_CONTENT, Prepared, type Route, type RouteContext, type RouteInput } from './route'
import { ROUTES } from './routes'
import { openApiResponse } from './openapi'

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }

export { MAX_WAIT_SECONDS } from './wire-schemas'

/** A route ready to run: its code with the handler's context and its input readers. */
type Runner = (request: HttpRequest) => Promise<unknown>

/** What one full path of a handler serves: a runner per method, and the `Allow` of a 405. */
interface PathEntry {
  GET?: Runner
  POST?: Runner
  allow: string
  /** Whether its errors carry their code (B-wire-7): every path but the specification's own. */
  coded: boolean
}

/** The OpenAPI document (openapi.ts), the same for every handler: built once per process. */
const serveDocument: Runner = async () => new Prepared(openApiResponse())

/** Where a route has no query (or body) to read: a mistake in the table, not in the request. */
function undeclared(what: string): () => never {
  return () => {
    throw new Error(`createHttpHandler: the route reads a ${what} its declaration does not name (routes.ts)`)
  }
}

/** The readers of a route's input, from the schemas of its declaration. */
function inputOf(route: Route, maxBodyBytes: number): RouteInput<z.ZodObject, z.ZodType> {
  const query = route.request?.query
  const body = route.request?.body
  const json = body !== undefined && (body.contentType ?? 'application/json') === 'application/json' ? body.schema : undefined
  return {
    query: query === undefined ? undeclared('query') : queryParser(query),
    body: json === undefined ? undeclared('JSON body') : (request) => parseInput(json, jsonObjectBody(request, maxBodyBytes)),
  }
}

/**
 * The routes this handler serves, by full path (`{base}/status`): the table without the confirm page
 * unless `confirm: 'link'`, without the phone pages unless `payments.phone`, and without the document when `openapi: false`.
 */
function pathMap(base: string, context: RouteContext, openapi: boolean): Map<string, PathEntry> {
  const paths = new Map<string, PathEntry>()
  for (const route of ROUTES) {
    if (route.mode === 'confirm' && context.auth.confirmMode !== 'link') continue
    if (route.mode === 'phone' && !context.auth.phonePay) continue
    if (route.mode === 'subscribe' && !context.auth.reminderSubscription) continue
    if (route.document === true && !openapi) continue
    let run: Runner = serveDocument
    if (route.run !== undefined) {
      const code = route.run
      const input = inputOf(route, context.maxBodyBytes)
      run = (request) => code(request, context, input)
    }
    const path = `${base}${route.path}`
    const entry = paths.get(path) ?? { allow: '', coded: route.specified !== true }
    entry[route.method] = run
    entry.allow = entry.allow === '' ? route.method : `${entry.allow}, ${route.method}`
    paths.set(path, entry)
  }
  return paths
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
  const paths = pathMap(base, context, openapi)

  // One lookup per request, as cheap as it gets: the poll (`GET {base}/status`) is the hottest path.
  const routeOf = (pathWithQuery: string) => {
    const q = pathWithQuery.indexOf('?')
    return paths.get(q >= 0 ? pathWithQuery.slice(0, q) : pathWithQuery)
  }

  const handle = async function handle(request: HttpRequest): Promise<HttpResponse | undefined> {
    const route = routeOf(request.path)
    if (route === undefined) return undefined
    const method = request.method.toUpperCase()
    // HEAD is a GET without a body (the server drops it); any method the path does not have is 405.
    const run = method === 'GET' || method === 'HEAD' ? route.GET : method === 'POST' ? route.POST : undefined
    if (run === undefined) {
      const wrongMethod = new ScanAuthError('method_not_allowed', `Method ${method} is not allowed; use ${route.allow}`)
      return errorResponse(wrongMethod, route.coded, { allow: route.allow })
    }
    try {
      const body = await run(request)
      if (body === NO_CONTENT) return { status: 204, headers: { 'cache-control': 'no-store' } }
      if (body instanceof Prepared) return body.response
      if (body instanceof EventStream) return { status: 200, headers: { ...EVENT_STREAM_HEADERS }, events: body.events }
      return respond(200, body)
    } catch (error) {
      // A long poll ended by the client going away is no failure, and nobody reads the answer. A
      // failure of a service we call is reported too: its own text goes only there (detailOf).
      if ((!(error instanceof ScanAuthError) || isUpstreamFailure(error)) && request.signal?.aborted !== true) options.onError?.(error, request)
      return errorResponse(error, route.coded)
    }
  }
  return Object.assign(handle, { owns: (path: string) => routeOf(path) !== undefined })
}

function respond(status: number, body: unknown, extra: Record<string, string> = {}): HttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...extra }, body }
}

/**
 * A `ScanAuthError` answers its own status and message; anything else is answered as `internal_error`,
 * a 500 that reveals nothing (its message may carry internals). `coded` adds the code as `error`
 * (B-wire-7); `headers` adds what only the caller knows, such as `allow` for `method_not_allowed`.
 */
function errorResponse(error: unknown, coded: boolean, headers: Record<string, string> = {}): HttpResponse {
  const answer = error instanceof ScanAuthError ? error : new ScanAuthError('internal_error', 'Internal error', { cause: error })
  const extra: Record<string, string> = answer.code === 'unauthorized' ? { 'www-authenticate': 'Bearer', ...headers } : headers
  // A 429 says when to come back (B-rate-8), in whole seconds as RFC 9110 writes it.
  if (answer.retryAfterSeconds !== undefined) extra['retry-after'] = String(answer.retryAfterSeconds)
  const detail = detailOf(answer)
  return respond(answer.status, coded ? codedErrorBody(answer.code, detail) : errorBody(detail), extra)
}
