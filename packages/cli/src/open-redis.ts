/**
 * The Redis store of the CLI: one ioredis connection that gives up at once when Redis does not
 * answer (no reconnect loop, no offline queue that would send a command later), and a prefix that
 * must already hold scanauth data of the current key layout.
 *
 * @module
 */
import { Redis } from 'ioredis'
import { Keys, LAYOUT_VERSION, RedisStore } from '@scanauth/redis'
import type { SessionRecord } from '@scanauth/core'
import { ScanAuthCliError, reasonOf } from './errors'
import type { LiveSessions, MigrationReport, OpenedStore } from './opened-store'
import { redactUrl, type StoreConfig } from './store-config'

type RedisConfig = Extract<StoreConfig, { kind: 'redis' }>

/** How long connecting may take before the store counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000

/** What the prefix holds: no scanauth data, data of this key layout, or of another one. */
type PrefixState = { kind: 'empty' } | { kind: 'current' } | { kind: 'other'; layout: string }

/** Connects and checks the prefix; refuses an unreachable server and a prefix without current scanauth data. */
export async function openRedis(config: RedisConfig): Promise<OpenedStore> {
  const { client, where } = await connect(config)
  try {
    const state = await prefixState(client, config, where)
    if (state.kind === 'empty') {
      throw new ScanAuthCliError(
        'store_not_initialized',
        `nothing is stored under the prefix ${JSON.stringify(config.keyPrefix)} at ${where}: is it the prefix your servers use? (--redis-prefix or SCANAUTH_REDIS_PREFIX)`,
      )
    }
    if (state.kind === 'other') throw layoutError(config, where, state.layout)
    return opened(config, client)
  } catch (error) {
    client.disconnect()
    throw error
  }
}

/** Redis has no schema: reports what the prefix holds and migrates nothing. */
export async function migrateRedis(config: RedisConfig): Promise<MigrationReport> {
  const { client, where } = await connect(config)
  try {
    const state = await prefixState(client, config, where)
    if (state.kind === 'other') throw layoutError(config, where, state.layout)
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

/** Reads the prefix's counters hash, which the first commit of any server creates with the layout version. */
async function prefixState(client: Redis, config: RedisConfig, where: string): Promise<PrefixState> {
  const seq = new Keys(config.keyPrefix).seq
  try {
    const [exists, layout] = await Promise.all([client.exists(seq), client.hget(seq, 'layout')])
    if (exists === 0) return { kind: 'empty' }
    if (layout === LAYOUT_VERSION) return { kind: 'current' }
    return { kind: 'other', layout: layout ?? '1' }
  } catch (error) {
    throw new ScanAuthCliError('store_unavailable', `Redis at ${where} refused to answer: ${reasonOf(error)}`, { cause: error })
  }
}

function layoutError(config: RedisConfig, where: string, layout: string): ScanAuthCliError {
  return new ScanAuthCliError(
    'schema_outdated',
    `the prefix ${JSON.stringify(config.keyPrefix)} at ${where} holds data of key layout ${layout} and this CLI reads layout ${LAYOUT_VERSION}; ` +
      'Redis data is not migrated: use a fresh prefix (docs/redis.md, "Upgrading from 0.1.0")',
  )
}

function opened(config: RedisConfig, client: Redis): OpenedStore {
  const store = new RedisStore({ client, keyPrefix: config.keyPrefix })
  const keys = store.keys
  return {
    kind: 'redis',
    label: labelOf(config),
    store,
    async liveSessions(userId: number, now: number, limit: number): Promise<LiveSessions> {
      // us:<userId> holds the tokens of the user's sessions scored by expiresAt; an ended session
      // is removed from it, so the entries above `now` are the live ones. All sessions of a server
      // share one lifetime, so the latest to expire are the latest created; sorted by id below.
      const index = keys.userSessions(userId)
      const [live, tokens] = await Promise.all([client.zcount(index, `(${now}`, '+inf'), client.zrevrangebyscore(index, '+inf', `(${now}`, 'LIMIT', 0, limit)])
      const loaded = await Promise.all(tokens.map((sessionToken) => store.load({ sessionToken })))
      const latest = loaded
        .map((l) => l.session)
        .filter((s): s is SessionRecord => s !== null && s.expiresAt > now)
        .sort((a, b) => b.id - a.id)
      return { live, latest }
    },
    async close() {
      await store.close()
      await client.quit().catch(() => client.disconnect())
    },
  }
}
