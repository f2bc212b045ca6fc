/**
 * `createScanAuthClient`: the device side of scanauth in one object.
 *
 * @module
 */
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff'
import type { FetchLike, HttpSettings } from './http'
import { requiredText, wholeNumber } from './options'
import { purchase } from './purchase'
import { SceneSecrets } from './scene-secrets'
import { consume, getSession, listPlans, logout } from './session'
import { signIn } from './sign-in'
import type { ConsumeResult, Plan, PurchaseOptions, PurchaseResult, SessionInfo, SignInOptions, SignInResult } from './types'

/** The options of {@link createScanAuthClient}. */
export interface ScanAuthClientOptions {
  /**
   * Where the app mounts the scanauth routes, e.g. `https://app.example/auth` (a path such as
   * `/auth` works in a browser page of the same origin).
   */
  baseUrl: string
  /** The `fetch` to use; default the global one. Pass one to add cookies or headers, or to count requests. */
  fetch?: FetchLike
  /**
   * The longest `Retry-After` the client waits out on a 429 before trying again, in seconds (default
   * 30); a longer one, or a fourth 429 in a row, rejects with `rate_limited` and `retryAfterSeconds`.
   */
  maxRateLimitWaitSeconds?: number
  /** How many attempts a request makes when the server cannot be reached (default 5), with jittered backoff between them. */
  networkAttempts?: number
}

/** The device side of scanauth. Create one with {@link createScanAuthClient}. */
export interface ScanAuthClient {
  /**
   * Signs the device in: creates a scene, calls `onCode` with its QR code, waits for the scan (event
   * stream, long poll or poll), and replaces an expired code up to `maxRefreshes` times. Resolves
   * `authorized` with the session, `need_purchase` with the scene to buy through, or (on a server
   * with `confirm: 'link'`) `denied` when the scanner refused on the phone. Rejects with a
   * `ScanAuthClientError`: `expired`, `aborted`, `rate_limited`, `http` or `network`. A scene's poll
   * secret (a server with `requirePollSecret`) is sent on every request about it, by itself.
   */
  signIn(options: SignInOptions): Promise<SignInResult>
  /** The session behind `token`, or null once it has ended (the server answered 401). */
  getSession(token: string): Promise<SessionInfo | null>
  /** Uses `points` (default 1) of the session's points authorization, or checks a time one. Never retried on its own. */
  consume(token: string, points?: number): Promise<ConsumeResult>
  /** Ends the session: true when this ended it, false when it had already ended. */
  logout(token: string): Promise<boolean>
  /** The plans on sale, in the server's order. */
  listPlans(): Promise<Plan[]>
  /**
   * Buys `plan` for the scene of a `need_purchase` sign-in (`sceneStr`) or for a session
   * (`sessionToken`): opens the order, calls `onCode` with its pay code, and resolves once it is paid.
   * Rejects with `expired` when the order's deadline passes unpaid. Buy through a scene with the
   * client whose `signIn` returned it: it holds the scene's poll secret, if the server issued one.
   */
  purchase(options: PurchaseOptions): Promise<PurchaseResult>
}

/**
 * Creates the client for the scanauth routes at `baseUrl`.
 *
 * @example
 * ```ts
 * import { createScanAuthClient } from '@scanauth/client'
 *
 * const client = createScanAuthClient({ baseUrl: 'https://app.example/auth' })
 * const result = await client.signIn({
 *   deviceId: 'kiosk-7',
 *   onCode: ({ qrContent, expiresAt }) => console.log(`Scan ${qrContent} before ${expiresAt}`),
 * })
 * if (result.status === 'authorized') console.log(`Signed in until ${result.authorization.endAt}`)
 * ```
 */
export function createScanAuthClient(options: ScanAuthClientOptions): ScanAuthClient {
  const baseUrl = requiredText('baseUrl', options?.baseUrl).replace(/\/+$/, '')
  const chosen = options.fetch
  if (chosen !== undefined && typeof chosen !== 'function') throw new TypeError('@scanauth/client: fetch must be a function')
  // The global fetch is looked up at each call (and called unbound: some browsers refuse another `this`).
  const fetch: FetchLike = chosen ?? ((input, init) => globalThis.fetch(input, init))
  const backoff: BackoffPolicy = { ...DEFAULT_BACKOFF, attempts: wholeNumber('networkAttempts', options.networkAttempts, DEFAULT_BACKOFF.attempts, 1, 100) }
  const http: HttpSettings = {
    baseUrl,
    fetch,
    maxRateLimitWaitSeconds: wholeNumber('maxRateLimitWaitSeconds', options.maxRateLimitWaitSeconds, 30, 0, 86_400),
    backoff,
  }
  // Poll secrets of scenes that ended on need_purchase, for the purchase that waits on them.
  const secrets = new SceneSecrets()
  return {
    signIn: async (o) => signIn(http, o, secrets),
    getSession: async (token) => getSession(http, token),
    consume: async (token, points) => consume(http, token, points),
    logout: async (token) => logout(http, token),
    listPlans: async () => listPlans(http),
    purchase: async (o) => purchase(http, o, secrets),
  }
}
