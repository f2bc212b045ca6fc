/**
 * The storage contract. A store only loads records and commits change sets atomically; every
 * rule of docs/behaviour.md lives in `@scanauth/core` (see `docs/architecture.md`).
 *
 * ## Implementing a store
 *
 * Two methods: {@link Store.load} reads what one operation needs in one go (one round trip on a
 * networked backend), and {@link Store.commit} applies a {@link ChangeSet} atomically after checking
 * its expectations. The service loads, asks the pure rules for a change set, and commits; when the
 * commit reports a conflict it reloads and plans again. That cycle gives "one effective processing
 * per scene" and "serialize per user" on every backend, across processes, without locks held
 * between the load and the commit.
 *
 * ## Rules
 *
 * - Absent means `null`, never `undefined` and never an error.
 * - Times are epoch milliseconds from the service's injected clock. A store never reads a clock to
 *   decide anything; it may use times only to let the backend free memory (Redis TTLs).
 * - Ids are integers assigned by the store at commit, starting at 1 and increasing per kind, so
 *   "ties broken by lower id" means "created earlier".
 * - A commit applies all of its writes or none. Failed expectations are not errors: they return
 *   `{ ok: false }`. Errors (I/O, a closed connection) are thrown; the commit was then applied whole
 *   or not at all, and on a networked backend the caller cannot always tell which (a reply lost after
 *   the server ran it). A store whose client re-sends commands must make a re-sent commit answer
 *   like the first one instead of applying it again (`RedisStore` keeps a short-lived receipt).
 * - The store owns only what it opened: `close()` never closes a client or database handle that
 *   the application passed in.
 *
 * ## Testing your store
 *
 * Run `describeStoreContract` from `@scanauth/testkit` against it: it exercises every rule of
 * docs/behaviour.md through `createScanAuth`, including concurrent commits.
 *
 * @module
 */
import type {
  AuthorizationRecord,
  IdempotencyRecord,
  LedgerEntryRecord,
  OrderRecord,
  SceneRecord,
  SessionRecord,
  UserAggregate,
  UserRecord,
} from './records'
import type { ChangeSet, CommitResult } from './change-set'

// The change sets a commit takes live beside this file (change-set.ts); every caller finds them here too.
export { NEW_USER, type UserRef, type SceneDraft, type NewAuthorization, type NewSession, type SceneWrite, type UserWrite, type ChangeSet, type AuthorizationRef, type NewLedgerEntry, type NewIdempotencyRecord, type AssignedIds, type CommitResult } from './change-set'
import type { PurgeOptions, PurgeResult } from './purge'
import type { LiveSessionQuery, MigrationResult, OrderListQuery, SchemaState, UserListQuery } from './operator-reads'
import type { ActiveAuthorizationQuery } from './reminder-reads'

/**
 * What one load reads. Each field asks for one thing; fields left out are answered with `null`.
 * At most one of `userId`, `openid` and `userOfSession` may be given.
 */
export interface LoadQuery {
  /** The scene with this `sceneStr`. */
  sceneStr?: string
  /**
   * The scene whose `confirmation.ticketHash` is this digest, as `scene` (confirm on the phone,
   * B-confirm-2, B-confirm-4). Not with `sceneStr`. A store keeps an index on it, and finds a decided scene too (a reused ticket is told it was used) until the scene is purged.
   */
  confirmTicketHash?: string
  /** The user with this id, with its active authorizations and the head of its queue. */
  userId?: number
  /** The user with this openid, with its active authorizations and the head of its queue. */
  openid?: string
  /**
   * With `userId`, `openid` or `userOfSession`: load every `pending` authorization of the user, not only the head of
   * the queue. Costs as much as the queue is long; only revocation and `getUser` ask for it.
   */
  wholeQueue?: boolean
  /** The session with this token. */
  sessionToken?: string
  /**
   * With `sessionToken`: also the user the session belongs to, as `user` (with its active
   * authorizations and the head of its queue, every pending one with `wholeQueue`), in the same
   * read, so that a session check costs one round trip (docs/behaviour.md, B-load-2). The user is
   * read whether or not the session is still live (the store knows no clock); `user` is null when
   * there is no such session. Not with `userId` or `openid`.
   */
  userOfSession?: boolean
  /** The session with the highest id among those created by this scene id. */
  latestSessionOfScene?: number
  /** The idempotency record of this key. */
  idempotencyKey?: string
  /** The authorization with this id, whatever its status. */
  authorizationId?: number
}

/** The answer to a {@link LoadQuery}: each part is `null` when it was not asked for or does not exist. */
export interface LoadResult {
  /** The scene asked for by `sceneStr` or `confirmTicketHash`. */
  scene: SceneRecord | null
  /**
   * The user asked for by `userId`, `openid` or `userOfSession`. Authorizations: the `active` ones and the first
   * `pending` one (every `pending` one with `wholeQueue`), by createdAt then id.
   */
  user: UserAggregate | null
  /** The session asked for by `sessionToken`. */
  session: SessionRecord | null
  /** The latest session of the scene asked for by `latestSessionOfScene`. */
  latestSession: SessionRecord | null
  /** The record of the key asked for by `idempotencyKey`. */
  idempotency: IdempotencyRecord | null
  /** The authorization asked for by `authorizationId`. */
  authorization: AuthorizationRecord | null
}

