/**
 * `@scanauth/postgres`: a scanauth {@link PostgresStore} on PostgreSQL, through node-postgres.
 *
 * ```ts
 * import pg from 'pg'
 * import { createScanAuth, type QrProvider } from '@scanauth/core'
 * import { PostgresStore } from '@scanauth/postgres'
 *
 * declare const qr: QrProvider
 * const store = new PostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })
 * await store.migrate()
 * const auth = createScanAuth({ store, qr })
 * ```
 *
 * @packageDocumentation
 */
export { PostgresStore } from './postgres-store'
export type { PostgresStoreOptions } from './options'
/** The options and result of `purgeExpired`, the same on every store (defined in `@scanauth/core`). */
export type { PurgeOptions, PurgeResult } from '@scanauth/core'
export { PostgresStoreError, type PostgresStoreErrorCode } from './errors'
export { MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE, type Migration, type MigrationOutcome } from './schema'
