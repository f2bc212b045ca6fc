/**
 * Times the way WeChat Pay writes and reads them: RFC 3339 with an offset, written in Beijing time
 * (`2026-03-01T16:00:00+08:00`) as WeChat's own `success_time` and `create_time` are.
 *
 * @module
 */

const BEIJING_OFFSET_MS = 8 * 3600 * 1000

/** `ms` (epoch milliseconds) as `yyyy-MM-ddTHH:mm:ss+08:00`. */
export function wechatTime(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000 + BEIJING_OFFSET_MS).toISOString().slice(0, 19)}+08:00`
}

/** Epoch milliseconds of an RFC 3339 date-time with an explicit offset (`Z` or `±hh:mm`), or null when it is not one. */
export function parseRfc3339(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.exec(text)
  if (match === null) return null
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[]
  // Date.parse rolls 02-30 over into March; insist that every field is in range.
  if (month! < 1 || month! > 12 || day! < 1 || day! > 31 || hour! > 23 || minute! > 59 || second! > 59) return null
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) return null
  const check = new Date(Date.UTC(year!, month! - 1, day!))
  if (check.getUTCDate() !== day) return null
  return ms
}
