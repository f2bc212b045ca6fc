/**
 * The access token: fetched once, cached, shared, renewed before it expires, dropped when WeChat says
 * it is no longer valid.
 *
 * Why each piece:
 * - **Single flight.** Concurrent callers that find no usable token share one fetch; otherwise every
 *   request of a burst would fetch its own token (and, with the classic endpoint, each fetch would
 *   invalidate the previous one).
 * - **Shared cache.** Several processes can share one token through an async `{ get, set }` store
 *   (Redis, a database...). A process reads the cache before fetching, so only the first one fetches.
 * - **Renew early.** A token is used only until `refreshMarginSeconds` before its expiry (at most half
 *   its lifetime), so a call never races the expiry on WeChat's side.
 * - **Compare-and-drop.** On 40001/40014/42001 the caller drops the token *only if it is still the one
 *   that failed*; if another call already replaced it, the replacement is kept. Without the comparison,
 *   a burst of failures would throw away fresh tokens and fetch again and again.
 *
 * @module
 */

/** A token as stored in a {@link TokenCache}. */
export interface CachedToken {
  /** The access token. */
  accessToken: string
  /**
   * Epoch milliseconds after which the token must not be used any more. Already shortened by the
   * refresh margin, so every process that reads it renews in time.
   */
  expiresAt: number
}

/**
 * An optional store shared by many processes, so they use one token instead of fetching their own.
 * Values may be kept as JSON. Expired entries may be returned; they are ignored.
 *
 * @example
 * ```ts
 * const tokenCache: TokenCache = {
 *   async get(key) { const v = await redis.get(key); return v ? JSON.parse(v) : null },
 *   async set(key, value, ttlSeconds) { await redis.set(key, JSON.stringify(value), 'EX', ttlSeconds) },
 * }
 * ```
 */
export interface TokenCache {
  /**
   * The token stored under `key`, or `null`/`undefined` when there is none. The key names the
   * AppID and the endpoint, so several accounts can share one cache.
   */
  get(key: string): Promise<CachedToken | null | undefined>
  /** `ttlSeconds`: how long the value is useful (at least 1); a store may use it to expire the key. */
  set(key: string, value: CachedToken, ttlSeconds: number): Promise<void>
}

/** What the token endpoint answered. */
export interface FetchedToken {
  accessToken: string
  /** Seconds, as WeChat sent it (`expires_in`). */
  expiresIn: number
}

/** Options of {@link createTokenSource}. */
export interface TokenSourceOptions {
  /** Calls the token endpoint. */
  fetchToken: () => Promise<FetchedToken>
  /** Epoch milliseconds. */
  now: () => number
  /** Stop using a token this many seconds before it expires (capped at half its lifetime). */
  refreshMarginSeconds: number
  cache?: TokenCache | undefined
  cacheKey: string
  /** Receives cache failures; the token source carries on without the cache. */
  onCacheError?: ((error: unknown) => void) | undefined
}

/** Hands out access tokens. */
export interface TokenSource {
  /** A usable token: from memory, else the shared cache, else one (shared) fetch. */
  get(): Promise<string>
  /** WeChat rejected `token`: forget it, unless it has already been replaced. */
  reject(token: string): void
}

/** Creates the token source behind a QR provider. */
export function createTokenSource(options: TokenSourceOptions): TokenSource {
  const { fetchToken, now, cache, cacheKey } = options
  let current: CachedToken | null = null
  let inFlight: Promise<string> | null = null
  // The last token WeChat rejected. A shared cache may still hold it (another process wrote it, or we
  // cannot delete through `{get, set}`), so a cached copy of it is treated as a miss.
  let rejected: string | null = null

  const usable = (entry: CachedToken | null | undefined): entry is CachedToken =>
    entry != null &&
    typeof entry.accessToken === 'string' &&
    entry.accessToken !== '' &&
    entry.accessToken !== rejected &&
    typeof entry.expiresAt === 'number' &&
    now() < entry.expiresAt

  const reportCacheError = (error: unknown) => {
    try {
      options.onCacheError?.(error)
    } catch {
      // a failing reporter must not break token handling
    }
  }

  async function refresh(): Promise<string> {
    if (cache) {
      try {
        const shared = await cache.get(cacheKey)
        if (usable(shared)) {
          current = { accessToken: shared.accessToken, expiresAt: shared.expiresAt }
          return shared.accessToken
        }
      } catch (error) {
        reportCacheError(error)
      }
    }
    const fetched = await fetchToken()
    // The endpoint itself is the authority: if it hands the rejected token back, it is valid again.
    if (fetched.accessToken === rejected) rejected = null
    const lifetimeMs = Math.max(0, fetched.expiresIn) * 1000
    const marginMs = Math.min(options.refreshMarginSeconds * 1000, lifetimeMs / 2)
    const entry: CachedToken = { accessToken: fetched.accessToken, expiresAt: now() + lifetimeMs - marginMs }
    current = entry
    if (cache) {
      try {
        await cache.set(cacheKey, entry, Math.max(1, Math.ceil((lifetimeMs - marginMs) / 1000)))
      } catch (error) {
        reportCacheError(error)
      }
    }
    return entry.accessToken
  }

  return {
    get() {
      if (usable(current)) return Promise.resolve(current.accessToken)
      inFlight ??= refresh().finally(() => {
        inFlight = null
      })
      return inFlight
    },
    reject(token) {
      rejected = token
      if (current?.accessToken === token) current = null
    },
  }
}
