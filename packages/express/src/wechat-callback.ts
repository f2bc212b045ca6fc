/**
 * `wechatCallbackMiddleware`: the WeChat callback of `@scanauth/wechat` as Express middleware.
 *
 * The callback needs the raw XML body to check it. It reads the body itself, so a global
 * `express.json()` does not get in its way; mount it before any global XML or text parser, or use
 * `express.raw({ type: '*\/*' })` / `express.text()` on its route (a string or Buffer in `req.body`
 * or `req.rawBody` is used as is).
 *
 * @module
 */
import type { RequestHandler } from 'express'
import { firstQueryValues } from '@scanauth/core'
import type { WechatCallback } from '@scanauth/wechat'
import { bodyOf } from './body'

/** Options of {@link wechatCallbackMiddleware}. */
export interface WechatCallbackMiddlewareOptions {
  /** Largest push accepted, in bytes; a larger one is answered 413. Default 64 KiB. */
  maxBodyBytes?: number
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024

/**
 * The WeChat callback (URL verification `GET` and event `POST`) as Express middleware. Mount it at
 * the callback path: `app.use('/wechat/callback', wechatCallbackMiddleware(callback))`.
 *
 * @param callback - What `createWechatCallback` of `@scanauth/wechat` returned.
 *
 * @example
 * ```ts
 * app.use('/wechat/callback', wechatCallbackMiddleware(createWechatCallback({ auth, appId, token, encodingAESKey })))
 * ```
 */
export function wechatCallbackMiddleware(callback: WechatCallback, options: WechatCallbackMiddlewareOptions = {}): RequestHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  return async (req, res, next) => {
    try {
      const body = await bodyOf(req, maxBodyBytes)
      if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
        throw new Error('wechatCallbackMiddleware needs the raw body: mount it before a global XML/text parser, or use express.raw() on its route')
      }
      if (body !== undefined && Buffer.byteLength(body) > maxBodyBytes) return void res.status(413).type('text').send('Request body is too large')
      const response = await callback({ method: req.method, query: firstQueryValues(req.query), body: body ?? '' })
      res.status(response.status).set(response.headers ?? {}).send(response.body)
    } catch (error) {
      next(error)
    }
  }
}
