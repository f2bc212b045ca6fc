/**
 * Checks of call arguments against WeChat Pay's field rules, made before anything is signed or sent:
 * a refused request costs nothing, a malformed one costs a round trip and a vaguer error. Amounts
 * are integer fen and are never rounded: 19.9 is refused, not turned into 1989 or 1990.
 *
 * @module
 */
import { WechatPayError } from './errors'

/** `out_trade_no`: 6–32 characters of digits, letters, `_`, `-`, `*`. */
export const OUT_TRADE_NO_PATTERN = /^[0-9A-Za-z_\-*]{6,32}$/
/** `out_refund_no`: 1–64 characters of digits, letters, `_`, `-`, `|`, `*`, `@`. */
export const OUT_REFUND_NO_PATTERN = /^[0-9A-Za-z_\-|*@]{1,64}$/

/** A positive safe integer of fen; floats (yuan by mistake) and strings are refused with the value named. */
export function checkFen(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    const hint = typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value) ? ' (amounts are integer fen: 1990 is ¥19.90)' : ''
    throw new WechatPayError('invalid_argument', `${name} must be a positive safe integer of fen, got ${JSON.stringify(value) ?? String(value)}${hint}`)
  }
  return value
}

/** A string matching `pattern`, named in the error. */
export function checkPattern(name: string, value: unknown, pattern: RegExp, rule: string): string {
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new WechatPayError('invalid_argument', `${name} must be ${rule}, got ${JSON.stringify(value) ?? String(value)}`)
  }
  return value
}

/** A non-blank string of at most `max` bytes of UTF-8. */
export function checkText(name: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw new WechatPayError('invalid_argument', `${name} must be a non-empty string`)
  // WeChat Pay's string(n) read as UTF-8 bytes, the stricter reading: what passes here is never too long there.
  const bytes = Buffer.byteLength(value, 'utf8')
  if (bytes > max) throw new WechatPayError('invalid_argument', `${name} is ${bytes} bytes of UTF-8; WeChat Pay allows at most ${max}`)
  return value
}

const BEIJING_OFFSET_MS = 8 * 3600_000

/**
 * RFC 3339 in China Standard Time, to the second: `2026-01-01T08:00:00+08:00` for
 * `2026-01-01T00:00:00Z`. WeChat Pay documents `time_expire` in this form; a `Z` time is refused by
 * some of its validators.
 */
export function formatBeijingTime(epochMs: number): string {
  const shifted = new Date(Math.floor(epochMs / 1000) * 1000 + BEIJING_OFFSET_MS)
  return `${shifted.toISOString().slice(0, 19)}+08:00`
}

/** A deadline as epoch milliseconds from a number or a Date; `invalid_argument` when not a real time. */
export function checkTime(name: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : value
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
    throw new WechatPayError('invalid_argument', `${name} must be a Date or epoch milliseconds`)
  }
  return ms
}

/** An absolute http(s) URL without a query string, as WeChat Pay requires of `notify_url` (https in production). */
export function checkNotifyUrl(name: string, value: unknown): string {
  let url: URL
  try {
    url = new URL(String(value))
  } catch {
    throw new WechatPayError('invalid_options', `${name} must be an absolute URL, got ${JSON.stringify(value)}`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WechatPayError('invalid_options', `${name} must be an https URL`)
  // WeChat Pay refuses a notify_url with a query string; say so here rather than on the first order.
  if (url.search !== '' || url.hash !== '') throw new WechatPayError('invalid_options', `${name} must not have a query string or fragment`)
  if (String(value).length > 255) throw new WechatPayError('invalid_options', `${name} is longer than WeChat Pay's 255 characters`)
  return String(value)
}

/**
 * A payer's openid (`payer.openid`): 1–128 characters without control characters. WeChat's openids
 * are 28 URL-safe characters; the looser rule only keeps out what can never be one (an empty value,
 * a line feed pasted along), so an emulator's or a future format still passes.
 */
export function checkOpenid(name: string, value: unknown): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (typeof value !== 'string' || value.length === 0 || value.length > 128 || /[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new WechatPayError('invalid_argument', `${name} must be 1–128 characters without control characters, got ${JSON.stringify(value) ?? String(value)}`)
  }
  return value
}
