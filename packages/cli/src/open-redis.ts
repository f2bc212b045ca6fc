/**
 * The Redis store of the CLI: one ioredis connection that gives up at once when Redis does not
 * answer (no reconnect loop, no offline queue that would send a command later), and a prefix that
 * must already hold scanauth data of the current key layout, as the store's `schemaState` tells.
 *
 * @module
 */
import { Redis } from 'ioredis'
import { RedisStore } from '@scanauth/redis'
import type { SchemaState } from '@scanauth/core/store'
import { ScanAuthCliError, reasonOf } from './errors'
import { storeMethod, type MigrationReport, type OpenedStore } from './opened-store'
import { redactUrl, type StoreConfig } from './store-config'

type RedisConfig = Extract<StoreConfig, { kind: 'redis' }>

/** How long connecting may take before the store counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000

/** Connects and checks the prefix; refuses an unreachable server and a prefix without current scanauth data. */
export async function openRedis(config: RedisConfig): Promise<OpenedStore> {
  const { client, where } = await connect(config)
  try {
    const store = new RedisStore({ client, keyPrefix: config.keyPrefix })
    const state = await layoutOf(store, config, where)
    if (state.version === 0) {
      throw new ScanAuthCliError(
        'store_not_initialized',
        `nothing is stored under the prefix ${JSON.stringify(config.keyPrefix)} at ${where}: is it the prefix your servers use? (--redis-prefix or SCANAUTH_REDIS_PREFIX)`,
      )
    }
    if (state.version !== state.latest) throw layoutError(config, where, state)
    return opened(config, client, store)
  } catch (error) {
    client.disconnect()
    throw error
  }
}

/** Redis has no schema: reports what the prefix holds and migrates nothing. */
export async function migrateRedis(config: RedisConfig): Promise<MigrationReport> {
  const { client, where } = await connect(config)
  try {
    const state = await layoutOf(new RedisStore({ client, keyPrefix: config.keyPrefix }), config, where)
    if (state.version !== 0 && state.version !== state.latest) throw layoutError(config, where, state)
    return { kind: 'redis', label: labelOf(config), from: null, to: null, migrated: false }
  } finally {
    client.disconnect()
  }
}

function labelOf(config: RedisConfig): string {
  return `redis ${redactUrl(config.url, 'the Redis URL given')} prefix ${config.keyPrefix}`
}

async function connect(config: RedisConfig): Promise<{ client: Redis; where: string }> {
  const where = `${redactUrl(config.url, 'the Redis URL given')} (${config.from})`
  const client = new Redis(config.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  })
  // Failures are reported by the commands that meet them (an unheard 'error' event would end the
  // process); the last one says why a connection failed, where connect() only says it closed.
  let lastError: unknown
  client.on('error', (error: unknown) => {
    lastError = error
  })
  try {
    await client.connect()
    return { client, where }
  } catch (error) {
    client.disconnect()
    const reason = lastError ?? error
    throw new ScanAuthCliError('store_unavailable', `cannot reach Redis at ${where}: ${reasonOf(reason)}`, { cause: reason })
  }
}

/**
 * The key layout the prefix holds, from the store's `schemaState` (0 when nothing was written under
 * it: the first commit of any server writes the layout).
 */
async function layoutOf(store: RedisStore, config: RedisConfig, where: string): Promise<SchemaState> {
  const read = storeMethod(store, 'schemaState', labelOf(config), 'read its key layout')
  try {
    return await read()
  } catch (error) {
    throw new ScanAuthCliError('store_unavailable', `Redis at ${where} refused to answer: ${reasonOf(error)}`, { cause: error })
  }
}

function layoutError(config: RedisConfig, where: string, state: SchemaState): ScanAuthCliError {
  return new ScanAuthCliError(
    'schema_outdated',
    `the prefix ${JSON.stringify(config.keyPrefix)} at ${where} holds data of key layout ${state.version} and this CLI reads layout ${state.latest}; ` +
      'Redis data is not migrated: use a fresh prefix (docs/redis.md, "Upgrading from 0.1.0")',
  )
}

function opened(config: RedisConfig, client: Redis, store: RedisStore): OpenedStore {
  return {
    kind: 'redis',
    label: labelOf(config),
    store,
    async close() {
      await store.close()
      await client.quit().catch(() => client.disconnect())
    },
  }
}
