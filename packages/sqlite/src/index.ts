/**
 * `@scanauth/sqlite`: a scanauth {@link SqliteStore} on one SQLite file, through better-sqlite3.
 *
 * ```ts
 * import { createScanAuth } from '@scanauth/core'
 * import { SqliteStore } from '@scanauth/sqlite'
 *
 * const auth = createScanAuth({ store: new SqliteStore({ filename: './data/scanauth.db' }), qr })
 * ```
 *
 * @packageDocumentation
 */
export { SqliteStore } from './sqlite-store'
export type { SqliteStoreOptions } from './options'
/** The options and result of `purgeExpired`, the same on every store (defined in `@scanauth/core`). */
export type { PurgeOptions, PurgeResult } from '@scanauth/core'
export { SqliteStoreError, type SqliteStoreErrorCode } from './errors'
export { MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE } from './schema'
export type { Migration } from './migration'
