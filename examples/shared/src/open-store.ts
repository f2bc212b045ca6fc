/**
 * Opening the store the configuration names (`SCANAUTH_STORE`): memory, a SQLite file, Redis or
 * PostgreSQL (`open-postgres.ts`), each with a start-up failure that names the variable to change,
 * and a `close` that releases exactly what was opened here.
 *
 * @module
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Redis } from 'ioredis'
import { MemoryStore } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { RedisStore } from '@scanauth/redis'
import { ConfigError, type StoreConfig } from './config'
import { openPostgres } from './open-postgres'
import type { OpenedStore } from './opened-store'
import { redactUrl } from './redact-url'

/** Opens the configured store. */
export async function openStore(config: StoreConfig, log: (line: string) => void): Promise<OpenedStore> {
  if (config.kind === 'memory') return { store: new MemoryStore(), close: async () => {}, label: 'memory' }
  if (config.kind === 'sqlite') return openSqlite(config)
  if (config.kind === 'redis') return openRedis(config, log)
  return openPostgres(config, log)
}

function openSqlite(config: Extract<StoreConfig, { kind: 'sqlite' }>): OpenedStore {
  let store: SqliteStore
  try {
    mkdirSync(dirname(config.filename), { recursive: true })
    store = new SqliteStore({ filename: config.filename })
  } catch (error) {
    // better-sqlite3 says only "unable to open database file": name the file and where it came from.
    throw new ConfigError(`cannot open the SQLite file ${config.filename} (SCANAUTH_SQLITE_FILE): ${error instanceof Error ? error.message : String(error)}`)
  }
  return { store, close: () => store.close(), label: `sqlite ${config.filename}` }
}

async function openRedis(config: Extract<StoreConfig, { kind: 'redis' }>, log: (line: string) => void): Promise<OpenedStore> {
  const client = new Redis(config.url, { maxRetriesPerRequest: 2 })
  client.on('error', (error: Error) => log(`redis: ${error.message}`))
  try {
    await client.ping() // fail at start, with the reason, rather than on the first request
  } catch (error) {
    client.disconnect()
    throw new ConfigError(`cannot reach Redis at ${redactUrl(config.url, 'redis')}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const store = new RedisStore({ client, keyPrefix: config.keyPrefix })
  return {
    store,
    close: async () => {
      await client.quit().catch(() => client.disconnect())
    },
    label: `redis ${redactUrl(config.url, 'redis')} (prefix ${config.keyPrefix})`,
  }
}
