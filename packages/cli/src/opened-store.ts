/**
 * What a command gets: an open store of one of the three kinds and what closes it, and how a
 * command reaches an optional method of the Store contract (the operator reads, the order methods,
 * `purgeExpired`, the reminders' `listActiveAuthorizations`): through {@link storeMethod}, which refuses in one line a store without it. The
 * CLI reads every store through the Store contract only; it knows no table and no key.
 *
 * @module
 */
import type { Store } from '@scanauth/core'
import { ScanAuthCliError } from './errors'

/** The optional methods of the Store contract the commands read or write with. */
export type OptionalStoreMethod = 'listLiveSessions' | 'schemaState' | 'migrate' | 'listOpenOrders' | 'loadOrder' | 'purgeExpired' | 'listActiveAuthorizations'

/**
 * The store's optional method `name`, bound to it, or a `unsupported` refusal naming the store,
 * the method and what the command needed it for (`what`), e.g. "list a user's live sessions".
 */
export function storeMethod<K extends OptionalStoreMethod>(store: Store, name: K, label: string, what: string): NonNullable<Store[K]> {
  const method = store[name]
  if (typeof method !== 'function') {
    throw new ScanAuthCliError('unsupported', `${label} cannot ${what}: its store has no ${name}, an optional method of the Store contract (every scanauth store has it); nothing was changed`)
  }
  return (method as (...args: never[]) => unknown).bind(store) as NonNullable<Store[K]>
}

/** An open store. */
export interface OpenedStore {
  /** The kind of backend. */
  kind: 'sqlite' | 'redis' | 'postgres'
  /** The store in messages, without secrets: `sqlite /srv/data/scanauth.sqlite`, `redis redis://host:6379 prefix scanauth:`. */
  label: string
  /** The store, ready for `createScanAuth`. */
  store: Store
  /** Closes the store and every connection or file the CLI opened for it. */
  close(): Promise<void>
}

/** What `migrate` did. */
export interface MigrationReport {
  /** The kind of backend. */
  kind: 'sqlite' | 'redis' | 'postgres'
  /** The store, as in {@link OpenedStore.label}. */
  label: string
  /** The schema version found (null on Redis, which has no schema). */
  from: number | null
  /** The schema version left (null on Redis). */
  to: number | null
  /** Whether a migration ran. */
  migrated: boolean
}

/**
 * Checks a schema version found in a store against the one this CLI's store package reads, for a
 * command that is not `migrate`: nothing is written to a store that is not current.
 */
export function assertCurrent(found: number, current: number, where: string): void {
  if (found === 0) {
    throw new ScanAuthCliError(
      'store_not_initialized',
      `${where} holds no scanauth tables: is it the store your servers use? (\`scanauth migrate\` creates the tables)`,
    )
  }
  if (found < current) {
    throw new ScanAuthCliError(
      'schema_outdated',
      `${where} is at schema version ${found} and this CLI needs version ${current}: run \`scanauth migrate\` (servers of this release also migrate when they start)`,
    )
  }
  if (found > current) {
    throw new ScanAuthCliError(
      'schema_too_new',
      `${where} is at schema version ${found}, written by a newer release; this CLI knows versions up to ${current}: upgrade @scanauth/cli`,
    )
  }
}

/** Runs `work` on an opened store and closes it, whatever happens; a failure to close does not hide the result. */
export async function using<T>(opened: OpenedStore, work: (opened: OpenedStore) => Promise<T>): Promise<T> {
  try {
    return await work(opened)
  } finally {
    await opened.close().catch(() => undefined)
  }
}
