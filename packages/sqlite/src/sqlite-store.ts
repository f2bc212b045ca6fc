/**
 * `SqliteStore`: the Store contract on one SQLite file through better-sqlite3.
 *
 * better-sqlite3 is synchronous, so a commit is one `BEGIN IMMEDIATE` transaction that runs from
 * start to end within one call: it takes the file's write lock first (waiting up to the busy
 * timeout), checks every expectation of the change set, applies the writes, and commits. Other
 * connections, in this process or another, see all of it or none of it. A counter increment is
 * one upsert statement, atomic on its own.
 *
 * @module
 */
import Database from 'better-sqlite3'
import { type PurgeOptions, type PurgeResult, type LedgerEntryRecord, type OrderRecord, type Store, type UserAggregate } from '@scanauth/core'
import { purgeableScenes, purgeInBatches, resolvePurgeOptions, startOfScenes, type PurgeBatchOutcome, type PurgeSceneCursor, type ChangeSet, type CommitResult, type LedgerQuery, type LoadQuery, type LoadResult, type OpenOrderQuery, type OrderWrite, type SceneChangeListener, type SessionSelector } from '@scanauth/core/store'
import type { ActiveAuthorizationQuery, AuthorizationRecord, LiveSessionQuery, MigrationResult, OrderListQuery, SchemaState, SessionRecord, UserListQuery, UserRecord } from '@scanauth/core/store'
import { listActiveAuthorizations } from './active-reads'
import { applyChanges } from './apply-changes'
import { SceneChangeLog } from './change-log'
import { SqliteStoreError } from './errors'
import { resolveStoreOptions, type SqliteStoreOptions } from './options'
import {
  toAuthorization,
  toIdempotency,
  toLedgerEntry,
  toScene,
  toSession,
  toUserAggregate,
  type SessionRow,
} from './rows'
import { configure, openDatabaseFile } from './open-file'
import { listLiveSessions, listOrders, listUsers } from './operator-reads'
import { listOpenOrders, loadOrder, saveOrder } from './orders'
import { migrate as migrateSchema, readSchemaState, readVersion, SCHEMA_VERSION } from './schema'
import { prepareStatements, type Statements } from './statements'


/**
 * A store on a SQLite file, shared safely by any number of connections and processes (WAL mode,
 * one `BEGIN IMMEDIATE` transaction per commit, versions checked inside it). Creates or migrates
 * its tables (all named `scanauth_*`) when constructed (unless `migrate: false`); refuses a file
 * written by a newer release.
 *
 * Expired scenes, sessions and counters, and closed orders, stay in the file until
 * {@link SqliteStore.purgeExpired} deletes them: call it now and then (see `docs/sqlite.md`).
 *
 * {@link SqliteStore.watchScenes} tells of scenes written by any process on the file: at once for
 * this store's own commits, within `changePollMs` (default 25 ms) for the others', through a
 * change log the commits write themselves. It costs nothing while nobody watches.
 *
 * @example
 * ```ts
 * import { createScanAuth } from '@scanauth/core'
 * import { SqliteStore } from '@scanauth/sqlite'
 *
 * const store = new SqliteStore({ filename: './data/scanauth.db' })
 * const auth = createScanAuth({ store, qr })
 * // ... on shutdown
 * await store.close()
 * ```
 */
export class SqliteStore implements Store {
  /**
   * The connection the store works on: the one it opened, or the application's. Use it for
   * backups (`store.database.backup(path)`) and inspection; write the `scanauth_*` tables only
   * through the store.
   */
  readonly database: Database.Database
  private readonly ownsDatabase: boolean
  private readonly changePollMs: number
  // Prepared once the file is current: in the constructor, or by migrate() after `migrate: false`.
  private statements!: Statements
  private changeLog!: SceneChangeLog
  private ready = false
  private readonly runCommit: (changes: ChangeSet) => CommitResult
  private readonly runPurgeBatch: (cutoff: number, limit: number, cursor: PurgeCursor) => PurgeBatchOutcome
  private closed = false

