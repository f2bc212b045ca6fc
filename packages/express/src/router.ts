/**
 * `scanAuthRouter`: the scanauth routes of core's `createHttpHandler` as an Express router.
 *
 * @module
 */
import { Router, type NextFunction, type Request, type Response } from 'express'
import { createHttpHandler, DEFAULT_MAX_BODY_BYTES, type HttpHandlerOptions, type ScanAuth } from '@scanauth/core'
import { clientGoneSignal, mayWait, writeEventStream } from '@scanauth/core/node'
import { bodyOf } from './body'
import { sendJson } from './send'

/**
 * Options of {@link scanAuthRouter}: those of core's `createHttpHandler` (`heartbeatMs`,
 * `maxBodyBytes`, `onError`, `purchaseUrl`), with `basePath` relative to where the router is mounted.
 */
export interface ScanAuthRouterOptions extends HttpHandlerOptions {
  /**
   * Where the routes live inside the router. Default `''`: mount the router at your prefix
   * (`app.use('/auth', scanAuthRouter(auth))`). Set it when you mount the router at the root
   * (`app.use(scanAuthRouter(auth, { basePath: '/auth' }))`).
   */
  basePath?: string
}

/**
 * The scanauth routes as an Express router: `app.use('/auth', scanAuthRouter(auth))`. Requests for
 * other paths fall through to `next()` untouched, their body unread, so the router lives beside the
 * app's own body parser (`express.json()` before it is fine: a parsed body is taken as it is).
 *
 * `GET status?scene=…&wait=N` (a long poll) and `GET events?scene=…` (Server-Sent Events) end their
 * wait when the client disconnects; the event stream is written chunk by chunk as it comes.
 *
 * @example
 * ```ts
 * app.use(express.json())
 * app.use('/auth', scanAuthRouter(auth, { onError: (error) => console.error(error) }))
 * ```
 */
export function scanAuthRouter(auth: ScanAuth, options: ScanAuthRouterOptions = {}): Router {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const handle = createHttpHandler(auth, { ...options, basePath: options.basePath ?? '', maxBodyBytes })
  const router = Router()
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Express computes req.path on every read: read it once.
      const path = req.path
      // Only a path that is ours has its body read; everything else goes on untouched.
      if (!handle.owns(path)) return next()
      const reads = req.method !== 'GET' && req.method !== 'HEAD'
      // Express 5 parses the query string on every read of req.query: read it once.
      const query = req.query
      // The long poll and the event stream end when the client goes away (B-wait-4); nothing else waits.
      const signal = mayWait(path, query) ? clientGoneSignal(res) : undefined
      // Only create_scene and purchase are limited per address (B-rate-5, B-rate-11): the polls do not pay for reading it.
      // `req.ip` follows X-Forwarded-For only as far as `app.set('trust proxy', …)` allows.
      const clientAddress = reads ? req.ip : undefined
      const request = { method: req.method, path, query, headers: req.headers, signal, clientAddress }
      const response = await handle({ ...request, body: reads ? await bodyOf(req, maxBodyBytes) : undefined })
      if (response === undefined) return next()
      // Nobody is left to read the answer of a wait the client abandoned.
      if (signal?.aborted === true) return
      if (response.events !== undefined) return await writeEventStream(res, response, response.events)
      sendJson(res, response)
    } catch (error) {
      next(error)
    }
  })
  return router
}
