/**
 * `createFetchHandler`: the routes of `createHttpHandler` for hosts that speak the Fetch standard
 * (`Request` in, `Response` out): Hono, Next.js route handlers, Bun, Deno, Cloudflare-style workers.
 *
 * It is a translation and nothing more: the `Request` becomes an {@link HttpRequest}, the answer of
 * `createHttpHandler` becomes a `Response`. Every rule (routes, statuses, bodies, headers, the body
 * size limit) stays in `createHttpHandler`. The one difference: Fetch has no `next()`, so a path that
 * is not ours answers 404 `{detail}`; mount the handler where only scanauth's paths reach it, or call
 * `owns(path)` first.
 *
 * The long poll (`status?wait=N`) and the event stream (`events`) end with `request.signal`, which
 * hosts abort when the client goes away (docs/behaviour.md B-wait-4). The event stream is a
 * `Response` whose body is a `ReadableStream` pulling from the core's iterable: one chunk per pull,
 * so a slow client holds the stream back (backpressure) instead of filling memory; cancelling the
 * body ends the wait too and returns the iterator.
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import { readFetchBody } from './fetch-body'
import { createHttpHandler } from './handler'
import { DEFAULT_MAX_BODY_BYTES, responseText, type HttpHandlerOptions, type HttpRequest, type HttpResponse } from './types'

/** Options of {@link createFetchHandler}. */
export interface FetchHandlerOptions {
  /** Where the routes live, as the full path of the request URL. Default `/auth`. */
  basePath?: string
  /**
   * Time between the heartbeat comments of an event stream (`GET {base}/events`), in milliseconds.
   * Default 15,000: proxies close a connection idle for longer (nginx after 60 s by default).
   */
  heartbeatMs?: number
  /**
   * Largest request body accepted, in bytes. Default 16 KiB. Only this many bytes (plus one, to tell
   * "too large") are read from the client; a longer body answers 400 "Request body is too large".
   */
  maxBodyBytes?: number
  /**
   * Called with every unexpected error (a store failure, a body the client broke off) before the
   * handler answers 500 `{detail: 'Internal error'}`, so the app can log it.
   */
  onError?(error: unknown, request: Request): void
  /** Adds `purchase_url` to the `need_purchase` answers; off by default (see `HttpHandlerOptions.purchaseUrl`). */
  purchaseUrl?: string
  /**
   * Whether to serve the OpenAPI document at `GET {basePath}/openapi.json`. Default true; with `false`
   * that path is not ours (404 here, and `owns` answers false). See `HttpHandlerOptions.openapi`.
   */
  openapi?: boolean
  /**
   * The client's address, for the per-address limits of `create_scene` and `purchase` (docs/behaviour.md,
   * B-rate-5, B-rate-11).
   * A `Request` carries no peer address: take it from a header your own proxy or CDN sets and
   * overwrites (`x-real-ip` from your nginx, `cf-connecting-ip` on Cloudflare; never a header the
   * client can set unchecked), or from the host (`server.requestIP(request)?.address` on Bun; on
   * Hono or Deno, remember the connection's address per `Request` in a `WeakMap`). Without it,
   * `create_scene` is limited per device and by the daily budget only, and `purchase` per user only.
   * Called only for `create_scene` and `purchase`; a throw answers 500 and goes to `onError`.
   */
  clientAddress?: (request: Request) => string | undefined
}

/** Answers a Fetch `Request` for scanauth's routes; other paths answer 404 `{detail}`. */
export interface FetchHandler {
  (request: Request): Promise<Response>
  /** Whether `path` (a URL pathname) is one of the handler's routes, whatever the method. */
  owns(path: string): boolean
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }
const NOT_FOUND: HttpResponse = { status: 404, headers: JSON_HEADERS, body: { detail: 'Not found' } }

/**
 * Creates the Fetch-standard handler for a scanauth instance.
 *
 * @example
 * ```ts
 * const handler = createFetchHandler(auth, { basePath: '/auth' })
 * app.all('/auth/*', (c) => handler(c.req.raw))        // Hono
 * Bun.serve({ port: 3000, fetch: handler })             // Bun; Deno.serve(handler) on Deno
 * ```
 */
