/**
 * `wechatCallbackMiddleware`: the WeChat callback of `@scanauth/wechat` as Koa middleware.
 *
 * Whatever body it finds goes to the callback (the raw body, or what a parser left), which checks the
 * signature first and then refuses a body it cannot use with a 4xx, e.g. a JSON request read by
 * `@koa/bodyparser` is a 415 (docs/behaviour.md B-wx-3). No input makes this middleware throw.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { firstQueryValues } from '@scanauth/core/node'
import { DEFAULT_PUSH_MAX_BODY_BYTES, type WechatCallback } from '@scanauth/wechat'
import { bodyOf } from './body'

/** Options of {@link wechatCallbackMiddleware}. */
export interface WechatCallbackMiddlewareOptions {
  /** The callback's path, the account's server URL. Default `/wechat/callback`. */
  path?: string
  /** Largest push accepted, in bytes; a larger one is answered 413. Default 64 KiB. */
  maxBodyBytes?: number
}


/**
 * The WeChat callback (URL verification `GET` and event `POST`) at `path` (default
 * `/wechat/callback`). It needs the raw XML: it takes `ctx.request.rawBody` when a parser before it
 * kept one, and reads the stream itself when nothing read it.
 *
 * @param callback - What `createWechatCallback` of `@scanauth/wechat` returned.
 *
 * @example
 * ```ts
 * app.use(wechatCallbackMiddleware(createWechatCallback({ auth, store, appId, token, encodingAESKey }), { path: '/wechat/callback' }))
 * ```
 */
export function wechatCallbackMiddleware(callback: WechatCallback, options: WechatCallbackMiddlewareOptions = {}): Middleware {
  const path = options.path ?? '/wechat/callback'
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_PUSH_MAX_BODY_BYTES
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next()
    let body: unknown
    try {
      body = await bodyOf(ctx, maxBodyBytes, true)
    } catch {
      // The client broke the body off: nothing usable arrived, and nothing is wrong with the app.
      return answer(ctx, 400, 'the request body could not be read')
    }
    // Over the limit, or a parsed object: the callback answers 413 or 415 once the signature is checked (B-wx-1, B-wx-3).
    const bodyTooLarge = (typeof body === 'string' || Buffer.isBuffer(body)) && Buffer.byteLength(body) > maxBodyBytes
    const response = await callback({ method: ctx.method, query: firstQueryValues(ctx.query), body: bodyTooLarge ? '' : (body ?? ''), bodyTooLarge })
    ctx.status = response.status
    ctx.set(response.headers ?? {})
    ctx.body = response.body
  }
}

/** A plain-text refusal, set directly rather than thrown, so Koa's error event never fires for input. */
function answer(ctx: Context, status: number, text: string): void {
  ctx.status = status
  ctx.type = 'text/plain; charset=utf-8'
  ctx.body = text
}
