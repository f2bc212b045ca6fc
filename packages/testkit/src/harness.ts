/**
 * What a store package hands to `describeStoreContract`.
 *
 * @module
 */
import type { MemoryStoreSnapshot, Store } from '@scanauth/core'

/** Every stored record, read straight from the backend (not through the store's `load`). */
export type StoreSnapshot = MemoryStoreSnapshot

/** One fresh, empty store and what the suite may do with its backing data. */
export interface StoreHarness {
  /** The store under test. Empty. */
  store: Store
  /**
   * Opens another store on the same backing data through its own connection (another SQLite
   * handle, another Redis client). The concurrency tests spread writers over several of them.
   * Leave out when the backend has no second connection (MemoryStore).
   */
  openPeer?(): Promise<Store> | Store
  /**
   * True when the backend forgets expired scenes, sessions and counters by itself (Redis key
   * TTLs), so the store's `purgeExpired` has none of them to delete: the purge suite then checks
   * that it deletes none, besides refusing bad options and keeping what is still needed. Closed
   * orders are deleted by every store's purge all the same (B-order-purge).
   */
  expiresByItself?: boolean
  /** Reads every record straight from the backend, for invariant checks. */
  dump(): Promise<StoreSnapshot> | StoreSnapshot
  /** Closes what the harness opened (peers included) and deletes the backing data. */
  cleanup(): Promise<void> | void
}

/** Creates a harness for one test. */
export type HarnessFactory = () => Promise<StoreHarness> | StoreHarness
