/**
 * `@scanauth/redis`: the scanauth Store on Redis 7+ through ioredis (standalone, Sentinel and
 * Cluster clients). Loads are one round trip, commits are one atomic Lua script with optimistic
 * version checks, scenes and sessions expire by relative TTLs. See `docs/redis.md`.
 *
 * ```ts
 * import { RedisStore } from '@scanauth/redis'
 * const store = new RedisStore({ client: redis, keyPrefix: 'myapp:{sa}:' })
 * ```
 *
 * @packageDocumentation
 */
export { RedisStore } from './redis-store'
export type { RedisStoreOptions } from './options'
/** The options and result of `purgeExpired`, the same on every store (defined in `@scanauth/core`). */
export type { PurgeOptions, PurgeResult } from '@scanauth/core'
export { DEFAULT_KEY_PREFIX, Keys, LAYOUT_VERSION } from './keys'
export { RedisStoreError, type RedisStoreErrorCode } from './errors'
