/**
 * `createWechatQrProvider`: core's `QrProvider` on the WeChat Official Account API. It creates a
 * temporary string-scene code (`QR_STR_SCENE`) and returns the address of its image and the text
 * it encodes.
 *
 * @module
 */
import type { QrProvider } from '@scanauth/core'
import { callApi, joinUrl, type FetchLike } from './api-client'
import { asAccessTokens, createAccessTokenSource, withFreshToken } from './access-token'
import { WechatError, WechatHttpError } from './errors'
import type { TokenCache } from './token'

/** WeChat's API host. */
export const WECHAT_API_BASE_URL = 'https://api.weixin.qq.com'
/** The host that serves QR images (`showqrcode`). */
export const WECHAT_IMAGE_BASE_URL = 'https://mp.weixin.qq.com'

/** Options of {@link createWechatQrProvider}. */
export interface WechatQrProviderOptions {
  /** The Official Account's AppID (开发者ID). */
  appId: string
  /** The AppSecret (开发者密码). */
  appSecret: string
  /** API base URL. Default `https://api.weixin.qq.com`; the emulator's `url` in development and tests. */
  apiBaseUrl?: string
  /**
   * Base URL of QR images: the provider returns `{imageBaseUrl}/cgi-bin/showqrcode?ticket=...`.
   * Default `https://mp.weixin.qq.com`; when only `apiBaseUrl` is set (to something other than the
   * official API host), it defaults to `apiBaseUrl`, because the emulator serves both.
   */
  imageBaseUrl?: string
  /**
   * `stable` (default): `POST cgi-bin/stable_token` without force_refresh. Any number of processes get
   * the same token, so they never invalidate each other.
   * `classic`: `GET cgi-bin/token`. Each fetch invalidates the previous token after about 5 minutes,
   * so run one fetcher or share a `tokenCache`.
   */
  tokenEndpoint?: 'stable' | 'classic'
  /** A cache shared by processes, so only one of them fetches a token. Default: memory of this provider only. */
  tokenCache?: TokenCache
  /** Key in `tokenCache`. Default `scanauth:wechat:token:{appId}:{tokenEndpoint}`. */
  tokenCacheKey?: string
  /** Stop using a token this many seconds before it expires (at most half its lifetime). Default 300. */
  refreshMarginSeconds?: number
  /** Deadline of each HTTP request, in milliseconds. Default 5000. */
  timeoutMs?: number
  /** The `fetch` to use (e.g. one with a proxy dispatcher). Default: the global `fetch`. */
  fetch?: FetchLike
  /** Clock in epoch milliseconds, for token expiry. Default `Date.now`. */
  now?: () => number
  /** Called when `tokenCache` fails; the provider carries on with its own memory. */
  onTokenCacheError?: (error: unknown) => void
}

/** A temporary QR code as WeChat created it. */
export interface WechatQrCode {
  /** Exchanged for the image at `showqrcode`. */
  ticket: string
  /** What the QR image decodes to (you may draw the image yourself from it). */
  url: string
  /** Validity in seconds, as WeChat answered (some accounts see 0; trust what you asked for). */
  expireSeconds: number
  /** `{imageBaseUrl}/cgi-bin/showqrcode?ticket=<URL-encoded ticket>`. */
  imageUrl: string
}

/** Core's `QrProvider`, plus the lower-level calls it is built from. */
export interface WechatQrProvider extends QrProvider {
  /**
   * Creates a code for `sceneStr` and returns its image address in `url` (what the device gets as
   * `qr_url`) and the text it encodes in `content` (`qr_content`).
   */
  createQr(request: { sceneStr: string; expiresInSeconds: number }): Promise<{
    /** The image address of the code ({@link WechatQrCode.imageUrl}). */
    url: string
    /**
     * What the code encodes: the `url` of WeChat's `qrcode/create` answer ({@link WechatQrCode.url}),
     * so a device can draw the code itself. Absent when WeChat answered without one.
     */
    content?: string
  }>
  /** Creates a code and returns everything WeChat answered. Retries once with a new token on 40001/40014/42001. */
  createQrCode(request: { sceneStr: string; expiresInSeconds: number }): Promise<WechatQrCode>
  /** A valid access token (cached), e.g. to call other WeChat APIs with the same token. */
  getAccessToken(): Promise<string>
  /** Tells the provider WeChat rejected `token` on another API call; it is dropped unless already replaced. */
  rejectAccessToken(token: string): void
}

