/**
 * `wechatCallbackMiddleware`: the WeChat callback of `@scanauth/wechat` as Express middleware.
 *
 * The callback needs the raw XML body to check it. It reads the body itself, so a global
 * `express.json()` does not get in its way for WeChat's own `text/xml` pushes; mount it before any
 * global XML or text parser, or use `express.raw({ type: '*\/*' })` / `express.text()` on its route
 * (a string or Buffer in `req.body` or `req.rawBody` is used as is).
 *
 * Whatever body it finds goes to the callback, which checks the signature first and then refuses a
 * body it cannot use with a 4xx: a JSON request that `express.json()` turned into an object is a
 * 415, not an error (docs/behaviour.md B-wx-3). So no input makes this middleware call
 * `next(error)`; only a callback that broke its promise never to throw would.
 *
 * @module
 */
import type { RequestHandler } from 'express'
import { firstQueryValues } from '@scanauth/core/node'
import { DEFAULT_PUSH_MAX_BODY_BYTES, type WechatCallback } from '@scanauth/wechat'
import { bodyOf } from './body'

/** Options of {@link wechatCallbackMiddleware}. */
export interface WechatCallbackMiddlewareOptions {
  /** Largest push accepted, in bytes; a larger one is answered 413. Default 64 KiB. */
  maxBodyBytes?: number
}

/**
 * The WeChat callback (URL verification `GET` and event `POST`) as Express middleware. Mount it at
 * the callback path: `app.use('/wechat/callback', wechatCallbackMiddleware(callback))`.
 *
 * @param callback - What `createWechatCallback` of `@scanauth/wechat` returned.
 *
 * @example
 * ```ts
 * app.use('/wechat/callback', wechatCallbackMiddleware(createWechatCallback({ auth, store, appId, token, encodingAESKey })))
 * ```
 */
export function wechatCallbackMiddleware(callback: WechatCallback, options: WechatCallbackMiddlewareOptions = {}): RequestHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_PUSH_MAX_BODY_BYTES
  return async (req, res, next) => {
    let body: unknown
    try {
      body = await bodyOf(req, maxBodyBytes)
    } catch {
      // The client broke the body off: nothing usable arrived, and nothing is wrong with the app.
      if (!res.headersSent) res.status(400).type('text').send('the request body could not be read')
      return
    }
    // Over the limit, or a parsed object: the callback answers 413 or 415 once the signature is checked (B-wx-1, B-wx-3).
    const bodyTooLarge = (typeof body === 'string' || Buffer.isBuffer(body)) && Buffer.byteLength(body) > maxBodyBytes
    try {
      const response = await callback({ method: req.method, query: firstQueryValues(req.query), body: bodyTooLarge ? '' : (body ?? ''), bodyTooLarge })
      res.status(response.status).set(response.headers ?? {}).send(response.body)
    } catch (error) {
      next(error)
    }
  }
}
