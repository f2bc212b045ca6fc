/**
 * `wechatPayNotifyMiddleware`: a WeChat Pay notification handler (`createWechatPayNotificationHandler`
 * of `@scanauth/wechat-pay`) as Express middleware.
 *
 * WeChat Pay signs the exact bytes it sends, so the handler must see them, not JSON parsed and
 * written out again (key order, spaces and escapes would differ, and the signature with them). The
 * middleware reads the body itself when nothing has read it yet, so mount it before `express.json()`;
 * behind a parser it takes the bytes the parser kept (`req.rawBody`, which `express.json({ verify:
 * keepRawBody })` keeps, or the Buffer `express.raw()` leaves in `req.body`). If only a parsed object is left it answers 500 `FAIL` and reports why to
 * `onError`: WeChat Pay then sends the notification again, so nothing is lost while the mount is fixed.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { RequestHandler } from 'express'
import { readRawBody } from '@scanauth/core/node'
import { DEFAULT_NOTIFY_MAX_BODY_BYTES, type RawNotificationHandler } from './raw-notification'

/** Options of {@link wechatPayNotifyMiddleware}. */
export interface WechatPayNotifyMiddlewareOptions {
  /** Largest notification accepted, in bytes; a larger one is answered 413. Default 64 KiB (real ones are about 1 KiB). */
  maxBodyBytes?: number
  /** Told why a notification could not be handed over (the raw body is gone, or the handler threw). */
  onError?: (error: unknown) => void
}

/**
 * A `verify` function for `express.json()` that keeps each request's raw bytes as `req.rawBody`, so
 * a global JSON parser and the notification route can live side by side:
 * `app.use(express.json({ verify: keepRawBody }))`.
 */
export function keepRawBody(req: IncomingMessage, _res: unknown, buffer: Buffer): void {
  ;(req as unknown as { rawBody?: Buffer }).rawBody = buffer
}

/** WeChat Pay's failure body: a non-2xx answer with `{"code":"FAIL","message"}` makes it send again. */
function fail(message: string): string {
  return JSON.stringify({ code: 'FAIL', message })
}

/**
 * The WeChat Pay notification endpoint as Express middleware. Mount it at the `notify_url` path:
 * `app.use('/wechatpay/notify', wechatPayNotifyMiddleware(handler))`.
 *
 * @param handler - What `createWechatPayNotificationHandler` of `@scanauth/wechat-pay` returned.
 *
 * @example
 * ```ts
 * app.use('/wechatpay/notify', wechatPayNotifyMiddleware(createWechatPayNotificationHandler({ auth, verificationKeys, apiV3Key })))
 * app.use(express.json())   // after it, or express.json({ verify: keepRawBody }) anywhere
 * ```
 */
export function wechatPayNotifyMiddleware(handler: RawNotificationHandler, options: WechatPayNotifyMiddlewareOptions = {}): RequestHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_NOTIFY_MAX_BODY_BYTES
  return async (req, res, next) => {
    if (req.method !== 'POST') return void res.status(405).set('allow', 'POST').type('application/json').send(fail('use POST'))
    let body: Uint8Array | string
    if (!req.readableEnded) {
      try {
        body = await readRawBody(req, maxBodyBytes)
      } catch {
        if (!res.headersSent) res.status(400).type('application/json').send(fail('the request body could not be read'))
        return
      }
    } else {
      // `express.raw()` on the route leaves the bytes themselves in `req.body`. A string body is not
      // taken: `express.text()` decoded it by a charset, and re-encoding need not give back what was signed.
      const kept = (req as { rawBody?: unknown }).rawBody ?? (Buffer.isBuffer(req.body) ? req.body : undefined)
      if (!Buffer.isBuffer(kept) && typeof kept !== 'string') {
        options.onError?.(new Error('wechatPayNotifyMiddleware: a body parser read the notification and kept no raw bytes; mount the middleware before express.json(), use express.json({ verify: keepRawBody }), or express.raw() on its route'))
        return void res.status(500).type('application/json').send(fail('the raw body is not available'))
      }
      body = kept
    }
    if (Buffer.byteLength(body) > maxBodyBytes) return void res.status(413).type('application/json').send(fail('the notification is too large'))
    try {
      const answer = await handler({ headers: req.headers, body })
      res.status(answer.status).set(answer.headers ?? {})
      if (answer.body === undefined || answer.body === '') res.end()
      else res.send(answer.body)
    } catch (error) {
      options.onError?.(error)
      next(error)
    }
  }
}
