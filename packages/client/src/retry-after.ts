/**
 * Reading a `Retry-After` header (RFC 9110 §10.2.3): whole seconds (what scanauth sends, B-rate-8) or
 * an HTTP date.
 *
 * @module
 */

/** When a `Retry-After` is missing or unreadable, the client waits this long before trying again. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1

/**
 * The seconds to wait before retrying, from a `Retry-After` header value: a non-negative whole number
 * of seconds as it is, an HTTP date as the seconds from `nowMs` until it (rounded up, at least 0).
 * Missing or unreadable: {@link DEFAULT_RETRY_AFTER_SECONDS}.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number {
  const text = value?.trim() ?? ''
  if (/^\d+$/.test(text)) return Number(text)
  // An HTTP date starts with the day's name (IMF-fixdate and the obsolete forms); `Date.parse` alone would take "1.5".
  if (/^[A-Za-z]{3,9},? /.test(text)) {
    const at = Date.parse(text)
    if (Number.isFinite(at)) return Math.max(0, Math.ceil((at - nowMs) / 1000))
  }
  return DEFAULT_RETRY_AFTER_SECONDS
}
