/**
 * The stores the push and HTTP benchmarks run on, opened the same way in every process: a
 * `MemoryStore`; a `SqliteStore` on a file in a fresh temporary folder (or on a file another
 * process made); a `RedisStore` at `REDIS_URL` under a key prefix of the benchmark's own (or one
 * another process chose); a `PostgresStore` at `DATABASE_URL` in a schema of the benchmark's own
 * (or one another process made), on a pool of `DEFAULT_POOL_SIZE` connections. The network stores
 * count their round trips (`BenchStore.roundTrips`). Whoever made the file,
 * the prefix or the schema removes it.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { MemoryStore, type QrProvider, type Store } from '@scanauth/core'
import { PostgresStore } from '@scanauth/postgres'
import { RedisStore } from '@scanauth/redis'
import { SqliteStore } from '@scanauth/sqlite'
import { countingPool, DEFAULT_POOL_SIZE, dropSchema, freshBenchSchema } from './postgres-pool'

/** The stores measured. */
export type StoreKind = 'memory' | 'sqlite' | 'redis' | 'postgres'

/** An open store. */
export interface BenchStore {
  kind: StoreKind
  store: Store
  /** The SQLite file, the Redis key prefix or the PostgreSQL schema, for another process to open the same data; '' for memory. */
  where: string
  /** Closes what was opened here, and removes the file, the keys or the schema when they were made here. Once: later calls return the same promise. */
  close(): Promise<void>
  /**
   * Round trips sent so far (a counter that only grows), counted as the store sections count them:
   * commands on the Redis client (its `sendCommand`), statements on the PostgreSQL pool's client
   * class (every `query`). Absent for the stores in process (memory, SQLite).
   */
  roundTrips?: () => number
}

/** The QR provider of every benchmark: a constant address, so only scanauth's own work is measured. */
export const constantQr: QrProvider = { createQr: async () => ({ url: 'https://qr.example.test/constant' }) }

/** The class name of a store kind, for tables. */
export const STORE_LABEL: Record<StoreKind, string> = { memory: 'MemoryStore', sqlite: 'SqliteStore', redis: 'RedisStore', postgres: 'PostgresStore' }

/**
 * Opens a store of `kind`. `where` opens existing data (a file, a prefix, a schema) that another process made;
 * without it, new data is made here and removed by `close()`.
 */
export async function openBenchStore(kind: StoreKind, where?: string): Promise<BenchStore> {
  const opened = await open(kind, where)
  let closing: Promise<void> | undefined
  return { ...opened, close: () => (closing ??= opened.close()) }
}

async function open(kind: StoreKind, where: string | undefined): Promise<BenchStore> {
  if (kind === 'memory') return { kind, store: new MemoryStore(), where: '', close: async () => {} }
  if (kind === 'sqlite') {
    const dir = where === undefined ? mkdtempSync(join(tmpdir(), 'scanauth-bench-')) : undefined
    const filename = where ?? join(dir as string, 'bench.db')
    const store = new SqliteStore({ filename })
    return {
      kind,
      store,
      where: filename,
      close: async () => {
        await store.close?.()
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  if (kind === 'postgres') {
    const { pool, statements } = countingPool(DEFAULT_POOL_SIZE)
    const schema = where ?? freshBenchSchema()
    const store = new PostgresStore({ pool, schema })
    // Cheap when another process already migrated the schema (docs/postgres.md, "Migrations").
    await store.migrate()
    return {
      kind,
      store,
      where: schema,
      roundTrips: statements,
      close: async () => {
        await store.close()
        if (where === undefined) await dropSchema(pool, schema)
        await pool.end()
      },
    }
  }
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const commands = commandCounter(client)
  // `{b}` is a Cluster hash tag (one slot), as in the other Redis benchmarks.
  const prefix = where ?? `scanauth:bench:${randomBytes(4).toString('hex')}:{b}:`
  const store = new RedisStore({ client, keyPrefix: prefix })
  return {
    kind,
    store,
    where: prefix,
    roundTrips: commands,
    close: async () => {
      await store.close?.()
      if (where === undefined) await deletePrefix(client, prefix)
      await client.quit().catch(() => client.disconnect())
    },
  }
}

/** Counts the commands `client` sends (its `sendCommand`, through which every command goes), as `bench/redis.ts` does. */
function commandCounter(client: Redis): () => number {
  let sent = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++
    return send(...args)
  }) as Redis['sendCommand']
  return () => sent
}

/** Deletes every key under `prefix` (SCAN + DEL; the prefix has no glob characters). */
async function deletePrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await client.del(...keys)
    cursor = next
  } while (cursor !== '0')
}
