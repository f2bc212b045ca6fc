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
export { SqliteStore, type PurgeResult } from './sqlite-store'
export type { SqliteStoreOptions, PurgeOptions } from './options'
export { SqliteStoreError, type SqliteStoreErrorCode } from './errors'
export { MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE, type Migration } from './schema'
