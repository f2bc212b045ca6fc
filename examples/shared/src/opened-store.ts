/**
 * What opening a store gives the server, in a module of its own so that `open-store.ts` and the
 * openers it hands to (`open-postgres.ts`) both use it without importing each other.
 *
 * @module
 */
import type { Store } from '@scanauth/core'

/** An open store, what closes it, and how the start-up line names it. */
export interface OpenedStore {
  store: Store
  /** Releases what was opened for the store (the file, the Redis connection, the PostgreSQL pool). */
  close(): Promise<void>
  /** The store in the start-up line, without secrets (e.g. `redis redis://:***@host:6379/ (prefix scanauth:)`). */
  label: string
}