  /**
   * Opens (or adopts) the database, sets its pragmas and brings its schema up to date (with
   * `migrate: false`, leaves the schema as it finds it: see {@link SqliteStore.schemaState}).
   *
   * @throws {@link SqliteStoreError} `invalid_options` when the options are invalid, `open_failed`
   *   when `filename` cannot be opened as a database (the message names the path and the reason),
   *   `schema_too_new` when the file comes from a newer release,
   *   `migration_failed` when a migration step fails. A database the store opened itself is
   *   closed again before the error is thrown.
   */
  constructor(options: SqliteStoreOptions) {
    const config = resolveStoreOptions(options)
    this.ownsDatabase = config.database === undefined
    this.changePollMs = config.changePollMs
    this.database = config.database ?? openDatabaseFile(config.filename as string, config.busyTimeoutMs)
    try {
      configure(this.database, config)
      if (config.migrate) migrateSchema(this.database)
      if (config.migrate || readVersion(this.database) === SCHEMA_VERSION) this.prepare()
    } catch (error) {
      if (this.ownsDatabase) this.database.close()
      throw error
    }
    this.runCommit = this.database.transaction((changes: ChangeSet) => applyChanges(this.statements, this.changeLog, changes)).immediate
    this.runPurgeBatch = this.database.transaction((cutoff: number, limit: number, cursor: PurgeCursor) =>
      this.purgeBatch(cutoff, limit, cursor),
    ).immediate
  }

  /**
   * Reads what the query asks for, one indexed select per part: a pending poll (`{ sceneStr }`) is
   * a single select, and so is a confirm link's scene (`{ confirmTicketHash }`, B-confirm-2,
   * B-confirm-4). A user and its authorizations come from one select, so they are always a
   * consistent pair; it reads the active ones and the head of the queue, whatever the queue's
   * length (every pending one only with `wholeQueue`).
   */
  async load(query: LoadQuery): Promise<LoadResult> {
    this.assertOpen()
    const s = this.statements
    // By confirm ticket or by sceneStr; the ticket first when both are given, as in MemoryStore.
    const { confirmTicketHash: ticket, sceneStr } = query
    const scene = ticket !== undefined ? s.sceneByConfirmTicket.get(ticket) : sceneStr === undefined ? undefined : s.sceneByStr.get(sceneStr)
    const session = query.sessionToken === undefined ? undefined : s.sessionByToken.get(query.sessionToken)
    const latest = query.latestSessionOfScene === undefined ? undefined : s.latestSessionOfScene.get(query.latestSessionOfScene)
    const idempotency = query.idempotencyKey === undefined ? undefined : s.idempotencyByKey.get(query.idempotencyKey)
    const authorization = query.authorizationId === undefined ? undefined : s.authorizationById.get(query.authorizationId)
    return {
      scene: scene === undefined ? null : toScene(scene),
      user: this.loadUser(query, session),
      session: session === undefined ? null : toSession(session),
      latestSession: latest === undefined ? null : toSession(latest),
      idempotency: idempotency === undefined ? null : toIdempotency(idempotency),
      authorization: authorization === undefined ? null : toAuthorization(authorization),
    }
  }

  /**
   * Applies the change set in one `BEGIN IMMEDIATE` transaction, or reports the first failed
   * expectation (scene, then user, then idempotency key, as MemoryStore does) with nothing
   * written. SQLite errors (`SQLITE_BUSY` after the busy timeout, a full disk) are thrown, and
   * roll everything back. A commit that writes a scene also appends it to the change log, in the
   * same transaction, and then tells this store's scene listeners.
   */
  async commit(changes: ChangeSet): Promise<CommitResult> {
    this.assertOpen()
    const result = this.runCommit(changes)
    if (result.ok && changes.scene !== undefined) this.changeLog.announce(changes.scene.scene.sceneStr)
    return result
  }

  /**
   * Tells `listener` the `scene_str` of every scene a commit writes from now on, through this
   * store at once, through any other connection to the file (another process) within
   * `changePollMs`; returns the function that stops it. While the store has listeners, one
   * unref'd timer per store asks `PRAGMA data_version` every `changePollMs` and reads the change
   * log only when another connection committed (docs/sqlite.md, "Waiting for a scan"); the last
   * listener leaving, or {@link SqliteStore.close}, stops it.
   *
   * @throws {@link SqliteStoreError} `closed` after `close()`.
   */
  watchScenes(listener: SceneChangeListener): () => void {
    this.assertOpen()
    return this.changeLog.watch(listener)
  }

  /**
   * Whether the store is watching the file for other connections' commits: true only while
   * {@link SqliteStore.watchScenes} has listeners (never for an in-memory database, which no
   * other connection can write).
   */
  get watching(): boolean {
    return this.ready && this.changeLog.watching
  }

