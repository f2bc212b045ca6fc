/**
 * The emulated WeChat API endpoints: answers in WeChat's shapes, errors with WeChat's errcodes.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { qrPng, type EmulatorTickets } from './tickets'
import type { EmulatorOAuthCodes } from './oauth'
import type { MessagingState } from './messaging-state'
import type { EmulatorTokens } from './tokens'

/** What an endpoint answers. */
export interface ApiAnswer {
  status: number
  contentType: string
  body: string | Buffer
  /** Set for `{errcode, errmsg}` answers, for the request log. */
  errcode?: number
}

/** What an endpoint needs to know about the request and the account. */
export interface ApiContext {
  method: string
  query: URLSearchParams
  body: string
  appId: string
  appSecret: string
  tokens: EmulatorTokens
  tickets: EmulatorTickets
  /** The web OAuth codes the authorize page issued. */
  oauthCodes: EmulatorOAuthCodes
  /** The users, confirmations, messages and quota of the send APIs (send-api.ts). */
  messaging: MessagingState
}

/** The longest temporary code WeChat allows: 30 days. */
const MAX_EXPIRE_SECONDS = 2_592_000

/** `{errcode, errmsg}` the way WeChat sends it: HTTP 200 with a JSON body. */
export function apiError(errcode: number, errmsg: string): ApiAnswer {
  return { ...json({ errcode, errmsg: `${errmsg} rid: ${rid()}` }), errcode }
}

/** A JSON answer, with the content type WeChat sends. */
export function json(value: unknown, status = 200): ApiAnswer {
  return { status, contentType: 'application/json; encoding=utf-8', body: JSON.stringify(value) }
}

function rid(): string {
  return Math.random().toString(16).slice(2, 10)
}

/** Checks grant_type, appid and secret, in WeChat's order and with its errcodes. */
function checkCredentials(grantType: unknown, appid: unknown, secret: unknown, context: ApiContext): ApiAnswer | null {
  if (grantType !== 'client_credential') return apiError(40002, 'invalid grant_type')
  if (typeof appid !== 'string' || appid === '') return apiError(41002, 'appid missing')
  if (typeof secret !== 'string' || secret === '') return apiError(41004, 'appsecret missing')
  if (appid !== context.appId) return apiError(40013, 'invalid appid')
  if (secret !== context.appSecret) return apiError(40125, 'invalid appsecret')
  return null
}

