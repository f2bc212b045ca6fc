/**
 * The one error class of the client: {@link ScanAuthClientError}, whose `code` says how a call failed.
 *
 * @module
 */

/** How a call of the client failed: the `code` of every {@link ScanAuthClientError}. */
export type ScanAuthClientErrorCode =
  /**
   * The code ran out: the last scene expired after `maxRefreshes` refreshes (sign-in), or the order's
   * deadline passed unpaid (purchase). Show a button for a new code rather than refreshing forever.
   */
  | 'expired'
  /** The caller's `signal` aborted. Every request of the call has been cancelled. */
  | 'aborted'
  /**
   * The server refused with 429 for longer than the client waits (see `maxRateLimitWaitSeconds`);
   * `retryAfterSeconds` says when to try again.
   */
  | 'rate_limited'
  /**
   * The server answered an error status (`status`, with its `{detail}` in `detail`), or an answer the
   * client cannot read. A 403 while signing in on a server with `requirePollSecret` means the scene's
   * poll secret did not reach it (a proxy dropped the `X-Scanauth-Poll-Secret` header).
   */
  | 'http'
  /** The server could not be reached, after the client's retries with backoff. */
  | 'network'

/** What a {@link ScanAuthClientError} may carry besides its code. */
export interface ScanAuthClientErrorDetails {
  /** The HTTP status of the answer behind an `http` or `rate_limited` error. */
  status?: number
  /** The server's `{detail}` text, when it sent one. */
  detail?: string
  /** For `rate_limited`: whole seconds until the server accepts the call again (its `Retry-After`). */
  retryAfterSeconds?: number
  /** The underlying failure (a network `TypeError`, the abort reason). */
  cause?: unknown
}

/**
 * The error every method of the client rejects with: catch it and read `code`.
 *
 * @example
 * ```ts
 * import { ScanAuthClientError, type ScanAuthClient } from '@scanauth/client'
 *
 * declare const client: ScanAuthClient
 * try {
 *   await client.signIn({ deviceId: 'kiosk-7', onCode: ({ qrUrl }) => console.log(qrUrl) })
 * } catch (error) {
 *   if (error instanceof ScanAuthClientError && error.code === 'rate_limited') {
 *     console.log(`Too many codes; try again in ${error.retryAfterSeconds} s`)
 *   } else throw error
 * }
 * ```
 */
export class ScanAuthClientError extends Error {
  /** Machine-readable reason. */
  readonly code: ScanAuthClientErrorCode
  /** The HTTP status behind an `http` or `rate_limited` error; undefined otherwise. */
  readonly status: number | undefined
  /** The server's `{detail}`, when it sent one. */
  readonly detail: string | undefined
  /** For `rate_limited`: whole seconds until the server accepts the call again. */
  readonly retryAfterSeconds: number | undefined

  constructor(code: ScanAuthClientErrorCode, message: string, details: ScanAuthClientErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'ScanAuthClientError'
    this.code = code
    this.status = details.status
    this.detail = details.detail
    this.retryAfterSeconds = details.retryAfterSeconds
  }
}

/** The error of an aborted call. */
export function abortedError(reason?: unknown): ScanAuthClientError {
  return new ScanAuthClientError('aborted', 'The call was aborted', { cause: reason })
}
