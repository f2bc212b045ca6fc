/**
 * Koa 3 middleware for scanauth: thin translations of core's framework-neutral HTTP handler and of
 * the WeChat callback of `@scanauth/wechat`. Every rule lives there; this file only moves requests and
 * responses between Koa and those functions.
 *
 * ```ts
 * app.use(scanAuthMiddleware(auth, { prefix: '/auth' }))
 * app.use(wechatCallbackMiddleware(createWechatCallback({ auth, token, appId }), { path: '/wechat/callback' }))
 * app.use(bodyParser())                 // before or after: both read what the other left
 * ```
 *
 * Beside `@koa/bodyparser`, the scanauth routes take `ctx.request.body` when it parsed JSON and read the
 * raw body otherwise. The WeChat callback needs the raw XML: it uses `ctx.request.rawBody` when a parser
 * kept it (`@koa/bodyparser` does, for the types it parses) and reads the stream itself otherwise.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { createHttpHandler, firstQueryValues, readRawBody, type HttpHandlerOptions, type ScanAuth } from '@scanauth/core'
import type { WechatCallback } from '@scanauth/wechat'

export type { WechatCallback }

/** Options of {@link scanAuthMiddleware}. */
export interface ScanAuthMiddlewareOptions {
  /** Where the routes live. Default `/auth`. */
  prefix?: string
  /** Largest request body accepted, in bytes. Default 16 KiB. */
  maxBodyBytes?: number
  /** Called with every unexpected error (a store failure) before the 500 answer, e.g. to log it. */
  onError?: HttpHandlerOptions['onError']
}

/** The scanauth routes under `prefix`; every other request goes on to `next()` with its body unread. */
export function scanAuthMiddleware(auth: ScanAuth, options: ScanAuthMiddlewareOptions = {}): Middleware {
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024
  const handle = createHttpHandler(auth, { basePath: options.prefix ?? '/auth', maxBodyBytes, onError: options.onError })
  return async (ctx: Context, next: Next) => {
    // Only a path that is ours has its body read; everything else goes on untouched.
    if (!handle.owns(ctx.path)) return next()
    const reads = ctx.method !== 'GET' && ctx.method !== 'HEAD'
    const body = reads ? await bodyOf(ctx, maxBodyBytes, false) : undefined
    const response = await handle({ method: ctx.method, path: ctx.path, query: ctx.query, headers: ctx.headers, body })
    if (response === undefined) return next()
    ctx.status = response.status
    // The headers go straight onto the response and the body is sent as the JSON text: Koa's
    // `ctx.set(object)` (entries, map, normalize) and its object-body path (content sniffing, the
    // stream/Blob/Response checks, JSON at send time) cost about a tenth of a pending poll
    // (docs/benchmarks.md). The bytes sent are the same; a middleware running after us sees
    // `ctx.body` as that JSON string, with our content type and length.
    const headers = response.headers ?? {}
    for (const name of Object.keys(headers)) ctx.res.setHeader(name, headers[name] as string)
    ctx.body = JSON.stringify(response.body)
  }
}

/** The WeChat callback (URL verification `GET` and event `POST`) at `path` (default `/wechat/callback`). */
export function wechatCallbackMiddleware(callback: WechatCallback, options: { path?: string; maxBodyBytes?: number } = {}): Middleware {
  const path = options.path ?? '/wechat/callback'
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next()
    const body = await bodyOf(ctx, maxBodyBytes, true)
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
      ctx.throw(500, 'wechatCallbackMiddleware needs the raw body: mount it before a parser that keeps no rawBody')
    }
    if (body !== undefined && Buffer.byteLength(body) > maxBodyBytes) ctx.throw(413, 'Request body is too large')
    const response = await callback({ method: ctx.method, query: firstQueryValues(ctx.query), body: body ?? '' })
    ctx.status = response.status
    ctx.set(response.headers ?? {})
    ctx.body = response.body
  }
}

/**
 * The body. Unread stream: its raw bytes. Already read by a parser: its `rawBody` when `raw` is asked
 * for (or nothing else is there), else the parsed `ctx.request.body`.
 */
async function bodyOf(ctx: Context, maxBytes: number, raw: boolean): Promise<unknown> {
  if (!ctx.req.readableEnded) return readRawBody(ctx.req, maxBytes)
  const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: unknown }
  return raw || body === undefined ? (rawBody ?? body) : body
}
