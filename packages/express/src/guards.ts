/**
 * `requireSession` and `requireAuthorization`: core's route guard (`createRouteGuard`,
 * docs/behaviour.md B-guard-1…6) as Express middleware for the app's own routes. The verified
 * session goes on `req.scanauth`, typed for every Express `Request` by the declaration below.
 *
 * @module
 */
import type { Request, RequestHandler } from 'express'
import { createRouteGuard, type AuthorizationGuardOptions, type RouteGuardOptions, type ScanAuth, type VerifiedSession } from '@scanauth/core'
import { sendJson } from './send'

declare global {
  // Express's own way to add a property to every Request: merging into its global namespace.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /**
       * The session that `requireSession` or `requireAuthorization` of `@scanauth/express` verified
       * (with its `authorization` after the consumption, when points were spent). Absent on a route
       * without a guard.
       */
      scanauth?: VerifiedSession
    }
  }
}

/** Options of {@link requireSession}. */
export interface SessionGuardOptions extends RouteGuardOptions {
  /** The scanauth instance whose sessions are checked. */
  auth: ScanAuth
  /**
   * Called with every unexpected error (a store failure) before the guard answers 500
   * `{detail: 'Internal error'}`, so the app can log it. The route does not run.
   */
  onError?(error: unknown, req: Request): void
}

/** Options of {@link requireAuthorization}: those of {@link requireSession}, with `points`. */
export interface AuthorizationGuardMiddlewareOptions extends SessionGuardOptions, AuthorizationGuardOptions {}

/**
 * Middleware that lets a request through only with a live session: `Authorization: Bearer
 * <token>` naming a session that is neither unknown nor ended (B-guard-1). Otherwise it answers 401
 * `{detail}` with `WWW-Authenticate: Bearer`; else it puts the verified session on `req.scanauth`
 * (its `authorization` may be null: see {@link requireAuthorization}) and calls `next()`.
 *
 * @example
 * ```ts
 * app.get('/api/me', requireSession({ auth }), (req, res) => void res.json(req.scanauth))
 * ```
 */
export function requireSession(options: SessionGuardOptions): RequestHandler {
  return guardMiddleware(options, false)
}

/**
 * Middleware that lets a request through only with a live session and a current authorization.
 * A user without one is answered 402 `{status: 'need_purchase', plans_url: '{basePath}/plans',
 * detail}` (B-guard-3). With `points`, each request spends them through `auth.consume` before the
 * route runs, atomically, at most once per `Idempotency-Key` header: a replayed key is answered 409
 * `{error: 'idempotency_replay'}` and the route does not run again (B-guard-4, B-guard-5;
 * `replays: 'pass'` lets it run with `replayed: true` on the session, spending nothing);
 * `insufficient_points` is answered 402 like `need_purchase`. `req.scanauth.authorization` is the
 * authorization after the consumption.
 *
 * @example
 * ```ts
 * app.post('/api/export', requireAuthorization({ auth, points: 5 }), (req, res) => {
 *   res.json({ pointsLeft: req.scanauth?.authorization?.remainingPoints })
 * })
 * ```
 */
export function requireAuthorization(options: AuthorizationGuardMiddlewareOptions): RequestHandler {
  return guardMiddleware(options, true)
}

function guardMiddleware(options: AuthorizationGuardMiddlewareOptions, authorization: boolean): RequestHandler {
  const guard = createRouteGuard(options.auth, { ...options, authorization })
  return async (req, res, next) => {
    try {
      // Node's header names are lower-case; a repeated one is joined (or, for Authorization, the first kept).
      const decided = await guard((name) => headerOf(req, name), { method: req.method, path: pathOf(req.originalUrl) })
      if (decided.ok) {
        req.scanauth = decided.session
        return next()
      }
      if (decided.error !== undefined) options.onError?.(decided.error, req)
      sendJson(res, decided.response)
    } catch (error) {
      // Only an onError that throws lands here: the guard itself never throws.
      next(error)
    }
  }
}

/** The path of a request target, without its query string: the route a guard's key is bound to. */
function pathOf(target: string): string {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

function headerOf(req: Request, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}
