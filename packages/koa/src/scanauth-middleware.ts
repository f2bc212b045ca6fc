/**
 * `scanAuthMiddleware`: the scanauth routes of core's `createHttpHandler` as Koa middleware.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { createHttpHandler, DEFAULT_MAX_BODY_BYTES, responseText, type HttpHandlerOptions, type HttpResponse, type ScanAuth } from '@scanauth/core'
import { clientGoneSignal, mayWait } from '@scanauth/core/node'
import { bodyOf } from './body'
import { sendEvents } from './send-events'

/**
 * Options of {@link scanAuthMiddleware}: those of core's `createHttpHandler` (`basePath`, default
 * `/auth`; `heartbeatMs`, `maxBodyBytes`, `onError`, `purchaseUrl`).
 */
export type ScanAuthMiddlewareOptions = HttpHandlerOptions

/**
 * The scanauth routes under `basePath` (default `/auth`); every other request goes on to `next()`
 * with its body unread, so it lives beside `@koa/bodyparser`, before or after it.
 *
 * `GET status?scene=…&wait=N` (a long poll) and `GET events?scene=…` (Server-Sent Events) end their
 * wait when the client disconnects. The event stream is written to `ctx.res` as it comes, with
 * `ctx.respond = false` (the reasons are in `send-events.ts`), and the middleware resolves when it ends.
 *
 * @example
 * ```ts
 * app.use(bodyParser())
 * app.use(scanAuthMiddleware(auth, { basePath: '/auth', onError: (error) => console.error(error) }))
 * ```
 */
export function scanAuthMiddleware(auth: ScanAuth, options: ScanAuthMiddlewareOptions = {}): Middleware {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const handle = createHttpHandler(auth, { ...options, maxBodyBytes })
  return async (ctx: Context, next: Next) => {
    const path = ctx.path
    // Only a path that is ours has its body read; everything else goes on untouched.
    if (!handle.owns(path)) return next()
    const method = ctx.method
    const reads = method !== 'GET' && method !== 'HEAD'
    const body = reads ? await bodyOf(ctx, maxBodyBytes, false) : undefined
    const query = ctx.query
    // The long poll and the event stream end when the client goes away (B-wait-4); nothing else waits.
    const signal = mayWait(path, query) ? clientGoneSignal(ctx.res) : undefined
    // Only create_scene and purchase are limited per address (B-rate-5, B-rate-11): the polls do not pay for reading it.
    // `ctx.ip` follows X-Forwarded-For only when `app.proxy` is true.
    const clientAddress = reads ? ctx.ip : undefined
    const response = await handle({ method, path, query, headers: ctx.headers, body, signal, clientAddress })
    if (response === undefined) return next()
    if (response.events !== undefined) return sendEvents(ctx, response, response.events)
    const text = responseText(response)
    if (text === undefined) {
      // No body: a 204, or HEAD of the event stream (200 with its headers). Koa turns a null body
      // into a 204 and drops the content type, so the body goes first and the status and headers after.
      ctx.body = null
      ctx.status = response.status
      setHeaders(ctx, response)
      return
    }
    ctx.status = response.status
    // The headers go straight onto the response and the body is sent as the JSON text (or the confirm page's HTML): Koa's
    // `ctx.set(object)` (entries, map, normalize) and its object-body path (content sniffing, the
    // stream/Blob/Response checks, JSON at send time) cost about a tenth of a pending poll
    // (docs/benchmarks.md). The bytes sent are the same; a middleware running after us sees
    // `ctx.body` as that JSON string, with our content type and length.
    setHeaders(ctx, response)
    ctx.body = text
  }
}

function setHeaders(ctx: Context, response: HttpResponse): void {
  const headers = response.headers ?? {}
  for (const name of Object.keys(headers)) ctx.res.setHeader(name, headers[name] as string)
}
