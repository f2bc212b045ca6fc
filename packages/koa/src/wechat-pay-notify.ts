/**
 * `wechatPayNotifyMiddleware`: a WeChat Pay notification handler (`createWechatPayNotificationHandler`
 * of `@scanauth/wechat-pay`) as Koa middleware.
 *
 * WeChat Pay signs the exact bytes it sends, so the handler must see them, never JSON parsed and
 * written out again. The middleware reads the stream itself when nothing has read it, and takes
 * `ctx.request.rawBody` when a parser before it kept one (`@koa/bodyparser` does for JSON). If only a
 * parsed object is left it answers 500 `FAIL` and reports why to `onError`: WeChat Pay then sends the
 * notification again, so nothing is lost while the mount is fixed. No input makes it throw.
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import { readRawBody } from '@scanauth/core/node'
import { DEFAULT_NOTIFY_MAX_BODY_BYTES, type RawNotificationHandler } from './raw-notification'

/** Options of {@link wechatPayNotifyMiddleware}. */
export interface WechatPayNotifyMiddlewareOptions {
  /** The notification path, the path of your `notify_url`. Default `/wechatpay/notify`. */
  path?: string
  /** Largest notification accepted, in bytes; a larger one is answered 413. Default 64 KiB. */
  maxBodyBytes?: number
  /** Told why a notification could not be handed over (the raw body is gone, or the handler threw). */
  onError?: (error: unknown) => void
}

/** WeChat Pay's failure body: a non-2xx answer with `{"code":"FAIL","message"}` makes it send again. */
function fail(ctx: Context, status: number, message: string): void {
  ctx.status = status
  ctx.type = 'application/json'
  ctx.body = JSON.stringify({ code: 'FAIL', message })
}

/**
 * The WeChat Pay notification endpoint at `path` (default `/wechatpay/notify`).
 *
 * @param handler - What `createWechatPayNotificationHandler` of `@scanauth/wechat-pay` returned.
 *
 * @example
 * ```ts
 * app.use(wechatPayNotifyMiddleware(createWechatPayNotificationHandler({ auth, verificationKeys, apiV3Key }), { path: '/wechatpay/notify' }))
 * ```
 */
export function wechatPayNotifyMiddleware(handler: RawNotificationHandler, options: WechatPayNotifyMiddlewareOptions = {}): Middleware {
  const path = options.path ?? '/wechatpay/notify'
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_NOTIFY_MAX_BODY_BYTES
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next()
    if (ctx.method !== 'POST') {
      ctx.set('allow', 'POST')
      return fail(ctx, 405, 'use POST')
    }
    let body: Uint8Array | string
    if (!ctx.req.readableEnded) {
      try {
        body = await readRawBody(ctx.req, maxBodyBytes)
      } catch {
        return fail(ctx, 400, 'the request body could not be read')
      }
    } else {
      const kept = (ctx.request as { rawBody?: unknown }).rawBody
      if (!Buffer.isBuffer(kept) && typeof kept !== 'string') {
        options.onError?.(new Error('wechatPayNotifyMiddleware: a body parser read the notification and kept no raw body; mount the middleware before it'))
        return fail(ctx, 500, 'the raw body is not available')
      }
      body = kept
    }
    if (Buffer.byteLength(body) > maxBodyBytes) return fail(ctx, 413, 'the notification is too large')
    try {
      const answer = await handler({ headers: ctx.req.headers, body })
      ctx.status = answer.status
      ctx.set(answer.headers ?? {})
      ctx.body = answer.body === undefined || answer.body === '' ? null : answer.body
    } catch (error) {
      // The handler promises never to throw; if it did, WeChat Pay retries on the 500.
      options.onError?.(error)
      fail(ctx, 500, 'internal error')
    }
  }
}