/** Which sessions {@link Store.endSessions} ends: one by its token, or every session of a user. */
export type SessionSelector =
  | {
      /** The session with this token. */
      token: string
    }
  | {
      /** Every session of this user. */
      userId: number
    }

/** Told the `sceneStr` of a scene that a commit wrote; see {@link Store.watchScenes}. */
export type SceneChangeListener = (sceneStr: string) => void

/** What {@link Store.listLedger} reads: a user's entries after an id, oldest first. */
export interface LedgerQuery {
  /** The user. */
  userId: number
  /** Only entries with a greater id (0 for the first page). */
  afterId: number
  /** At most this many entries. */
  limit: number
}

/** Insert a new order (expects its `outTradeNo` to be free), or replace one (expects its version). */
export type OrderWrite =
  | {
      /** Insert a new order. */
      op: 'insert'
      /** The order, `version` 1. */
      order: OrderRecord
    }
  | {
      /** Replace a stored order (matched by `order.outTradeNo`). */
      op: 'update'
      /** The order as it must be stored, its `version` already bumped. */
      order: OrderRecord
      /** The version the stored order must still have. */
      expectedVersion: number
    }

/**
 * Which `open` orders {@link Store.listOpenOrders} reads. Every field given must match (AND);
 * the answer is ordered by `createdAt`, then `outTradeNo`, oldest first.
 */
export interface OpenOrderQuery {
  /** Only this user's orders. */
  userId?: number
  /** Only orders opened for this scene. */
  sceneStr?: string
  /** Only orders with `createdAt <= createdAtOrBefore`. */
  createdAtOrBefore?: number
  /** Only orders after this one in the order above (a page's last order): the next page. */
  after?: {
    /** That order's `createdAt`. */ createdAt: number
    /** That order's `outTradeNo`. */ outTradeNo: string
  }
  /** At most this many (1–1000). */
  limit: number
}

/**
 * A storage backend for scanauth. Implementations: `MemoryStore` (here), `SqliteStore`
 * (`@scanauth/sqlite`), `RedisStore` (`@scanauth/redis`), `PostgresStore` (`@scanauth/postgres`).
 */
