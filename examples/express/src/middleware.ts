/**
 * Express 5 middleware for scanauth: thin translations of core's framework-neutral HTTP handler and of
 * the WeChat callback of `@scanauth/wechat`. Every rule lives there; this file only moves requests and
 * responses between Express and those functions.
 *
 * ```ts
 * app.use(express.json())                                   // the app's own parser is fine
 * app.use('/auth', scanAuthRouter(auth))                    // POST /auth/create_scene, GET /auth/status, ...
 * app.use('/wechat/callback', wechatCallbackMiddleware(createWechatCallback({ auth, token, appId })))
 * ```
 *
 * The WeChat callback needs the raw XML body to check it. It reads the body itself, so a global
 * `express.json()` does not get in its way; mount it before any global XML or text parser, or use
 * `express.raw({ type: '*\/*' })` / `express.text()` on its route (a string or Buffer in `req.body`
 * or `req.rawBody` is used as is).
 *
 * @module
 */
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { createHttpHandler, firstQueryValues, readRawBody, type HttpHandlerOptions, type HttpResponse, type ScanAuth } from '@scanauth/core'
import type { WechatCallback } from '@scanauth/wechat'

export type { WechatCallback }

/** Options of {@link scanAuthRouter}. */
export interface ScanAuthRouterOptions {
  /** Where the routes live inside the router. Default `''`: mount the router at your prefix (`/auth`). */
  basePath?: string
  /** Largest request body accepted, in bytes. Default 16 KiB. */
  maxBodyBytes?: number
  /** Called with every unexpected error (a store failure) before the 500 answer, e.g. to log it. */
  onError?: HttpHandlerOptions['onError']
}

const DEFAULT_MAX_BODY = 16 * 1024

/**
 * The scanauth routes as an Express router: `app.use('/auth', scanAuthRouter(auth))`. Requests for
 * other paths fall through to `next()` untouched (their body unread).
 */
export function scanAuthRouter(auth: ScanAuth, options: ScanAuthRouterOptions = {}): Router {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  const handle = createHttpHandler(auth, { basePath: options.basePath ?? '', maxBodyBytes, onError: options.onError })
  const router = Router()
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Only a path that is ours has its body read; everything else goes on untouched.
      if (!handle.owns(req.path)) return next()
      const reads = req.method !== 'GET' && req.method !== 'HEAD'
      const request = { method: req.method, path: req.path, query: req.query, headers: req.headers }
      const response = await handle({ ...request, body: reads ? await bodyOf(req, maxBodyBytes) : undefined })
      if (response === undefined) return next()
      sendJson(res, response)
    } catch (error) {
      next(error)
    }
  })
  return router
}

/**
 * The WeChat callback (URL verification `GET` and event `POST`) as Express middleware. Mount it at
 * the callback path: `app.use('/wechat/callback', wechatCallbackMiddleware(callback))`.
 */
export function wechatCallbackMiddleware(callback: WechatCallback, options: { maxBodyBytes?: number } = {}): RequestHandler {
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024
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

/**
 * Sends a handler response as it is: status, headers, the JSON body and its length. Not `res.json`:
 * its ETag (a SHA-1 of every body) and freshness check are wasted on answers marked `no-store`, and
 * cost about a fifth of a pending poll's time in Express (see docs/benchmarks.md). A `HEAD` request
 * gets the headers only (Node drops the body).
 */
function sendJson(res: Response, response: HttpResponse): void {
  const body = JSON.stringify(response.body)
  res.statusCode = response.status
  const headers = response.headers ?? {}
  for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string)
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(body)
}

/** The body: the raw bytes of an unread stream, or what a parser that read it left (`rawBody`, else `body`). */
async function bodyOf(req: Request, maxBytes: number): Promise<unknown> {
  if (!req.readableEnded) return readRawBody(req, maxBytes)
  return (req as { rawBody?: unknown }).rawBody ?? req.body
}
