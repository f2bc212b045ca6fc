/**
 * Opening the configured store, for a command (which refuses a store that is not current) or for
 * `migrate`. Each kind is loaded when it is used, so that a run loads one database driver, and help
 * and usage errors none.
 *
 * @module
 */
import type { MigrationReport, OpenedStore } from './opened-store'
import type { StoreConfig } from './store-config'

/** Opens the store a command works on; nothing is written while it is opened and checked. */
export async function openStore(config: StoreConfig): Promise<OpenedStore> {
  if (config.kind === 'sqlite') return (await import('./open-sqlite')).openSqlite(config)
  if (config.kind === 'redis') return (await import('./open-redis')).openRedis(config)
  return (await import('./open-postgres')).openPostgres(config)
}

/** Brings the store's schema up to date (SQLite, PostgreSQL), or says there is none (Redis). */
export async function migrateStore(config: StoreConfig): Promise<MigrationReport> {
  if (config.kind === 'sqlite') return (await import('./open-sqlite')).migrateSqlite(config)
  if (config.kind === 'redis') return (await import('./open-redis')).migrateRedis(config)
  return (await import('./open-postgres')).migratePostgres(config)
}