export interface Store {
  /**
   * Reads what a {@link LoadQuery} asks for. Not atomic across the parts (the commit's expectations
   * catch anything that changed in between). A networked store answers in one round trip.
   */
  load(query: LoadQuery): Promise<LoadResult>
  /**
   * Checks every expectation of the change set and applies all of its writes, atomically with
   * respect to every other commit on the same backing data (other processes included). Expectations:
   * a scene `insert` expects its `sceneStr` to be free; a scene `update` expects the stored version to
   * equal `expectedVersion`; a user `insert` expects its openid to be free; a user `update` expects the
   * stored version to equal `expectedVersion`; an `idempotency` record expects its key to be free.
   * Records are written exactly as given (the service sets the new `version`); `NEW_USER` and
   * `AuthorizationRef` (change-set.ts) references resolve to the ids assigned in the same commit. Ledger entries
   * get increasing ids in the order given.
   */
  commit(changes: ChangeSet): Promise<CommitResult>
  /**
   * A user's ledger entries with an id above `afterId`, oldest first, at most `limit` of them. An
   * unknown user has none.
   */
  listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]>
  /**
   * Ends sessions: every selected session still live at `at` (`expiresAt > at`) gets `expiresAt = at`,
   * so that from `at` on it counts as expired everywhere. Returns how many it ended. Atomic per
   * session; a session created concurrently for the user may be missed (it was created after the call).
   */
  endSessions(selector: SessionSelector, at: number): Promise<number>
  /**
   * Tells `listener` the `sceneStr` of every scene a commit writes, whichever process committed it
   * through the same backing data, as soon as the store learns of it; returns the function that
   * stops it. What it promises: every scene write committed after the store's next read or commit
   * that follows this call (a networked store may need that long to have its subscription live) is
   * told at least once, soon (in process at once; across processes within the store's documented
   * delay), unless the connection to the backend is lost meanwhile. A notification may be repeated,
   * or come for a write that changed nothing the caller sees, so the caller reads the scene again.
   * The store keeps one subscription to its backend however many listeners it has, and none when it
   * has none.
   */
  watchScenes(listener: SceneChangeListener): () => void
  /**
   * Adds one to the counter `key` and returns its new value, atomically with respect to every other
   * call on the same backing data (other processes included). A counter that does not exist, or
   * whose `expiresAt <= now`, starts again from 0 with this `expiresAt`, so the first call answers 1.
   * Counters carry no meaning for the store: core builds rate limits on them and
   * `@scanauth/wechat` its replay and duplicate records. Keys are opaque strings of up to 512
   * characters. A store may forget a counter once its `expiresAt` has passed (a TTL, a purge).
   */
  incrementCounter(key: string, expiresAt: number, now: number): Promise<number>
  /** Deletes the counter `key`; nothing happens when there is none. */
  deleteCounter(key: string): Promise<void>
  /**
   * Deletes what is no longer needed at `options.now` (the service's clock), by the one retention
   * rule of core (docs/behaviour.md, D-retention; `rules/retention.ts`): scenes once they and their
   * latest session have expired, sessions and counters once expired, and a store with the order
   * methods also every `closed` order that core's `orderNeededUntil` lets go (one that never took
   * money, past its payment deadline: B-order-purge), each kept `retentionMs` longer, in batches of
   * at most `batchSize` per kind. Users, authorizations, ledger entries, idempotency keys and open,
   * paid and refunded orders are never deleted. Every scanauth store has it with this signature; a
   * store whose backend forgets records by itself (Redis TTLs) deletes only the closed orders.
   * Optional, so a store of your own may leave it out until it needs housekeeping.
   */
  purgeExpired?(options: PurgeOptions): Promise<PurgeResult>
  /**
   * The order with this `outTradeNo`, or null. Part of the order methods (`loadOrder`,
   * `saveOrder`, `listOpenOrders`): every scanauth store has all three; `createScanAuth` asks for
   * them only when `payments` is configured, so a store of your own may leave them out until then.
   * Open, paid and refunded orders are never deleted (the record of money taken); a closed one that
   * never took money goes with `purgeExpired` once past its payment deadline (B-order-purge).
   */
  loadOrder?(outTradeNo: string): Promise<OrderRecord | null>
  /**
   * Writes one order atomically with respect to every other `saveOrder` on the same backing data:
   * an `insert` expects no order with its `outTradeNo`, an `update` expects the stored version to
   * equal `expectedVersion`. Answers true when written, false when the expectation failed (nothing
   * written). The order is stored exactly as given, `refunds` included.
   */
  saveOrder?(write: OrderWrite): Promise<boolean>
  /** The `open` orders that match {@link OpenOrderQuery}, oldest first, at most `limit`. */
  listOpenOrders?(query: OpenOrderQuery): Promise<OrderRecord[]>
  /**
   * The sessions of user `userId` live at `now` (`expiresAt > now`; an ended one is not), newest
   * first (highest id first), only those with an id below `beforeId` when it is given, at most
   * `limit`; each exactly as `load` answers it. `[]` for an unknown user. A page costs at most the
   * user's live sessions, never the store's size. One of the operator reads (`listLiveSessions`,
   * `listUsers`, `listOrders`, `schemaState`; `operator-reads.ts`), which `createScanAuth` never
   * calls: every scanauth store has them, and an operator's tool refuses, in one line, a store of
   * your own that leaves one out.
   */
  listLiveSessions?(query: LiveSessionQuery): Promise<SessionRecord[]>
  /**
   * Users with an id above `afterId` (0 when left out), lowest id first, at most `limit`; each
   * exactly as `load` answers its `user.user`. `[]` past the last user. A page reads `limit` users
   * by primary key (ids are dense: users are never deleted), whatever the number of users.
   */
  listUsers?(query: UserListQuery): Promise<UserRecord[]>
  /**
   * Orders of any status (unless `status` is given) that match every filter given
   * (`createdFrom <= createdAt < createdBefore`), ordered by `createdAt`, then `outTradeNo`, strictly
   * after the `after` cursor, at most `limit`; each exactly as `loadOrder` answers it. A page is one
   * range of an index that holds the orders in that order (every order, by status, by user, by user
   * and status), starting at the cursor, so it costs about `limit` orders whatever the store holds.
   * Purged orders are gone from it.
   */
  listOrders?(query: OrderListQuery): Promise<OrderRecord[]>
  /**
   * Where the backend's schema stands: the version it holds, the one this store reads and writes,
   * and what `migrate` would apply. Reads a few records and changes nothing; a store answers it
   * before it is migrated (a `PostgresStore` before `migrate()`, a `SqliteStore` opened with
   * `migrate: false`), so that a tool can refuse a backend of another version before it writes.
   */
  schemaState?(): Promise<SchemaState>
  /**
   * Brings the backend's schema up to `latest` (atomically, safe beside other processes doing the
   * same) and answers the version before and after; changes nothing on a current schema. Throws
   * for a schema written by a newer release. Only a store with a schema to migrate has it
   * (`SqliteStore`, `PostgresStore`).
   */
  migrate?(): Promise<MigrationResult>
  /**
   * The `active` authorizations a {@link ActiveAuthorizationQuery} names, each exactly as `load`
   * answers it (`load({ authorizationId })`): time ones with `endFrom <= endAt < endBefore`, ordered by
   * `endAt` then id; points ones with `0 < remainingPoints < pointsBelow`, ordered by id; strictly
   * after the cursor, at most `limit`. A page is one range of an index the store keeps in step with
   * every commit, so it costs about `limit` authorizations whatever the store holds (a pass over a
   * million users reads only those near their end). An authorization that leaves `active` leaves the
   * answer with the same commit. `createScanAuth` asks for it only when `reminders` is configured;
   * every scanauth store has it.
   */
  listActiveAuthorizations?(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]>
  /** Releases what the store itself opened. Optional; never closes a client the application passed in. */
  close?(): Promise<void>
}
