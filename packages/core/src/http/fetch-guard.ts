/**
 * `requireSessionFetch` and `requireAuthorizationFetch`: the route guards (docs/behaviour.md,
 * B-guard-1…6) for hosts that speak the Fetch standard, next to `createFetchHandler`. Each is a
 * function from a `Request` to the verified session, or to the `Response` to answer instead, so a
 * Hono middleware is two lines:
 *
 * ```ts
 * const verified = await guard(c.req.raw)
 * return verified instanceof Response ? verified : (c.set('scanauth', verified), next())
 * ```
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import { createRouteGuard, type AuthorizationGuardOptions, type RouteGuardOptions, type VerifiedSession } from './guard'
import type { HttpResponse } from './types'

/** Options of {@link requireSessionFetch}. */
export interface FetchSessionGuardOptions extends RouteGuardOptions {
  /** The scanauth instance whose sessions are checked. */
  auth: ScanAuth
  /**
   * Called with every unexpected error (a store failure) before the guard answers 500
   * `{detail: 'Internal error'}`, so the app can log it.
   */
  onError?(error: unknown, request: Request): void
}

/** Options of {@link requireAuthorizationFetch}. */
export interface FetchAuthorizationGuardOptions extends FetchSessionGuardOptions, AuthorizationGuardOptions {}

/** A Fetch guard: the verified session, or the `Response` to answer instead of running the route. */
export type FetchGuard = (request: Request) => Promise<VerifiedSession | Response>

/**
 * A guard that requires a live session: `Authorization: Bearer <token>` naming a session that is
 * neither unknown nor ended, else a 401 `{detail}` `Response` with `WWW-Authenticate: Bearer`
 * (B-guard-1). Resolves the verified session otherwise (B-guard-2).
 *
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import { requireSessionFetch, type ScanAuth, type VerifiedSession } from '@scanauth/core'
 *
 * declare const auth: ScanAuth
 * const signedIn = requireSessionFetch({ auth })
 * const app = new Hono<{ Variables: { scanauth: VerifiedSession } }>()
 * app.use('/api/*', async (c, next) => {
 *   const verified = await signedIn(c.req.raw)
 *   return verified instanceof Response ? verified : (c.set('scanauth', verified), next())
 * })
 * app.get('/api/me', (c) => c.json(c.get('scanauth')))
 * ```
 */
export function requireSessionFetch(options: FetchSessionGuardOptions): FetchGuard {
  return fetchGuard(options, false)
}

/**
 * A guard that requires a live session and a current authorization: a user without one is
 * answered 402 `{status: 'need_purchase', plans_url, detail}` (B-guard-3). With `points`, each
 * request spends them through `auth.consume` before the route runs, at most once per
 * `Idempotency-Key`: a replayed key is answered 409 `{error: 'idempotency_replay'}` without running
 * the route (B-guard-4, B-guard-5); `insufficient_points` is answered like `need_purchase`.
 *
 * @example
 * ```ts
 * import { requireAuthorizationFetch, type ScanAuth } from '@scanauth/core'
 *
 * declare const auth: ScanAuth
 * const oneExport = requireAuthorizationFetch({ auth, points: 1, basePath: '/auth' })
 * export async function POST(request: Request): Promise<Response> {   // a Next.js route handler
 *   const verified = await oneExport(request)
 *   if (verified instanceof Response) return verified
 *   return Response.json({ left: verified.authorization?.remainingPoints })
 * }
 * ```
 */
export function requireAuthorizationFetch(options: FetchAuthorizationGuardOptions): FetchGuard {
  return fetchGuard(options, true)
}

function fetchGuard(options: FetchAuthorizationGuardOptions, authorization: boolean): FetchGuard {
  const guard = createRouteGuard(options.auth, { ...options, authorization })
  return async (request) => {
    const decided = await guard((name) => request.headers.get(name) ?? undefined, { method: request.method, path: pathOfUrl(request.url) })
    if (decided.ok) return decided.session
    if (decided.error !== undefined) options.onError?.(decided.error, request)
    return toResponse(decided.response)
  }
}

/** The path of an absolute URL, without query or fragment, without building a `URL` per request. */
function pathOfUrl(url: string): string {
  const authority = url.indexOf('//')
  const start = url.indexOf('/', authority === -1 ? 0 : authority + 2)
  if (start === -1) return '/'
  const end = url.slice(start).search(/[?#]/)
  return end === -1 ? url.slice(start) : url.slice(start, start + end)
}

function toResponse(answer: HttpResponse): Response {
  const text = JSON.stringify(answer.body)
  const headers = new Headers(answer.headers)
  headers.set('content-length', String(new TextEncoder().encode(text).byteLength))
  return new Response(text, { status: answer.status, headers })
}
