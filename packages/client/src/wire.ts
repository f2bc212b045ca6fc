/**
 * Reading the server's snake_case bodies (docs/behaviour.md, wire shapes) into the client's camelCase
 * objects. Tolerant of fields it does not know; an answer missing what the client needs is an `http`
 * error rather than a crash later.
 *
 * @module
 */
import { ScanAuthClientError } from './errors'
import type { AuthorizationSummary, ConsumeResult, OrderCode, Plan, SessionInfo } from './types'

/** A status answer (`GET status`, an `event: status`), as the waiting code needs it. */
export interface StatusBody {
  /** `pending`, `scanned`, `expired`, `need_purchase`, `authorized`, `denied`, or a status this client does not know. */
  status: string
  /** Set when authorized. */
  sessionToken?: string
  /** Set when authorized. */
  authorization?: AuthorizationSummary
}

/** A `create_scene` answer. */
export interface SceneBody {
  /** The scene. */
  sceneStr: string
  /** The image address. */
  qrUrl: string
  /** What the code encodes; `qrUrl` when the server does not send `qr_content`. */
  qrContent: string
  /** Lifetime in seconds. */
  expiresIn: number
  /** The scene's poll secret (`poll_secret`), sent by a server with `requirePollSecret`; never shown to the app. */
  pollSecret?: string
}

function unreadable(what: string): ScanAuthClientError {
  return new ScanAuthClientError('http', `The server's ${what} answer is not what scanauth sends`)
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unreadable(what)
  return value as Record<string, unknown>
}

function text(body: Record<string, unknown>, field: string, what: string): string {
  const value = body[field]
  if (typeof value !== 'string' || value === '') throw unreadable(what)
  return value
}

function count(body: Record<string, unknown>, field: string, what: string): number {
  const value = body[field]
  if (typeof value !== 'number' || !Number.isFinite(value)) throw unreadable(what)
  return value
}

/** The authorization summary `{type, end_at, remaining_points}` (B-wire-1). */
export function readAuthorization(value: unknown, what: string): AuthorizationSummary {
  const body = record(value, what)
  const type = body.type
  if (type !== 'time' && type !== 'points') throw unreadable(what)
  const endAt = body.end_at
  if (endAt !== null && typeof endAt !== 'string') throw unreadable(what)
  return { type, endAt, remainingPoints: typeof body.remaining_points === 'number' ? body.remaining_points : 0 }
}

/** `POST create_scene`, 200. */
export function readScene(value: unknown): SceneBody {
  const body = record(value, 'create_scene')
  const qrUrl = text(body, 'qr_url', 'create_scene')
  const qrContent = typeof body.qr_content === 'string' && body.qr_content !== '' ? body.qr_content : qrUrl
  const scene: SceneBody = { sceneStr: text(body, 'scene_str', 'create_scene'), qrUrl, qrContent, expiresIn: count(body, 'expires_in', 'create_scene') }
  // Absent unless the server requires the secret; present, it must be usable as a header value.
  if (body.poll_secret !== undefined) {
    const pollSecret = text(body, 'poll_secret', 'create_scene')
    if (!/^[\x21-\x7e]+$/.test(pollSecret)) throw unreadable('create_scene')
    scene.pollSecret = pollSecret
  }
  return scene
}

/** `GET status` or an `event: status`, 200. */
export function readStatus(value: unknown): StatusBody {
  const body = record(value, 'status')
  const status = text(body, 'status', 'status')
  if (status !== 'authorized') return { status }
  return { status, sessionToken: text(body, 'session_token', 'status'), authorization: readAuthorization(body.authorization, 'status') }
}

/** `GET session`, 200. */
export function readSession(value: unknown): SessionInfo {
  const body = record(value, 'session')
  return {
    userId: count(body, 'user_id', 'session'),
    deviceId: text(body, 'device_id', 'session'),
    expiresAt: text(body, 'expires_at', 'session'),
    authorization: body.authorization === null || body.authorization === undefined ? null : readAuthorization(body.authorization, 'session'),
  }
}

/** `POST consume`, 200. */
export function readConsume(value: unknown): ConsumeResult {
  const body = record(value, 'consume')
  const status = text(body, 'status', 'consume')
  if (status === 'ok') return { status, authorization: readAuthorization(body.authorization, 'consume') }
  if (status === 'need_purchase') return typeof body.purchase_url === 'string' ? { status, purchaseUrl: body.purchase_url } : { status }
  if (status === 'insufficient_points') return { status }
  throw unreadable('consume')
}

/** `GET plans`, 200. */
export function readPlans(value: unknown): Plan[] {
  if (!Array.isArray(value)) throw unreadable('plans')
  return value.map((item) => {
    const body = record(item, 'plans')
    const grant = record(body.grant, 'plans')
    const planGrant =
      grant.type === 'time' ? { type: 'time' as const, days: count(grant, 'days', 'plans') } : grant.type === 'points' ? { type: 'points' as const, points: count(grant, 'points', 'plans') } : undefined
    if (planGrant === undefined) throw unreadable('plans')
    return { id: text(body, 'id', 'plans'), description: text(body, 'description', 'plans'), amountFen: count(body, 'amount_fen', 'plans'), grant: planGrant }
  })
}

/** `POST purchase`, 200. */
export function readOrder(value: unknown): OrderCode {
  const body = record(value, 'purchase')
  return {
    orderId: text(body, 'order_id', 'purchase'),
    codeUrl: text(body, 'code_url', 'purchase'),
    amountFen: count(body, 'amount_fen', 'purchase'),
    expiresAt: text(body, 'expires_at', 'purchase'),
    // Sent (as true) only when the scanner got a link to buy on the phone; absent otherwise.
    phoneLink: body.phone_link === true,
  }
}
