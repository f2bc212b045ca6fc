/**
 * The emulator's access tokens, with the platform's two behaviours (reference §1):
 *
 * - **stable** (`stable_token`): the same token for every caller while it is valid; renewed only in
 *   its last 5 minutes (the old one then lives out its time); `force_refresh` revokes it at once.
 * - **classic** (`cgi-bin/token`): every fetch issues a new token and the previous ones die after an
 *   overlap (5 minutes on WeChat).
 *
 * The two kinds are independent, as on WeChat.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'

interface IssuedToken {
  kind: 'stable' | 'classic'
  expiresAt: number
  /** When a newer classic token replaced it. */
  supersededAt?: number
  revoked: boolean
}

/** Result of checking a token presented on an API call. */
export type TokenCheck = { ok: true } | { ok: false; errcode: number; errmsg: string }

/** The access tokens issued by one emulated account. */
export class EmulatorTokens {
  readonly #tokens = new Map<string, IssuedToken>()
  #stable: string | null = null
  readonly #ttlMs: number
  readonly #overlapMs: number
  readonly #now: () => number

  constructor(options: { ttlSeconds: number; overlapSeconds: number; now: () => number }) {
    this.#ttlMs = options.ttlSeconds * 1000
    this.#overlapMs = options.overlapSeconds * 1000
    this.#now = options.now
  }

  /** `stable_token`: the current stable token, or a new one when forced or in its last 5 minutes. */
  stable(forceRefresh: boolean): { accessToken: string; expiresIn: number } {
    const now = this.#now()
    const current = this.#stable === null ? undefined : this.#tokens.get(this.#stable)
    if (current && this.#stable !== null && forceRefresh) current.revoked = true
    const renewWithinMs = Math.min(300_000, this.#ttlMs / 2)
    if (current && this.#stable !== null && !current.revoked && current.expiresAt - now > renewWithinMs) {
      return { accessToken: this.#stable, expiresIn: Math.floor((current.expiresAt - now) / 1000) }
    }
    const accessToken = this.#issue('stable')
    this.#stable = accessToken
    return { accessToken, expiresIn: Math.floor(this.#ttlMs / 1000) }
  }

  /** `cgi-bin/token`: a new classic token; every older classic token dies after the overlap. */
  classic(): { accessToken: string; expiresIn: number } {
    const now = this.#now()
    for (const token of this.#tokens.values()) {
      if (token.kind === 'classic' && token.supersededAt === undefined) token.supersededAt = now
    }
    return { accessToken: this.#issue('classic'), expiresIn: Math.floor(this.#ttlMs / 1000) }
  }

  /** Whether `accessToken` may be used now, with WeChat's errcode when not. */
  check(accessToken: string | undefined): TokenCheck {
    if (accessToken === undefined || accessToken === '') return { ok: false, errcode: 41001, errmsg: 'access_token missing' }
    const token = this.#tokens.get(accessToken)
    const now = this.#now()
    const notLatest = { ok: false, errcode: 40001, errmsg: 'invalid credential, access_token is invalid or not latest' } as const
    if (token === undefined || token.revoked) return notLatest
    if (token.supersededAt !== undefined && now >= token.supersededAt + this.#overlapMs) return notLatest
    if (now >= token.expiresAt) return { ok: false, errcode: 42001, errmsg: 'access_token expired' }
    return { ok: true }
  }

  /** Revokes every token issued so far. */
  revokeAll(): void {
    for (const token of this.#tokens.values()) token.revoked = true
  }

  #issue(kind: IssuedToken['kind']): string {
    // Real tokens are long opaque strings (store them in 512 characters); these are 128.
    const accessToken = randomBytes(96).toString('base64url')
    this.#tokens.set(accessToken, { kind, expiresAt: this.#now() + this.#ttlMs, revoked: false })
    return accessToken
  }
}