export function createFetchHandler(auth: ScanAuth, options: FetchHandlerOptions = {}): FetchHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  // The HttpRequest the core handler reports an error with is always the one built from this Request.
  const originals = new WeakMap<HttpRequest, Request>()
  const onError: HttpHandlerOptions['onError'] =
    options.onError === undefined ? undefined : (error, request) => options.onError?.(error, originals.get(request) as Request)
  const { purchaseUrl, heartbeatMs, openapi } = options
  const handle = createHttpHandler(auth, { basePath: options.basePath ?? '/auth', maxBodyBytes, onError, purchaseUrl, heartbeatMs, openapi })

  const fetchHandler = async function fetchHandler(request: Request): Promise<Response> {
    const url = new URL(request.url)
    if (!handle.owns(url.pathname)) return jsonResponse(request, NOT_FOUND)
    let answer: HttpResponse | undefined
    // Only the requests that may wait read the signal (some hosts, @hono/node-server among them,
    // create its controller on first read; a plain poll needs none). The event stream gets one of its
    // own, aborted by the request's and by the body's cancel, so a host that cancels the body without
    // aborting the request still ends the wait at once.
    const stream = url.pathname.endsWith('/events') ? followAbort(request.signal) : undefined
    const signal = stream?.signal ?? (url.searchParams.has('wait') ? request.signal : undefined)
    try {
      const method = request.method.toUpperCase()
      const reads = method !== 'GET' && method !== 'HEAD'
      const httpRequest: HttpRequest = {
        method,
        path: url.pathname,
        query: url.searchParams,
        headers: Object.fromEntries(request.headers),
        // Capped: at most maxBodyBytes + 1 bytes, and the core handler answers 400 past the limit.
        body: reads ? await readFetchBody(request, maxBodyBytes) : undefined,
        signal,
      }
      // Read when a route asks (create_scene and purchase do): a poll never calls the app's function.
      const addressOf = options.clientAddress
      if (addressOf !== undefined) Object.defineProperty(httpRequest, 'clientAddress', { get: () => addressOf(request), enumerable: true })
      originals.set(httpRequest, request)
      answer = await handle(httpRequest)
    } catch (error) {
      // Only reading the body can throw here (the core handler never does): the client broke it off.
      options.onError?.(error, request)
      answer = { status: 500, headers: JSON_HEADERS, body: { detail: 'Internal error' } }
    }
    if (answer?.events !== undefined) {
      return new Response(eventStreamBody(answer.events, stream), { status: answer.status, headers: answer.headers })
    }
    // owns() said the path is ours, so the core handler answered; the fallback only satisfies the types.
    return jsonResponse(request, answer ?? NOT_FOUND)
  }
  return Object.assign(fetchHandler, { owns: handle.owns })
}

/** The handler's answer as a `Response`: the JSON body (or the page's HTML) and its length; headers only for `HEAD`; no body for a 204. */
function jsonResponse(request: Request, answer: HttpResponse): Response {
  const text = responseText(answer)
  if (text === undefined) return new Response(null, { status: answer.status, headers: answer.headers })
  const headers = new Headers(answer.headers)
  headers.set('content-length', String(new TextEncoder().encode(text).byteLength))
  const withBody = request.method.toUpperCase() !== 'HEAD'
  return new Response(withBody ? text : null, { status: answer.status, headers })
}

/** A controller aborted when `signal` aborts (now, if it already has), with its reason. */
function followAbort(signal: AbortSignal): AbortController {
  const controller = new AbortController()
  if (signal.aborted) controller.abort(signal.reason)
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
  return controller
}

/**
 * The event stream as a byte stream (B-wait-3). Pull-based with a high-water mark of zero: the next
 * chunk is asked of the iterable only when the host reads, so nothing piles up ahead of a slow
 * client. `cancel` (the host stops reading: the client went away) aborts the wait the iterator is in
 * and returns the iterator (B-wait-4).
 */
function eventStreamBody(events: AsyncIterable<string>, stop: AbortController | undefined): ReadableStream<Uint8Array> {
  const iterator = events[Symbol.asyncIterator]()
  const encoder = new TextEncoder()
  let cancelled = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next()
        // A read in progress when the body was cancelled: the stream is closed, nothing to hand on.
        if (cancelled) return
        if (next.done === true) controller.close()
        else controller.enqueue(encoder.encode(next.value))
      },
      async cancel() {
        cancelled = true
        stop?.abort(new Error('The client stopped reading the event stream'))
        await iterator.return?.()
      },
    },
    { highWaterMark: 0 },
  )
}
