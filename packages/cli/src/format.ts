/**
 * Output for people: compact text in aligned columns, times in ISO 8601 to the second, session
 * tokens cut to a prefix.
 *
 * @module
 */
import type { Authorization, LedgerEntry, SessionRecord } from '@scanauth/core'

/** Characters of a session token shown (of its 43): enough to tell sessions apart, far too few to use one. */
export const TOKEN_PREFIX_LENGTH = 8

/** A session as the CLI shows it: its token cut to its first 8 characters. */
export interface SessionView {
  /** The session's id. */
  id: number
  /** The first characters of the token; the whole token is never printed. */
  tokenPrefix: string
  /** The device the session was issued to. */
  deviceId: string
  /** ISO 8601. */
  createdAt: string
  /** ISO 8601. */
  expiresAt: string
}

/** The view of a stored session. */
export function sessionView(session: SessionRecord): SessionView {
  return {
    id: session.id,
    tokenPrefix: session.token.slice(0, TOKEN_PREFIX_LENGTH),
    deviceId: session.deviceId,
    createdAt: iso(session.createdAt),
    expiresAt: iso(session.expiresAt),
  }
}

/** Epoch milliseconds as ISO 8601. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}

/** An ISO 8601 time to the second, for people: `2026-11-26T20:08:00Z`. */
export function time(value: string | null): string {
  return value === null ? '-' : value.replace(/\.\d{3}Z$/, 'Z')
}

/** A length of time, coarse: `30d`, `1d 2h`, `5h 30m`, `45m`, `20s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`
  if (m > 0) return `${m}m`
  return `${seconds}s`
}

/** An amount of fen as yuan: 1990 → `¥19.90`. */
export function yuan(fen: number): string {
  return `¥${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`
}

/** A signed number of points: `+100`, `-1`, `0`. */
export function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n)
}

/** Rows in aligned columns (each column as wide as its widest cell), indented; trailing blanks dropped. */
export function table(rows: string[][], indent = ''): string[] {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)))
  return rows.map((row) => `${indent}${row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length))).join('  ')}`.trimEnd())
}

/**
 * What an authorization holds, in a few words: a time one by its end (active) or its length (pending,
 * it starts when activated), a points one by its points.
 */
export function extent(a: Authorization): string {
  if (a.type === 'points') return `${a.remainingPoints}/${a.totalPoints} points`
  if (a.endAt === null) return 'time'
  if (a.status === 'pending') return duration(Date.parse(a.endAt) - Date.parse(a.startAt))
  return `until ${time(a.endAt)}`
}

/** The columns of an authorization: id, type, status, extent, source. */
export function authorizationRow(a: Authorization): string[] {
  return [`#${a.id}`, a.type, a.status, extent(a), `source ${a.source}`]
}

/** The columns of a ledger entry: id, time, kind, authorization, points, points left, and what applies of source, key, reason. */
export function ledgerRow(e: LedgerEntry): string[] {
  const extra = [
    e.source === undefined ? null : `source ${e.source}`,
    e.idempotencyKey === undefined ? null : `key ${e.idempotencyKey}`,
    e.reason === undefined ? null : `reason ${JSON.stringify(e.reason)}`,
  ].filter((x): x is string => x !== null)
  return [`#${e.id}`, time(e.at), e.kind, `auth #${e.authorizationId}`, signed(e.points), `${e.remainingPoints} left`, extra.join('  ')]
}

/** The columns of a session: id, token prefix, device, created, expires. */
export function sessionRow(s: SessionView): string[] {
  return [`#${s.id}`, `${s.tokenPrefix}…`, s.deviceId, `created ${time(s.createdAt)}`, `expires ${time(s.expiresAt)}`]
}

/** `n thing` or `n things`. */
export function count(n: number, thing: string, things = `${thing}s`): string {
  return `${n} ${n === 1 ? thing : things}`
}

/** A labelled line of a record: the label in a column of its own, then the value. */
export function field(label: string, value: string): string {
  return `${label.padEnd(10)}  ${value}`.trimEnd()
}
