/**
 * `scanAuthRouter`: the scanauth routes of core's `createHttpHandler` as an Express router.
 *
 * @module
 */
import { Router, type NextFunction, type Request, type Response } from 'express'
import { createHttpHandler, type HttpHandlerOptions, type ScanAuth } from '@scanauth/core'
import { bodyOf } from './body'
import { sendJson } from './send'

/** Options of {@link scanAuthRouter}. */
export interface ScanAuthRouterOptions {
  /**
   * Where the routes live inside the router. Default `''`: mount the router at your prefix
   * (`app.use('/auth', scanAuthRouter(auth))`). Set it when you mount the router at the root
   * (`app.use(scanAuthRouter(auth, { basePath: '/auth' }))`).
   */
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
 * The scanauth routes as an Express router: `app.use('/auth', scanAuthRouter(auth))`. Requests for
 * other paths fall through to `next()` untouched, their body unread, so the router lives beside the
 * app's own body parser (`express.json()` before it is fine: a parsed body is taken as it is).
 *
 * @example
 * ```ts
 * app.use(express.json())
 * app.use('/auth', scanAuthRouter(auth, { onError: (error) => console.error(error) }))
 * ```
 */
export function scanAuthRouter(auth: ScanAuth, options: ScanAuthRouterOptions = {}): Router {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const handle = createHttpHandler(auth, { basePath: options.basePath ?? '', maxBodyBytes, onError: options.onError, purchaseUrl: options.purchaseUrl })
  const router = Router()
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Only a path that is ours has its body read; everything else goes on untouched.
      if (!handle.owns(req.path)) return next()
      const reads = req.method !== 'GET' && req.method !== 'HEAD'
      // `req.ip` follows X-Forwarded-For only as far as `app.set('trust proxy', …)` allows.
      const request = { method: req.method, path: req.path, query: req.query, headers: req.headers, clientAddress: req.ip }
      const response = await handle({ ...request, body: reads ? await bodyOf(req, maxBodyBytes) : undefined })
      if (response === undefined) return next()
      sendJson(res, response)
    } catch (error) {
      next(error)
    }
  })
  return router
}
