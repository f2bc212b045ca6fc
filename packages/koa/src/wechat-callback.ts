/**
 * `wechatCallbackMiddleware`: the WeChat callback of `@scanauth/wechat` as Koa middleware.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { firstQueryValues } from '@scanauth/core'
import type { WechatCallback } from '@scanauth/wechat'
import { bodyOf } from './body'

/** Options of {@link wechatCallbackMiddleware}. */
export interface WechatCallbackMiddlewareOptions {
  /** The callback's path, the account's server URL. Default `/wechat/callback`. */
  path?: string
  /** Largest push accepted, in bytes; a larger one is answered 413. Default 64 KiB. */
  maxBodyBytes?: number
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024

/**
 * The WeChat callback (URL verification `GET` and event `POST`) at `path` (default
 * `/wechat/callback`). It needs the raw XML: it takes `ctx.request.rawBody` when a parser before it
 * kept one, and reads the stream itself when nothing read it.
 *
 * @param callback - What `createWechatCallback` of `@scanauth/wechat` returned.
 *
 * @example
 * ```ts
 * app.use(wechatCallbackMiddleware(createWechatCallback({ auth, appId, token, encodingAESKey }), { path: '/wechat/callback' }))
 * ```
 */
export function wechatCallbackMiddleware(callback: WechatCallback, options: WechatCallbackMiddlewareOptions = {}): Middleware {
  const path = options.path ?? '/wechat/callback'
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
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
