/**
 * The queries and answers of the operator reads: the optional `Store` methods that an
 * operator's tools read a store with (`@scanauth/cli`, and a console later): a user's live
 * sessions, users by id, orders by user, status and time, and where the backend's schema stands.
 * `createScanAuth` never calls them; every scanauth store has them (docs/stores.md).
 *
 * Every listing is a keyset page: ordered by a key the store keeps an index on, read from just after
 * (or before) the cursor the previous page ended at, at most `limit` records. A page shorter than
 * `limit` is the last one. So a page costs about `limit` records whatever the store holds (a
 * million users), and a record written between two pages never shifts the pages after it.
 *
 * @module
 */
import type { OrderStatus } from './records'

/** Which sessions `Store.listLiveSessions` reads: one user's sessions live at `now`, newest first. */
export interface LiveSessionQuery {
  /** The user. */
  userId: number
  /**
   * The service's clock, now: only sessions with `expiresAt > now` (docs/behaviour.md, B-expiry-1).
   * Not a time long past: a store may already have forgotten sessions that were over by the clock of
   * a later write (Redis trims a user's session index as it adds a session).
   */
  now: number
  /** Only sessions with a lower id: the id of the last session of the previous page. Left out for the first page. */
  beforeId?: number
  /** At most this many (1–1000). */
  limit: number
}

/** Which users `Store.listUsers` reads: by id, lowest first, after a cursor. */
export interface UserListQuery {
  /** Only users with a greater id: the id of the last user of the previous page. 0 or left out for the first page. */
  afterId?: number
  /** At most this many (1–1000). */
  limit: number
}

/** Where an order stands in the order `createdAt`, then `outTradeNo`: the last order of a page. */
export interface OrderCursor {
  /** That order's `createdAt`. */
  createdAt: number
  /** That order's `outTradeNo`. */
  outTradeNo: string
}

/**
 * Which orders `Store.listOrders` reads, whatever their status unless `status` is given.
 * Every field given must match (AND); the answer is ordered by `createdAt`, then `outTradeNo`
 * (byte order), oldest first.
 */
export interface OrderListQuery {
  /** Only this user's orders. */
  userId?: number
  /** Only orders with this status. */
  status?: OrderStatus
  /** Only orders with `createdAt >= createdFrom`. */
  createdFrom?: number
  /** Only orders with `createdAt < createdBefore`. */
  createdBefore?: number
  /** Only orders after this one in the order above: the last order of the previous page. */
  after?: OrderCursor
  /** At most this many (1–1000). */
  limit: number
}

/** One step of a store's schema history, as {@link SchemaState.pending} lists it. */
export interface SchemaStep {
  /** The schema version once the step is applied. */
  version: number
  /** What the step does. */
  name: string
}

/**
 * Where a backend's schema stands, as `Store.schemaState` reads it without changing anything.
 * The store's other methods work when `version === latest`, and on a backend that needs nothing
 * created first (Redis: a fresh prefix) also when `version === 0`.
 */
export interface SchemaState {
  /**
   * The version of what the backend holds: the highest migration applied (SQLite, PostgreSQL), the
   * key layout (Redis). 0 when it holds no scanauth data at all: no scanauth tables, nothing under
   * the key prefix.
   */
  version: number
  /** The version this store reads and writes. A `version` above it was written by a newer release. */
  latest: number
  /**
   * The steps `Store.migrate` would apply to reach `latest`, oldest first. Empty when the
   * schema is current, newer, or cannot be migrated: a store without `migrate` (Redis data of
   * another layout is never converted).
   */
  pending: SchemaStep[]
  /**
   * False when the place the store was pointed at does not exist yet, a PostgreSQL `schema` never
   * created (`migrate()` creates it); `version` is then 0. True on every store without such a place.
   */
  exists: boolean
}

/** What `Store.migrate` did: the schema version before and after. */
export interface MigrationResult {
  /** The version found. */
  from: number
  /** The version left: the store's `latest`. */
  to: number
}
