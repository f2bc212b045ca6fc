/**
 * The access token every Official Account API call carries, as the factories of this package get it:
 * from `stable_token` (default) or the classic `token` endpoint, through one {@link TokenSource}
 * (cached, shared, renewed early: token.ts), and one retry of a call whose token WeChat refused.
 *
 * The QR provider and the reminder notifier both build their tokens here, so they fetch, cache and
 * drop tokens the same way; an app may also hand the notifier the QR provider itself
 * ({@link WechatAccessTokens}), so one process holds one token.
 *
 * @module
 */
import { callApi, joinUrl, type FetchLike } from './api-client'
import { WechatHttpError, isTokenRejected } from './errors'
import { createTokenSource, type FetchedToken, type TokenCache, type TokenSource } from './token'

/**
 * Something that hands out the account's access token and hears when WeChat refused one: the QR
 * provider of `createWechatQrProvider` is one, so the notifier can share its token.
 */
export interface WechatAccessTokens {
  /** A valid access token (cached). */
  getAccessToken(): Promise<string>
  /** WeChat rejected `token` (40001/40014/42001): drop it unless it was already replaced. */
  rejectAccessToken(token: string): void
}

/** What a token source needs: the account, where to ask, and how. */
export interface AccessTokenSettings {
  appId: string
  appSecret: string
  apiBase: string
  tokenEndpoint: 'stable' | 'classic'
  tokenCache?: TokenCache | undefined
  tokenCacheKey?: string | undefined
  refreshMarginSeconds: number
  timeoutMs: number
  fetch: FetchLike
  now: () => number
  onTokenCacheError?: ((error: unknown) => void) | undefined
}

/** The token source of an account: fetched from `stable_token` or `token`, cached and shared. */
export function createAccessTokenSource(settings: AccessTokenSettings): TokenSource {
  const { appId, appSecret, apiBase, tokenEndpoint, timeoutMs, fetch } = settings
  const fetchToken = async (): Promise<FetchedToken> => {
    const answer =
      tokenEndpoint === 'stable'
        ? await callApi({
            url: joinUrl(apiBase, 'cgi-bin/stable_token'),
            endpoint: 'cgi-bin/stable_token',
            method: 'POST',
            // force_refresh stays false: forcing is limited to 20 a day and invalidates everyone's token.
            body: { grant_type: 'client_credential', appid: appId, secret: appSecret, force_refresh: false },
            timeoutMs,
            fetch,
          })
        : await callApi({
            url: `${joinUrl(apiBase, 'cgi-bin/token')}?${new URLSearchParams({ grant_type: 'client_credential', appid: appId, secret: appSecret })}`,
            endpoint: 'cgi-bin/token',
            method: 'GET',
            timeoutMs,
            fetch,
          })
    const endpoint = tokenEndpoint === 'stable' ? 'cgi-bin/stable_token' : 'cgi-bin/token'
    const accessToken = answer.access_token
    const expiresIn = Number(answer.expires_in)
    if (typeof accessToken !== 'string' || accessToken === '') throw badAnswer(endpoint, 'an access_token')
    if (!Number.isFinite(expiresIn) || expiresIn <= 0) throw badAnswer(endpoint, 'a valid expires_in')
    return { accessToken, expiresIn }
  }
  return createTokenSource({
    fetchToken,
    now: settings.now,
    refreshMarginSeconds: settings.refreshMarginSeconds,
    cache: settings.tokenCache,
    cacheKey: settings.tokenCacheKey ?? `scanauth:wechat:token:${appId}:${tokenEndpoint}`,
    onCacheError: settings.onTokenCacheError,
  })
}

/**
 * Runs `call` with a token; when WeChat refuses the token (40001/40014/42001) the token is dropped
 * and `call` runs once more with a fresh one. Never more than once: a second refusal is a real
 * problem to report. Repeating is safe because a refused token means WeChat did nothing.
 */
export async function withFreshToken<T>(tokens: WechatAccessTokens, call: (token: string) => Promise<T>): Promise<T> {
  const token = await tokens.getAccessToken()
  try {
    return await call(token)
  } catch (error) {
    if (!isTokenRejected(error)) throw error
    tokens.rejectAccessToken(token)
    return call(await tokens.getAccessToken())
  }
}

/** A {@link TokenSource} seen as {@link WechatAccessTokens}. */
export function asAccessTokens(source: TokenSource): WechatAccessTokens {
  return { getAccessToken: () => source.get(), rejectAccessToken: (token) => source.reject(token) }
}

function badAnswer(endpoint: string, what: string): WechatHttpError {
  return new WechatHttpError(endpoint, 'bad_response', `WeChat ${endpoint} answered without ${what}`)
}
