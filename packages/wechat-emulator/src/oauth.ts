/**
 * Web OAuth (网页授权) as WeChat plays it for an Official Account: the authorize page, which sends
 * the phone back to the app with a single-use `code`, and the codes it issued, which
 * `sns/oauth2/access_token` (in `api.ts`, beside the other API endpoints) exchanges for the openid
 * (reference confirm-on-phone.md §4).
 *
 * Who the phone's user is cannot come from the authorize URL (WeChat knows it from the app, and no
 * `openid` parameter exists in its API); the emulator takes it from the `wxemu_openid` cookie its
 * page sets, else its default user.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'

/** The authorize page's path, as on `open.weixin.qq.com`. */
export const AUTHORIZE_PATH = '/connect/oauth2/authorize'

/** The cookie that names the emulated phone's user (its openid) to the authorize page. */
export const OPENID_COOKIE = 'wxemu_openid'

/** A code lives 5 minutes, as WeChat's do. */
const CODE_TTL_MS = 5 * 60_000

/** WeChat's limit on `state`: at most 128 bytes. */
const MAX_STATE_LENGTH = 128

interface IssuedCode {
  openid: string
  scope: OAuthScope
  expiresAt: number
}

/** The scopes an Official Account may ask for. */
export type OAuthScope = 'snsapi_base' | 'snsapi_userinfo'

/** The codes the authorize page issued, each usable once. */
export class EmulatorOAuthCodes {
  readonly #codes = new Map<string, IssuedCode>()
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /** A new code for `openid`. */
  issue(openid: string, scope: OAuthScope): string {
    // WeChat's codes are 32 characters; the form does not matter to a client.
    const code = randomBytes(24).toString('base64url')
    this.#codes.set(code, { openid, scope, expiresAt: this.#now() + CODE_TTL_MS })
    this.#sweep()
    return code
  }

  /** The code's grant, removed so it cannot be used again; undefined when unknown, used or expired. */
  take(code: string): IssuedCode | undefined {
    const issued = this.#codes.get(code)
    this.#codes.delete(code)
    return issued !== undefined && this.#now() < issued.expiresAt ? issued : undefined
  }

  /** Drops expired codes, so a long-running dev server does not grow. */
  #sweep(): void {
    const now = this.#now()
    for (const [code, issued] of this.#codes) if (now >= issued.expiresAt) this.#codes.delete(code)
  }
}

/** What the authorize page does with a request: send the phone back with a code, or refuse. */
export type AuthorizeOutcome = { ok: true; location: string } | { ok: false; reason: string }

/**
 * The authorize page's decision for `query` and the phone's user: checks what WeChat checks (its
 * appid, a redirect_uri, `response_type=code`, a known scope, a short enough state), then issues a
 * code and answers where to send the phone: `redirect_uri` with `code` and `state` appended.
 */
export function authorize(query: URLSearchParams, openid: string, appId: string, codes: EmulatorOAuthCodes): AuthorizeOutcome {
  const appid = query.get('appid') ?? ''
  if (appid === '') return { ok: false, reason: 'appid is missing' }
  if (appid !== appId) return { ok: false, reason: `appid ${appid} is not this account's (${appId})` }
  const redirectUri = query.get('redirect_uri') ?? ''
  if (redirectUri === '') return { ok: false, reason: 'redirect_uri is missing' }
  let target: URL
  try {
    target = new URL(redirectUri)
  } catch {
    return { ok: false, reason: 'redirect_uri is not an absolute URL (is it URL-encoded?)' }
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { ok: false, reason: 'redirect_uri must be http or https' }
  if (query.get('response_type') !== 'code') return { ok: false, reason: 'response_type must be code' }
  const scope = query.get('scope') ?? ''
  if (scope === '') return { ok: false, reason: 'scope is missing' }
  if (scope !== 'snsapi_base' && scope !== 'snsapi_userinfo') return { ok: false, reason: `scope ${scope} is not snsapi_base or snsapi_userinfo` }
  const state = query.get('state') ?? ''
  if (Buffer.byteLength(state) > MAX_STATE_LENGTH) return { ok: false, reason: 'state is longer than 128 bytes' }
  const code = codes.issue(openid, scope)
  // Appended to whatever query the app put in redirect_uri (its ticket), as WeChat does.
  target.search = `${target.search === '' ? '?' : `${target.search}&`}code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`
  return { ok: true, location: target.href }
}

/** The value of the cookie `name` in a `Cookie` header, decoded; undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at === -1 || part.slice(0, at).trim() !== name) continue
    try {
      const value = decodeURIComponent(part.slice(at + 1).trim())
      return value === '' ? undefined : value
    } catch {
      return undefined
    }
  }
  return undefined
}

/** A `Set-Cookie` that makes `openid` the phone's user for the authorize page (not HttpOnly: the page's script sets it too). */
export function openidCookie(openid: string): string {
  return `${OPENID_COOKIE}=${encodeURIComponent(openid)}; Path=/; SameSite=Lax`
}
