/**
 * `createWechatWebOAuth`: core's `WebOAuthProvider` on WeChat web OAuth (网页授权, `snsapi_base`).
 * Confirm on the phone uses it to learn who opened a confirm link: the phone is sent to WeChat's
 * authorize page, comes back with a `code`, and the server exchanges the code for the openid.
 *
 * `snsapi_base` is silent (no consent screen) and answers only the openid, which is the same openid
 * the scan push carried when the AppID is the same: that is all the confirm page needs.
 *
 * @module
 */
import type { WebOAuthProvider } from '@scanauth/core'
import { callApi, joinUrl, type FetchLike } from './api-client'
import { WechatApiError, WechatError, WechatHttpError } from './errors'
import { WECHAT_API_BASE_URL } from './qr-provider'

/** WeChat's web OAuth authorize page (opened inside the WeChat app). */
export const WECHAT_AUTHORIZE_URL = 'https://open.weixin.qq.com/connect/oauth2/authorize'

/**
 * The errcodes of `sns/oauth2/access_token` that refuse the code itself: 40029 (invalid or expired
 * code), 40163 (code already used), 41008 (no code), 42003 (code timed out). The phone may simply have opened an old link,
 * so these are an answer (null), not a failure; every other errcode (40013 bad AppID, 40125 bad
 * AppSecret, -1 busy) is our configuration or WeChat's trouble and is thrown.
 */
export const REFUSED_CODE_ERRCODES: ReadonlySet<number> = new Set([40029, 40163, 41008, 42003])

/** Options of {@link createWechatWebOAuth}. */
export interface WechatWebOAuthOptions {
  /** The Official Account's AppID: the one whose scans are confirmed, so the openids match. */
  appId: string
  /** Its AppSecret (开发者密码). */
  appSecret: string
  /** API base URL. Default `https://api.weixin.qq.com`; the emulator's `url` in development and tests. */
  apiBase?: string
  /**
   * The authorize page's full address. Default `https://open.weixin.qq.com/connect/oauth2/authorize`;
   * `${emulator.url}/connect/oauth2/authorize` with the emulator.
   */
  authorizeBase?: string
  /** The `fetch` to use (e.g. one with a proxy dispatcher). Default: the global `fetch`. */
  fetch?: FetchLike
  /** Deadline of the code exchange, in milliseconds. Default 5000. */
  timeoutMs?: number
}

/** WeChat allows a `state` of at most 128 bytes of `[a-zA-Z0-9]`. */
const STATE_PATTERN = /^[A-Za-z0-9]{0,128}$/

/** The endpoint as error messages name it. */
const ENDPOINT = 'sns/oauth2/access_token'

/**
 * Creates the web OAuth provider of confirm on the phone.
 *
 * @example
 * ```ts
 * const oauth = createWechatWebOAuth({ appId: process.env.WECHAT_APP_ID!, appSecret: process.env.WECHAT_APP_SECRET! })
 * const auth = createScanAuth({ store, qr, confirm: 'link', confirmation: { url: 'https://app.example/auth/confirm', oauth } })
 * ```
 * Against the emulator: `createWechatWebOAuth(emulator.webOAuthOptions())`.
 *
 * @throws {@link WechatError} `invalid_options` naming the option that is missing or wrong.
 *   `authorizeUrl` throws `invalid_argument` for a `redirectUri` that is not an absolute http(s) URL
 *   or a `state` WeChat would refuse; `exchangeCode` rejects with `api_error` or `http_error` when
 *   WeChat cannot answer (it resolves null when WeChat refuses the code).
 */
export function createWechatWebOAuth(options: WechatWebOAuthOptions): WebOAuthProvider {
  const fail = (what: string): never => {
    throw new WechatError('invalid_options', `createWechatWebOAuth: ${what}`)
  }
  if (typeof options !== 'object' || options === null) fail('options are required')
  const { appId, appSecret } = options
  if (typeof appId !== 'string' || appId === '') fail('appId is required')
  if (typeof appSecret !== 'string' || appSecret === '') fail('appSecret is required')
  const apiBase = options.apiBase ?? WECHAT_API_BASE_URL
  if (!isHttpUrl(apiBase)) fail('apiBase must be an absolute http(s) URL')
  const authorizeBase = options.authorizeBase ?? WECHAT_AUTHORIZE_URL
  // The query and the #wechat_redirect fragment are ours to add.
  if (!isHttpUrl(authorizeBase) || /[?#]/.test(authorizeBase)) fail('authorizeBase must be an absolute http(s) URL without query or fragment')
  const timeoutMs = options.timeoutMs ?? 5000
  if (!(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) fail('timeoutMs must be a positive number')
  if (options.fetch !== undefined && typeof options.fetch !== 'function') fail('fetch must be a function')
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))

  return {
    authorizeUrl({ redirectUri, state }) {
      if (typeof redirectUri !== 'string' || !isHttpUrl(redirectUri)) {
        throw new WechatError('invalid_argument', 'authorizeUrl: redirectUri must be an absolute http(s) URL')
      }
      if (typeof state !== 'string' || !STATE_PATTERN.test(state)) {
        throw new WechatError('invalid_argument', 'authorizeUrl: state must be 0 to 128 characters of [A-Za-z0-9] (WeChat limit)')
      }
      // WeChat documents this exact parameter order, and the page refuses to work without the
      // #wechat_redirect fragment; URLSearchParams would also encode differently than WeChat shows.
      return `${authorizeBase}?appid=${encodeURIComponent(appId)}&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&scope=snsapi_base&state=${state}#wechat_redirect`
    },

    async exchangeCode(code) {
      // WeChat would refuse an empty code (41008) too: no need to ask it.
      if (typeof code !== 'string' || code === '') return null
      const query = new URLSearchParams({ appid: appId, secret: appSecret, code, grant_type: 'authorization_code' })
      let answer: Record<string, unknown>
      try {
        answer = await callApi({ url: `${joinUrl(apiBase, ENDPOINT)}?${query}`, endpoint: ENDPOINT, method: 'GET', timeoutMs, fetch })
      } catch (error) {
        if (error instanceof WechatApiError && REFUSED_CODE_ERRCODES.has(error.errcode)) return null
        throw error
      }
      const openid = answer.openid
      if (typeof openid !== 'string' || openid === '') {
        throw new WechatHttpError(ENDPOINT, 'bad_response', `WeChat ${ENDPOINT} answered without an openid`)
      }
      return openid
    },
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}
