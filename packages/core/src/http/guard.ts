/**
 * `createRouteGuard`: the check in front of an app's own routes (docs/behaviour.md, B-guard-1…6),
 * framework-neutral. It reads the request's headers through a function, verifies the Bearer
 * session, optionally requires a current authorization and spends points, and answers either the
 * verified session or the response to send instead of running the route. It never throws: an
 * unexpected failure comes back as a 500 answer with the error, for the adapter's `onError`.
 *
 * `requireSession`/`requireAuthorization` of `@scanauth/express` and `@scanauth/koa`, and
 * `requireSessionFetch`/`requireAuthorizationFetch` here, are thin translations of it.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { ScanAuth, SessionInfo } from '../service/api'
import { ScanAuthError } from '../errors'
import { bearerOf } from './request'
import type { HttpResponse } from './types'
import { errorBody } from './wire'

/** The session a guard let through, as it places it on the request (`req.scanauth`, `ctx.state.scanauth`). */
export interface VerifiedSession extends SessionInfo {
  /** The session token the request presented as `Authorization: Bearer <token>`. */
  token: string
  /**
   * Present (and `true`) only on a replay let through by `replays: 'pass'`: this request repeats an
   * earlier one's idempotency key, nothing was spent for it, and `authorization` is what the first
   * request saw. The route must answer it without doing the paid work again (B-guard-5).
   */
  replayed?: true
}

/** Options shared by every guard, whatever the framework. */
export interface RouteGuardOptions {
  /**
   * Where the scanauth routes are served, as the full path (`createHttpHandler`'s `basePath`):
   * a `need_purchase` answer points at `{basePath}/plans`. Default `/auth`.
   */
  basePath?: string
  /**
   * The request header whose value makes a consumption idempotent (B-guard-5), compared without
   * regard to case. Default `idempotency-key`; `false` turns it off (every request spends).
   */
  idempotencyHeader?: string | false
  /**
   * What a guard with `points` does with a replay, a request whose idempotency key was already spent
   * by an earlier request of the session (B-guard-5). `'refuse'` (default): answer 409
   * `{error: 'idempotency_replay', detail}` and do not run the route, so that one payment never
   * buys the route twice. `'pass'`: run the route with `replayed: true` on the verified session,
   * for an app that answers replays itself (from a stored response); nothing is spent either way.
   */
  replays?: 'refuse' | 'pass'
}

/** Options of the guard that requires a current authorization. */
export interface AuthorizationGuardOptions extends RouteGuardOptions {
  /**
   * Points to spend per request (a positive integer), atomically, through `auth.consume`
   * (B-guard-4). Without it, a current authorization is required and nothing is spent.
   */
  points?: number
}

/** What a guard decided: let the request through with its session, or answer `response` instead. */
export type RouteGuardResult =
  | {
      /** Let through. */
      ok: true
      /** The verified session (its `authorization` after the consumption, when points were spent). */
      session: VerifiedSession
    }
  | {
      /** Refused: send `response` and do not run the route. */
      ok: false
      /** The answer: 401, 402, or the status of a `ScanAuthError`; 500 for an unexpected failure. */
      response: HttpResponse
      /** The unexpected failure behind a 500, for the app's `onError`; absent otherwise. */
      error?: unknown
    }

/** The request line a guard binds an idempotency key to (B-guard-5). */
export interface GuardedRequest {
  /** The request's method, e.g. `POST` (compared in upper case). */
  method: string
  /** The request's path as the app received it, without the query string, e.g. `/api/export`. */
  path: string
}

/**
 * A guard: reads a request header by its lower-case name (`undefined` when absent) and decides.
 * `request` names the route a key of a guard with points is bound to: without it, every route
 * counts as the same one. It never throws.
 */
export type RouteGuard = (header: (name: string) => string | undefined, request?: GuardedRequest) => Promise<RouteGuardResult>

/** The longest request id accepted in the idempotency header: the key's prefix takes the rest of 128. */
export const MAX_REQUEST_ID_LENGTH = 99

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }

function answer(status: number, body: unknown, extra: Record<string, string> = {}): RouteGuardResult {
  return { ok: false, response: { status, headers: { ...JSON_HEADERS, ...extra }, body } }
}

/** A refusal's body: a stable code for programs beside the `detail` for people (docs/errors.md). */
function refusal(error: string, detail: string): { error: string; detail: string } {
  return { error, detail }
}

const BEARER = { 'www-authenticate': 'Bearer' }
const NO_TOKEN = answer(401, refusal('unauthorized', 'Authorization: Bearer <session token> is required'), BEARER)
const UNKNOWN_SESSION = answer(401, refusal('unauthorized', 'Session is unknown or has expired'), BEARER)

