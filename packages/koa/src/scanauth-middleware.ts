/**
 * `scanAuthMiddleware`: the scanauth routes of core's `createHttpHandler` as Koa middleware.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { createHttpHandler, type HttpHandlerOptions, type ScanAuth } from '@scanauth/core'
import { bodyOf } from './body'

/** Options of {@link scanAuthMiddleware}. */
export interface ScanAuthMiddlewareOptions {
  /** Where the routes live. Default `/auth`. */
  basePath?: string
  /** Largest request body accepted, in bytes. Default 16 KiB. */
  maxBodyBytes?: number
  /** Called with every unexpected error (a store failure) before the 500 answer, e.g. to log it. */
  onError?: HttpHandlerOptions['onError']
  /**
   * Adds `purchase_url` to the `need_purchase` answers (the poll's and the consumption's), e.g.
   * `'https://shop.example.com/scanauth'`. Off by default (see core's `HttpHandlerOptions.purchaseUrl`).
   */
  purchaseUrl?: HttpHandlerOptions['purchaseUrl']
}

const DEFAULT_MAX_BODY_BYTES = 16 * 1024

/**
 * The scanauth routes under `basePath` (default `/auth`); every other request goes on to `next()`
 * with its body unread, so it lives beside `@koa/bodyparser`, before or after it.
 *
 * @example
 * ```ts
 * app.use(bodyParser())
 * app.use(scanAuthMiddleware(auth, { basePath: '/auth', onError: (error) => console.error(error) }))
 * ```
 */
export function scanAuthMiddleware(auth: ScanAuth, options: ScanAuthMiddlewareOptions = {}): Middleware {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const handle = createHttpHandler(auth, { basePath: options.basePath ?? '/auth', maxBodyBytes, onError: options.onError, purchaseUrl: options.purchaseUrl })
  return async (ctx: Context, next: Next) => {
    // Only a path that is ours has its body read; everything else goes on untouched.
    if (!handle.owns(ctx.path)) return next()
    const reads = ctx.method !== 'GET' && ctx.method !== 'HEAD'
    const body = reads ? await bodyOf(ctx, maxBodyBytes, false) : undefined
    // `ctx.ip` follows X-Forwarded-For only when `app.proxy` is true.
    const response = await handle({ method: ctx.method, path: ctx.path, query: ctx.query, headers: ctx.headers, body, clientAddress: ctx.ip })
    if (response === undefined) return next()
    ctx.status = response.status
    // The headers go straight onto the response and the body is sent as the JSON text: Koa's
    // `ctx.set(object)` (entries, map, normalize) and its object-body path (content sniffing, the
    // stream/Blob/Response checks, JSON at send time) cost about a tenth of a pending poll
    // (docs/benchmarks.md). The bytes sent are the same; a middleware running after us sees
    // `ctx.body` as that JSON string, with our content type and length.
    const headers = response.headers ?? {}
    for (const name of Object.keys(headers)) ctx.res.setHeader(name, headers[name] as string)
    // No body (204): Koa sends none when ctx.body is null.
    ctx.body = response.body === undefined ? null : JSON.stringify(response.body)
  }
}
