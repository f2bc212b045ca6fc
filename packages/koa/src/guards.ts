/**
 * `requireSession` and `requireAuthorization`: core's route guard (`createRouteGuard`,
 * docs/behaviour.md B-guard-1…6) as Koa middleware for the app's own routes. The verified session
 * goes on `ctx.state.scanauth`; type the app's state with {@link ScanAuthState} to read it typed.
 *
 * @module
 */
import type { Context, Middleware, Next, ParameterizedContext } from 'koa'
import { createRouteGuard, type AuthorizationGuardOptions, type HttpResponse, type RouteGuardOptions, type ScanAuth, type VerifiedSession } from '@scanauth/core'

/**
 * The state the guards set: `ctx.state.scanauth`. Use it as the app's or a router's state type
 * (`new Koa<ScanAuthState>()`, `Middleware<ScanAuthState>`) to read the session typed.
 */
export interface ScanAuthState {
  /** The verified session (its `authorization` after the consumption, when points were spent). */
  scanauth: VerifiedSession
}

/** Options of {@link requireSession}. */
export interface SessionGuardOptions extends RouteGuardOptions {
  /** The scanauth instance whose sessions are checked. */
  auth: ScanAuth
  /**
   * Called with every unexpected error (a store failure) before the guard answers 500
   * `{detail: 'Internal error'}`, so the app can log it. The route does not run.
   */
  onError?(error: unknown, ctx: Context): void
}

/** Options of {@link requireAuthorization}: those of {@link requireSession}, with `points`. */
export interface AuthorizationGuardMiddlewareOptions extends SessionGuardOptions, AuthorizationGuardOptions {}

/**
 * Middleware that lets a request through only with a live session: `Authorization: Bearer
 * <token>` naming a session that is neither unknown nor ended (B-guard-1). Otherwise it answers 401
 * `{detail}` with `WWW-Authenticate: Bearer`; else it puts the verified session on
 * `ctx.state.scanauth` (its `authorization` may be null) and calls `next()`.
 *
 * @example
 * ```ts
 * router.get('/api/me', requireSession({ auth }), (ctx) => { ctx.body = ctx.state.scanauth })
 * ```
 */
export function requireSession(options: SessionGuardOptions): Middleware<ScanAuthState> {
  return guardMiddleware(options, false)
}

/**
 * Middleware that lets a request through only with a live session and a current authorization.
 * A user without one is answered 402 `{status: 'need_purchase', plans_url: '{basePath}/plans',
 * detail}` (B-guard-3). With `points`, each request spends them through `auth.consume` before the
 * route runs, atomically, at most once per `Idempotency-Key` header: a replayed key is answered 409
 * `{error: 'idempotency_replay'}` and the route does not run again (B-guard-4, B-guard-5;
 * `replays: 'pass'` lets it run with `replayed: true` on the session, spending nothing);
 * `insufficient_points` is answered 402 like `need_purchase`.
 *
 * @example
 * ```ts
 * router.post('/api/export', requireAuthorization({ auth, points: 5 }), (ctx) => { ctx.body = { ok: true } })
 * ```
 */
export function requireAuthorization(options: AuthorizationGuardMiddlewareOptions): Middleware<ScanAuthState> {
  return guardMiddleware(options, true)
}

function guardMiddleware(options: AuthorizationGuardMiddlewareOptions, authorization: boolean): Middleware<ScanAuthState> {
  const guard = createRouteGuard(options.auth, { ...options, authorization })
  return async (ctx: ParameterizedContext<ScanAuthState>, next: Next) => {
    const decided = await guard((name) => headerOf(ctx, name), { method: ctx.method, path: pathOf(ctx.originalUrl) })
    if (decided.ok) {
      ctx.state.scanauth = decided.session
      return next()
    }
    if (decided.error !== undefined) options.onError?.(decided.error, ctx as unknown as Context)
    send(ctx, decided.response)
  }
}

/** The path of a request target, without its query string: the route a guard's key is bound to. */
function pathOf(target: string): string {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

function headerOf(ctx: ParameterizedContext, name: string): string | undefined {
  const value = ctx.req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The answer as the routes send theirs (`scanauth-middleware.ts`): our headers, the JSON text. */
function send(ctx: ParameterizedContext, response: HttpResponse): void {
  ctx.status = response.status
  const headers = response.headers ?? {}
  for (const name of Object.keys(headers)) ctx.res.setHeader(name, headers[name] as string)
  ctx.body = JSON.stringify(response.body)
}