/** The 409 of B-guard-5: the key was spent by an earlier request; the route does not run again. */
const REPLAYED = answer(
  409,
  refusal('idempotency_replay', 'This Idempotency-Key was already used by an earlier request of this session; the request was not run again'),
)

const PURCHASE_DETAIL = {
  need_purchase: 'A purchase is needed: no current authorization',
  insufficient_points: 'Not enough points left for this request',
} as const

/**
 * Creates a guard for an app's own routes. With `authorization: false` it requires a live session
 * (B-guard-1, B-guard-2); with `authorization: true`, also a current authorization, spending
 * `points` per request when given (B-guard-3…5).
 *
 * @throws ScanAuthError `invalid_options` for `points` that is not a positive integer, an
 *   `idempotencyHeader` that is not a header name, or `replays` other than `'refuse'` or `'pass'`.
 */
export function createRouteGuard(auth: ScanAuth, options: AuthorizationGuardOptions & { authorization: boolean }): RouteGuard {
  const { authorization: needsAuthorization, points } = options
  if (points !== undefined && !(Number.isSafeInteger(points) && points >= 1)) {
    throw new ScanAuthError('invalid_options', 'route guard: points must be a positive integer')
  }
  const keyHeader = options.idempotencyHeader === undefined ? 'idempotency-key' : options.idempotencyHeader
  if (keyHeader !== false && !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(keyHeader)) {
    throw new ScanAuthError('invalid_options', 'route guard: idempotencyHeader must be a header name, or false')
  }
  const keyHeaderName = keyHeader === false ? false : keyHeader.toLowerCase()
  const replays = options.replays ?? 'refuse'
  if (replays !== 'refuse' && replays !== 'pass') {
    throw new ScanAuthError('invalid_options', "route guard: replays must be 'refuse' or 'pass'")
  }
  const base = normalizeBase(options.basePath ?? '/auth')
  const plansUrl = `${base}/plans`
  // The 402 of B-guard-3: the request would succeed once the user buys; the plans say what to buy.
  const purchase = (status: 'need_purchase' | 'insufficient_points') =>
    answer(402, { status, plans_url: plansUrl, error: status, detail: PURCHASE_DETAIL[status] })

  return async function guard(header, request) {
    const token = bearerOf(header('authorization'))
    if (token === undefined) return NO_TOKEN
    try {
      // One store round trip where the store allows it (B-load-2).
      const info = await auth.verifySession(token)
      if (info === null) return UNKNOWN_SESSION
      const session: VerifiedSession = { ...info, token }
      if (!needsAuthorization) return { ok: true, session }
      if (points === undefined) return info.authorization === null ? purchase('need_purchase') : { ok: true, session }
      // With points, consume decides even without a current authorization: a repeat of a keyed request
      // answers what it answered the first time (B-idem-3), even if that spent the last point.
      const requestId = keyHeaderName === false ? undefined : header(keyHeaderName)
      if (requestId !== undefined && (requestId === '' || requestId.length > MAX_REQUEST_ID_LENGTH)) {
        return answer(400, refusal('invalid_request', `${keyHeaderName as string} must be 1 to ${MAX_REQUEST_ID_LENGTH} characters`))
      }
      if (requestId === undefined) {
        const spent = await auth.consume({ sessionToken: token, points })
        return spent.status === 'ok' ? { ok: true, session: { ...session, authorization: spent.authorization } } : purchase(spent.status)
      }
      // The key is the session's own, and bound to the route: the same key on another route or with
      // other points is a conflict (409), never a second request served for one payment.
      const scope = request === undefined ? '' : `${request.method.toUpperCase()} ${request.path}`
      const idempotencyKey = `guard:${sessionTag(token)}:${requestId}`
      const { result, replayed } = await auth.consumeForRequest({ sessionToken: token, points, idempotencyKey, scope })
      if (result.status !== 'ok') return purchase(result.status)
      if (!replayed) return { ok: true, session: { ...session, authorization: result.authorization } }
      if (replays === 'pass') return { ok: true, session: { ...session, authorization: result.authorization, replayed: true } }
      return REPLAYED
    } catch (error) {
      // A ScanAuthError is an answer (401 for a session ended meanwhile, 409 for a key reused with
      // other points or on another route, 503 conflict); anything else is a failure nobody outside may
      // see (B-guard-6).
      if (error instanceof ScanAuthError) {
        return answer(error.status, refusal(error.code, error.message), error.code === 'unauthorized' ? BEARER : {})
      }
      return { ok: false, response: { status: 500, headers: { ...JSON_HEADERS }, body: errorBody('Internal error') }, error }
    }
  }
}

/**
 * The session's part of a request's idempotency key: 22 base64url characters of the token's
 * SHA-256, so that each session has keys of its own and the token never reaches the store (B-guard-5).
 */
function sessionTag(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22)
}

/** A base path with a leading slash and no trailing one (`''` for the root). */
function normalizeBase(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '')
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}
