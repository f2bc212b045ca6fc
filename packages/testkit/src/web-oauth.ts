/**
 * `TestWebOAuth`: WeChat web OAuth as the contract suite plays it. The wire (the authorize redirect,
 * `sns/oauth2/access_token`) is tested in `@scanauth/wechat` against the emulator; here only what core
 * relies on: a code names one person, once.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { WebOAuthProvider } from '@scanauth/core'

/** The authorize address it answers (WeChat's own, so the suites can check its shape). */
export const TEST_AUTHORIZE_BASE = 'https://open.weixin.qq.com/connect/oauth2/authorize'

/** A {@link WebOAuthProvider} whose codes the test hands out itself. */
export class TestWebOAuth implements WebOAuthProvider {
  /** Unused codes and the openid each names. */
  private readonly codes = new Map<string, string>()
  /** When set, `exchangeCode` throws this (WeChat cannot be reached). */
  failWith: Error | null = null
  /** How many codes were exchanged, refused ones included. */
  exchanges = 0

  /** @param appId - the AppID its authorize address names (`wx-test-app` by default). */
  constructor(
    /** The AppID its authorize address names. */
    readonly appId = 'wx-test-app',
  ) {}

  authorizeUrl({ redirectUri, state }: { redirectUri: string; state: string }): string {
    const query = `appid=${this.appId}&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&scope=snsapi_base&state=${state}`
    return `${TEST_AUTHORIZE_BASE}?${query}#wechat_redirect`
  }

  /** What WeChat does when `openid` opens the authorize address: a fresh single-use code. */
  issueCode(openid: string): string {
    const code = randomBytes(12).toString('hex')
    this.codes.set(code, openid)
    return code
  }

  async exchangeCode(code: string): Promise<string | null> {
    this.exchanges++
    if (this.failWith !== null) throw this.failWith
    const openid = this.codes.get(code)
    // A code is good once (WeChat answers 40163 "code been used" after that).
    this.codes.delete(code)
    return openid ?? null
  }
}
