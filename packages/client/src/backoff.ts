/**
 * The wait between retries after a network failure: exponential with "full jitter" (a random wait
 * between 0 and the exponential ceiling), so that many devices cut off by the same outage do not all
 * come back in the same second.
 *
 * @module
 */

/** How retries after network failures are spaced and bounded. */
export interface BackoffPolicy {
  /** The ceiling of the first wait, in milliseconds. */
  initialMs: number
  /** The largest ceiling, in milliseconds. */
  maxMs: number
  /** How many attempts in a row may fail before the call gives up (the first attempt included). */
  attempts: number
}

/** The default: ceilings 500 ms, 1 s, 2 s, 4 s…, at most 8 s; 5 attempts (about 7.5 s of waiting at worst). */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 8000, attempts: 5 }

/**
 * The wait before retry number `retry` (1 for the first retry): a uniform random duration in
 * [0, min(maxMs, initialMs × 2^(retry − 1))]. `random` returns a number in [0, 1) (default `Math.random`).
 */
export function backoffDelay(retry: number, policy: Pick<BackoffPolicy, 'initialMs' | 'maxMs'> = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(retry - 1, 30))
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent)
  return Math.floor(random() * ceiling)
}

/** Whether another attempt is allowed after `failures` failures in a row. */
export function mayRetry(failures: number, policy: Pick<BackoffPolicy, 'attempts'> = DEFAULT_BACKOFF): boolean {
  return failures < policy.attempts
}