/**
 * Creates the WeChat QR provider.
 *
 * @example
 * ```ts
 * const qr = createWechatQrProvider({ appId: process.env.WECHAT_APP_ID!, appSecret: process.env.WECHAT_APP_SECRET! })
 * const auth = createScanAuth({ store, qr })
 * ```
 * Against the emulator: `createWechatQrProvider({ appId, appSecret, apiBaseUrl: emulator.url })`.
 *
 * @throws {@link WechatError} `invalid_options` naming the option that is missing or wrong. Its calls
 *   reject with `invalid_argument` for an out-of-range argument, else `api_error` or `http_error`.
 */
export function createWechatQrProvider(options: WechatQrProviderOptions): WechatQrProvider {
  const { appId, appSecret } = options
  requireText('appId', appId)
  requireText('appSecret', appSecret)
  const apiBaseUrl = options.apiBaseUrl ?? WECHAT_API_BASE_URL
  const imageBaseUrl = options.imageBaseUrl ?? (options.apiBaseUrl !== undefined && !isOfficialApi(options.apiBaseUrl) ? options.apiBaseUrl : WECHAT_IMAGE_BASE_URL)
  const tokenEndpoint = options.tokenEndpoint ?? 'stable'
  if (tokenEndpoint !== 'stable' && tokenEndpoint !== 'classic') throw invalidOption("tokenEndpoint must be 'stable' or 'classic'")
  const timeoutMs = options.timeoutMs ?? 5000
  if (!(timeoutMs > 0)) throw invalidOption('timeoutMs must be positive')
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))

  const tokens = createAccessTokenSource({
    appId,
    appSecret,
    apiBase: apiBaseUrl,
    tokenEndpoint,
    tokenCache: options.tokenCache,
    tokenCacheKey: options.tokenCacheKey,
    refreshMarginSeconds: options.refreshMarginSeconds ?? 300,
    timeoutMs,
    fetch,
    now: options.now ?? Date.now,
    onTokenCacheError: options.onTokenCacheError,
  })

  const createWithToken = async (token: string, sceneStr: string, expireSeconds: number): Promise<WechatQrCode> => {
    const endpoint = 'cgi-bin/qrcode/create'
    const answer = await callApi({
      url: `${joinUrl(apiBaseUrl, endpoint)}?access_token=${encodeURIComponent(token)}`,
      endpoint,
      method: 'POST',
      // expire_seconds is always sent: without it WeChat falls back to a short default (60 s).
      body: { expire_seconds: expireSeconds, action_name: 'QR_STR_SCENE', action_info: { scene: { scene_str: sceneStr } } },
      timeoutMs,
      fetch,
    })
    const ticket = answer.ticket
    const url = answer.url
    if (typeof ticket !== 'string' || ticket === '') throw badAnswer(endpoint, 'a ticket')
    return {
      ticket,
      url: typeof url === 'string' ? url : '',
      expireSeconds: Number(answer.expire_seconds ?? expireSeconds),
      // Tickets are base64 and often end in "==": they must be URL-encoded.
      imageUrl: `${joinUrl(imageBaseUrl, 'cgi-bin/showqrcode')}?ticket=${encodeURIComponent(ticket)}`,
    }
  }

  const createQrCode: WechatQrProvider['createQrCode'] = async ({ sceneStr, expiresInSeconds }) => {
    if (typeof sceneStr !== 'string' || sceneStr.length < 1 || sceneStr.length > 64) {
      throw new WechatError('invalid_argument', 'sceneStr must be 1 to 64 characters (WeChat scene_str limit)')
    }
    if (!Number.isFinite(expiresInSeconds) || expiresInSeconds <= 0) throw new WechatError('invalid_argument', 'expiresInSeconds must be a positive number')
    // WeChat's temporary codes live at most 30 days.
    const expireSeconds = Math.min(2_592_000, Math.ceil(expiresInSeconds))
    return withFreshToken(asAccessTokens(tokens), (token) => createWithToken(token, sceneStr, expireSeconds))
  }

  return {
    createQrCode,
    async createQr(request) {
      const code = await createQrCode(request)
      return code.url === '' ? { url: code.imageUrl } : { url: code.imageUrl, content: code.url }
    },
    getAccessToken: () => tokens.get(),
    rejectAccessToken: (token) => tokens.reject(token),
  }
}

function requireText(name: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw invalidOption(`${name} is required`)
}

function invalidOption(what: string): WechatError {
  return new WechatError('invalid_options', `createWechatQrProvider: ${what}`)
}

function isOfficialApi(url: string): boolean {
  try {
    return new URL(url).hostname === 'api.weixin.qq.com'
  } catch {
    return false
  }
}

function badAnswer(endpoint: string, what: string): WechatHttpError {
  return new WechatHttpError(endpoint, 'bad_response', `WeChat ${endpoint} answered without ${what}`)
}