function parseJsonBody(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/** `POST /cgi-bin/stable_token` `{grant_type, appid, secret, force_refresh}` (JSON only). */
export function stableToken(context: ApiContext): ApiAnswer {
  if (context.method !== 'POST') return apiError(43002, 'require POST method')
  const body = parseJsonBody(context.body)
  if (body === null) return apiError(47001, 'data format error')
  const refused = checkCredentials(body.grant_type, body.appid, body.secret, context)
  if (refused) return refused
  const { accessToken, expiresIn } = context.tokens.stable(body.force_refresh === true)
  return json({ access_token: accessToken, expires_in: expiresIn })
}

/** `GET /cgi-bin/token?grant_type=client_credential&appid=&secret=`. */
export function classicToken(context: ApiContext): ApiAnswer {
  if (context.method !== 'GET') return apiError(43001, 'require GET method')
  const q = context.query
  const refused = checkCredentials(q.get('grant_type'), q.get('appid') ?? '', q.get('secret') ?? '', context)
  if (refused) return refused
  const { accessToken, expiresIn } = context.tokens.classic()
  return json({ access_token: accessToken, expires_in: expiresIn })
}

/** `POST /cgi-bin/qrcode/create?access_token=` with `QR_STR_SCENE` / `QR_SCENE` (or a permanent kind). */
export function createQrCode(context: ApiContext): ApiAnswer {
  if (context.method !== 'POST') return apiError(43002, 'require POST method')
  const check = context.tokens.check(context.query.get('access_token') ?? undefined)
  if (!check.ok) return apiError(check.errcode, check.errmsg)
  const body = parseJsonBody(context.body)
  if (body === null) return apiError(47001, 'data format error')
  const action = body.action_name
  const scene = (body.action_info as { scene?: Record<string, unknown> } | undefined)?.scene
  if (typeof scene !== 'object' || scene === null) return apiError(40097, 'invalid args: action_info.scene is missing')
  let sceneStr: string
  if (action === 'QR_STR_SCENE' || action === 'QR_LIMIT_STR_SCENE') {
    const value = scene.scene_str
    if (typeof value !== 'string' || value === '') return apiError(40097, 'invalid args: scene_str is missing')
    if (value.length > 64) return apiError(40097, 'invalid args: scene_str is longer than 64')
    sceneStr = value
  } else if (action === 'QR_SCENE' || action === 'QR_LIMIT_SCENE') {
    const value = scene.scene_id
    if (typeof value !== 'number' || !Number.isInteger(value) || value === 0) return apiError(40097, 'invalid args: scene_id is missing')
    sceneStr = String(value)
  } else {
    return apiError(40097, 'invalid args: action_name')
  }
  if (action === 'QR_LIMIT_STR_SCENE' || action === 'QR_LIMIT_SCENE') {
    const code = context.tickets.create(sceneStr, null)
    return json({ ticket: code.ticket, url: code.url })
  }
  // Without expire_seconds WeChat's temporary codes live 60 s: that is why clients must send it.
  const requested = body.expire_seconds === undefined ? 60 : body.expire_seconds
  if (typeof requested !== 'number' || !Number.isFinite(requested) || requested < 1) return apiError(40097, 'invalid args: expire_seconds')
  const expireSeconds = Math.min(MAX_EXPIRE_SECONDS, Math.floor(requested))
  const code = context.tickets.create(sceneStr, expireSeconds)
  return json({ ticket: code.ticket, expire_seconds: expireSeconds, url: code.url })
}

/** `GET /cgi-bin/showqrcode?ticket=`: the PNG of a live code; 404 for an unknown or expired ticket. */
export async function showQrCode(context: ApiContext): Promise<ApiAnswer> {
  const ticket = context.query.get('ticket') ?? ''
  const code = context.tickets.byTicket(ticket)
  if (code === undefined || !code.live) {
    return { status: 404, contentType: 'text/plain; charset=utf-8', body: 'ticket is unknown or has expired' }
  }
  return { status: 200, contentType: 'image/png', body: await qrPng(code.url) }
}

/**
 * `GET /sns/oauth2/access_token?appid=&secret=&code=&grant_type=authorization_code`: the openid
 * behind a code. A code that is unknown, used or expired answers 40029 (HTTP 200, like every WeChat
 * error).
 */
export function oauthAccessToken(context: ApiContext): ApiAnswer {
  if (context.method !== 'GET') return apiError(43001, 'require GET method')
  const q = context.query
  if (q.get('grant_type') !== 'authorization_code') return apiError(40002, 'invalid grant_type')
  const appid = q.get('appid') ?? ''
  const secret = q.get('secret') ?? ''
  if (appid === '') return apiError(41002, 'appid missing')
  if (secret === '') return apiError(41004, 'appsecret missing')
  if (appid !== context.appId) return apiError(40013, 'invalid appid')
  if (secret !== context.appSecret) return apiError(40125, 'invalid appsecret')
  const code = q.get('code') ?? ''
  if (code === '') return apiError(41008, 'missing code')
  const issued = context.oauthCodes.take(code)
  if (issued === undefined) return apiError(40029, 'invalid code')
  return json({
    // Tokens for the userinfo API, which the emulator does not serve: opaque, like WeChat's.
    access_token: randomBytes(48).toString('base64url'),
    expires_in: 7200,
    refresh_token: randomBytes(48).toString('base64url'),
    openid: issued.openid,
    scope: issued.scope,
  })
}