  /** A page of the user's ledger: one select on scanauth_ledger_by_user (keyset on the id). */
  async listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]> {
    this.assertOpen()
    return this.statements.ledgerPage.all(query.userId, query.afterId, query.limit).map(toLedgerEntry)
  }

  /**
   * Ends the selected sessions still live at `at` with one UPDATE (by token, or through
   * scanauth_sessions_by_user), atomic on its own; returns how many rows it changed.
   */
  async endSessions(selector: SessionSelector, at: number): Promise<number> {
    this.assertOpen()
    const s = this.statements
    const run = 'token' in selector ? s.endSessionByToken.run({ at, token: selector.token }) : s.endSessionsOfUser.run({ at, userId: selector.userId })
    return run.changes
  }

  /**
   * Adds one to the counter `key` and returns its new value: one upsert statement (`RETURNING
   * count`), atomic on its own against every other connection and process. A counter that does not
   * exist, or whose `expiresAt <= now`, starts again at 1 with this `expiresAt`; a live one keeps
   * its expiry. Expired counters stay in the file until {@link SqliteStore.purgeExpired}.
   */
  async incrementCounter(key: string, expiresAt: number, now: number): Promise<number> {
    this.assertOpen()
    return this.statements.incrementCounter.get({ key, expiresAt, now }) as number
  }

  /** Deletes the counter `key` (one DELETE by primary key); nothing happens when there is none. */
  async deleteCounter(key: string): Promise<void> {
    this.assertOpen()
    this.statements.deleteCounter.run(key)
  }

  /** The order with this `outTradeNo`, or null: one select by primary key of scanauth_orders. */
  async loadOrder(outTradeNo: string): Promise<OrderRecord | null> {
    this.assertOpen()
    return loadOrder(this.statements, outTradeNo)
  }

  /**
   * Inserts an order whose `outTradeNo` is free, or replaces one still at `expectedVersion`: one
   * statement, atomic against every connection and process. True when written, false when the
   * expectation failed (nothing written).
   */
  async saveOrder(write: OrderWrite): Promise<boolean> {
    this.assertOpen()
    return saveOrder(this.statements, write)
  }

  /** The `open` orders that match, oldest first, at most `limit`: one select on an index in that order. */
  async listOpenOrders(query: OpenOrderQuery): Promise<OrderRecord[]> {
    this.assertOpen()
    return listOpenOrders(this.statements, query)
  }

  /** The user's sessions live at `now`, newest first: one select on the user's range of scanauth_sessions_by_user. */
  async listLiveSessions(query: LiveSessionQuery): Promise<SessionRecord[]> {
    this.assertOpen()
    return listLiveSessions(this.statements, query)
  }

  /** Users after `afterId`, by id: one range of the primary key. */
  async listUsers(query: UserListQuery): Promise<UserRecord[]> {
    this.assertOpen()
    return listUsers(this.statements, query)
  }

  /** Orders of any status that match, oldest first: one select on an index in that order (`operator-reads.ts`). */
  async listOrders(query: OrderListQuery): Promise<OrderRecord[]> {
    this.assertOpen()
    return listOrders(this.statements, query)
  }

  /**
   * The active authorizations a reminder pass asks for (see `Store.listActiveAuthorizations`): one
   * select on the partial index of the query's type (migration 11, `active-reads.ts`), so a page
   * reads the authorizations near their end (time) or low on points, never the others.
   */
  async listActiveAuthorizations(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    this.assertOpen()
    return listActiveAuthorizations(this.statements, query)
  }

  /**
   * The file's schema version (the highest migration applied, 0 without our tables), this release's
   * ({@link SCHEMA_VERSION}) and the migrations {@link SqliteStore.migrate} would apply: two reads,
   * no lock, nothing written. Works on a store opened with `migrate: false` whatever the file's
   * version.
   */
  async schemaState(): Promise<SchemaState> {
    this.assertNotClosed()
    return readSchemaState(this.database)
  }

  /**
   * Brings the file's schema up to {@link SCHEMA_VERSION} in one `BEGIN IMMEDIATE` transaction (safe
   * beside other processes opening or migrating the file) and answers the version before and
   * after; a current file costs one read. Makes a store opened with `migrate: false` usable.
   *
   * @throws {@link SqliteStoreError} `schema_too_new` for a file from a newer release,
   *   `migration_failed` when a step fails (the file is left as it was).
   */
  async migrate(): Promise<MigrationResult> {
    this.assertNotClosed()
    const outcome = migrateSchema(this.database)
    if (!this.ready) this.prepare()
    return outcome
  }

  /**
   * Deletes what is no longer needed at `now` (pass your service's clock), by core's one retention
   * rule (docs/behaviour.md, D-retention): a scene once it and its latest session have expired (the
   * device's poll still needs an authorized scene while its session lives), sessions and counters
   * once expired, and a closed order that never took money once past its payment deadline
   * (B-order-purge), each kept `retentionMs` longer. Users, authorizations, ledger entries,
   * idempotency keys and open, paid and refunded orders are never deleted. Runs in batches of
   * short `BEGIN IMMEDIATE` transactions (`batchSize` rows of each table) and yields to the event
   * loop between them.
   * Throws a `SqliteStoreError` `invalid_options` naming a bad option.
   */
  async purgeExpired(options: PurgeOptions): Promise<PurgeResult> {
    this.assertOpen()
    const resolved = resolvePurgeOptions(options, (option, message) => new SqliteStoreError('invalid_options', `SqliteStore.purgeExpired: ${option}: ${message}`))
    const cursor: PurgeCursor = startOfScenes(0)
    return purgeInBatches(resolved, (cutoff, limit) => this.runPurgeBatch(cutoff, limit, cursor), () => this.assertOpen())
  }

  /**
   * Stops watching for changes (listeners are told nothing more), and closes the database if the
   * store opened it; a database passed in stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.ready) this.changeLog.close()
    if (this.ownsDatabase && this.database.open) this.database.close()
  }

  /**
   * The user part of a load: active ones and the head of the queue, or the whole queue. With
   * `userOfSession`, the user of the session row the same synchronous call just read (B-load-2):
   * two selects in process, no round trip; not atomic, like every load (a commit checks versions).
   */
  private loadUser(query: LoadQuery, session: SessionRow | undefined): UserAggregate | null {
    const s = this.statements
    const { openid } = query
    // Column 2 of a session row is its user_id (SESSION_COLUMNS).
    const userId = query.userId ?? (query.userOfSession === true && openid === undefined ? session?.[2] : undefined)
    if (userId !== undefined) return toUserAggregate(query.wholeQueue === true ? s.userWithQueueById.all(userId) : s.userById.all(userId, userId))
    if (openid !== undefined) return toUserAggregate(query.wholeQueue === true ? s.userWithQueueByOpenid.all(openid) : s.userByOpenid.all(openid, openid))
    return null
  }

  /** One purge transaction: up to `limit` expired scenes examined, up to `limit` expired sessions, as many counters and as many closed orders deleted. */
  private purgeBatch(cutoff: number, limit: number, cursor: PurgeCursor): PurgeBatchOutcome {
    const s = this.statements
    let scenes = 0
    if (!cursor.done) {
      const candidates = s.purgeSceneCandidates.all({ cutoff, afterExpiresAt: cursor.expiresAt, afterId: cursor.id, limit })
      for (const c of purgeableScenes(candidates, cutoff, limit, cursor)) scenes += s.deleteScene.run(c.id).changes
    }
    const sessions = s.purgeSessions.run({ cutoff, limit }).changes
    const counters = s.purgeCounters.run({ cutoff, limit }).changes
    const orders = s.purgeOrders.run({ cutoff, limit }).changes
    return { scenes, sessions, counters, orders, done: cursor.done && sessions < limit && counters < limit && orders < limit }
  }

  /** Prepares the statements and the change log on a current file. */
  private prepare(): void {
    this.statements = prepareStatements(this.database)
    this.changeLog = new SceneChangeLog(this.database, this.changePollMs)
    this.ready = true
  }

  private assertNotClosed(): void {
    if (this.closed) throw new SqliteStoreError('closed', 'the store is closed')
  }

  /** The store is open and its file current (always, unless it was opened with `migrate: false`). */
  private assertOpen(): void {
    this.assertNotClosed()
    if (!this.ready) {
      throw new SqliteStoreError('not_migrated', `${this.database.name} is not at schema version ${SCHEMA_VERSION} and the store was opened with migrate: false: call \`await store.migrate()\` first`)
    }
  }
}

/** Where the scene pass of a purge has got to (the last scene examined). */
type PurgeCursor = PurgeSceneCursor<number>
