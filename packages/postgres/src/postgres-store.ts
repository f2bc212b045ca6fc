/**
 * `PostgresStore`: the Store contract on PostgreSQL through node-postgres (`pg`).
 *
 * Round trips: a load is one statement (`load-statement.ts`); a commit is one call of the
 * `scanauth_commit` function, one statement and so one transaction, with every expectation checked
 * inside it before any write (`commit-function.ts`), followed, when it wrote a scene, by a
 * `pg_notify` the commit does not wait for (`scene-notifier.ts`); `listLedger`, `endSessions`,
 * `incrementCounter`, `deleteCounter` and the three order methods (`orders.ts`) are one statement
 * each; a purge batch is two (`purge.ts`). Every statement is a named prepared statement, parsed once per pooled connection.
 *
 * @module
 */
import type { Pool } from 'pg'
import { type LedgerEntryRecord, type OrderRecord, type PurgeOptions, type PurgeResult, type Store } from '@scanauth/core'
import { purgeInBatches, resolvePurgeOptions, startOfScenes, type ChangeSet, type CommitResult, type LedgerQuery, type LoadQuery, type LoadResult, type OpenOrderQuery, type OrderWrite, type SceneChangeListener, type SessionSelector } from '@scanauth/core/store'
import type { ActiveAuthorizationQuery, AuthorizationRecord, LiveSessionQuery, OrderListQuery, SchemaState, SessionRecord, UserListQuery, UserRecord } from '@scanauth/core/store'
import { ActiveStatements } from './active-reads'
import { INVALID_CHANGE_SET_SQLSTATE } from './commit-function'
import { PostgresStoreError } from './errors'
import { LoadStatements } from './load-statement'
import { resolveStoreOptions, type PostgresStoreOptions } from './options'
import { OperatorStatements, readSchemaState } from './operator-reads'
import { OrderStatements } from './orders'
import { LEDGER_COLUMNS, NUMBERS, toAuthorization, toIdempotency, toLedgerEntry, toScene, toSession, toUserAggregate, type LedgerRow } from './rows'
import { PurgeStatements } from './purge'
import { SceneListener } from './scene-listener'
import { sceneChannel, SceneNotifier } from './scene-notifier'
import { migrate, quoteIdentifier, type MigrationOutcome } from './schema'

/** Which conflict a unique violation of one of our constraints means (a concurrent commit inserted the same key). */
const CONFLICT_BY_CONSTRAINT: Record<string, 'scene' | 'user' | 'idempotency'> = {
  scanauth_scenes_scene_str_key: 'scene',
  scanauth_users_openid_key: 'user',
  scanauth_idempotency_pkey: 'idempotency',
}

/**
 * A store on PostgreSQL, safe for any number of processes on the same database: each commit is one
 * transaction with the version checks inside it. The application owns the `pg.Pool`; call
 * {@link PostgresStore.migrate} once at start-up before anything else.
 *
 * {@link PostgresStore.watchScenes} hears every scene write on the database through
 * `LISTEN <schema>_scanauth_scenes` on one client checked out of the pool while there are
 * listeners (none otherwise).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createScanAuth, type QrProvider } from '@scanauth/core'
 * import { PostgresStore } from '@scanauth/postgres'
 *
 * declare const qr: QrProvider
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const store = new PostgresStore({ pool })
 * await store.migrate()
 * const auth = createScanAuth({ store, qr })
 * // ... on shutdown: the store first, then your pool
 * await store.close()
 * await pool.end()
 * ```
 */
export class PostgresStore implements Store {
  /** The application's pool, as given. */
  readonly pool: Pool
  /** The PostgreSQL schema of the store's tables. */
  readonly schema: string
  private readonly s: string
  private readonly tag: string
  private readonly loads: LoadStatements
  private readonly listener: SceneListener
  private readonly notifier: SceneNotifier
  private readonly purges: PurgeStatements
  private readonly orders: OrderStatements
  private readonly operatorReads: OperatorStatements
  private readonly activeReads: ActiveStatements
  private migrated = false

  /**
   * Checks the options; runs no statement (call {@link PostgresStore.migrate} next).
   *
   * @throws {@link PostgresStoreError} `invalid_options` naming the bad option.
   */
  constructor(options: PostgresStoreOptions) {
    const config = resolveStoreOptions(options)
    this.pool = config.pool
    this.schema = config.schema
    this.s = quoteIdentifier(config.schema)
    this.tag = schemaTag(config.schema)
    this.loads = new LoadStatements(this.s, this.tag)
    this.listener = new SceneListener(this.pool, sceneChannel(config.schema))
    this.notifier = new SceneNotifier(this.pool, sceneChannel(config.schema), `scanauth_${this.tag}_notify`)
    this.purges = new PurgeStatements(this.s, this.tag)
    this.orders = new OrderStatements(this.s, this.tag)
    this.operatorReads = new OperatorStatements(this.s, this.tag)
    this.activeReads = new ActiveStatements(this.s, this.tag)
  }

  /**
   * Creates the store's tables or brings them up to date, in one transaction under an advisory
   * lock: safe when several processes start at once. Cheap when the schema is current (a few
   * statements). Must be awaited before any other method.
   *
   * @throws {@link PostgresStoreError} `schema_too_new` when the schema comes from a newer release,
   *   `migration_failed` when a step fails (everything is rolled back).
   */
  async migrate(): Promise<MigrationOutcome> {
    const outcome = await migrate(this.pool, this.schema)
    this.migrated = true
    return outcome
  }

  /** Reads what the query asks for in one statement (one round trip); a pending poll is one index lookup. */
  async load(query: LoadQuery): Promise<LoadResult> {
    this.assertMigrated()
    const subscribing = this.listener.pending()
    if (subscribing !== null) await subscribing
    const result: LoadResult = { scene: null, user: null, session: null, latestSession: null, idempotency: null, authorization: null }
    const statement = this.loads.statementFor(query)
    if (statement === null) return result
    const { rows } = await this.pool.query<unknown[]>({ name: statement.name, text: statement.text, values: statement.values, rowMode: 'array' })
    const row = rows[0] as never[]
    statement.parts.forEach((part, i) => {
      const value = row[i]
      if (value === null || value === undefined) return
      if (part === 'scene') result.scene = toScene(value)
      else if (part === 'user') result.user = toUserAggregate(value)
      else if (part === 'session') result.session = toSession(value)
      else if (part === 'latestSession') result.latestSession = toSession(value)
      else if (part === 'idempotency') result.idempotency = toIdempotency(value)
      else result.authorization = toAuthorization(value)
    })
    return result
  }

  /**
   * Applies the change set in one call of `scanauth_commit` (one statement, one transaction), or
   * reports the first failed expectation (scene, then user, then idempotency key) with nothing
   * written. A unique violation from a concurrent insert of the same scene, openid or key is that
   * conflict too. Other PostgreSQL errors are thrown, with nothing applied.
   *
   * @throws {@link PostgresStoreError} `invalid_change_set` when the change set breaks the Store contract.
   */
  async commit(changes: ChangeSet): Promise<CommitResult> {
    this.assertMigrated()
    const subscribing = this.listener.pending()
    if (subscribing !== null) await subscribing
    try {
      const { rows } = await this.pool.query<[CommitResult]>({
        name: `scanauth_${this.tag}_commit`,
        text: `SELECT ${this.s}.scanauth_commit($1::jsonb)`,
        values: [JSON.stringify(changes)],
        rowMode: 'array',
      })
      const result = (rows[0] as [CommitResult])[0]
      // Committed: now tell the listening processes, in a statement of its own (scene-notifier.ts).
      if (result.ok && changes.scene !== undefined) this.notifier.notify(changes.scene.scene.sceneStr)
      return result
    } catch (error) {
      const e = error as { code?: string; constraint?: string; message?: string }
      const conflict = e.code === '23505' && e.constraint !== undefined ? CONFLICT_BY_CONSTRAINT[e.constraint] : undefined
      if (conflict !== undefined) return { ok: false, conflict }
      if (e.code === INVALID_CHANGE_SET_SQLSTATE) throw new PostgresStoreError('invalid_change_set', e.message ?? 'invalid change set', { cause: error })
      throw error
    }
  }

  /**
   * Tells `listener` the `scene_str` of every scene a commit writes, through any process on the
   * database, by `LISTEN`; returns the function that stops it. The subscription goes live before
   * the store's next load or commit returns (docs/postgres.md, "Waiting for a scan").
   */
  watchScenes(listener: SceneChangeListener): () => void {
    this.assertMigrated()
    const stop = this.listener.watch(listener)
    return stop
  }

  /** Whether the store holds a client of the pool for `LISTEN` (only while there are scene listeners). */
  get listening(): boolean {
    return this.listener.listening
  }

  /** A page of the user's ledger: one select on scanauth_ledger_by_user (keyset on the id). */
  async listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]> {
    this.assertMigrated()
    const { rows } = await this.pool.query<LedgerRow>({
      name: `scanauth_${this.tag}_ledger`,
      text: `SELECT ${LEDGER_COLUMNS} FROM ${this.s}.scanauth_ledger WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      values: [query.userId, query.afterId, query.limit],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map(toLedgerEntry)
  }

  /** Ends the selected sessions still live at `at` with one UPDATE; returns how many rows it changed. */
  async endSessions(selector: SessionSelector, at: number): Promise<number> {
    this.assertMigrated()
    const byToken = 'token' in selector
    const result = await this.pool.query({
      name: `scanauth_${this.tag}_end_sessions_${byToken ? 'token' : 'user'}`,
      text: `UPDATE ${this.s}.scanauth_sessions SET expires_at = $1 WHERE ${byToken ? 'token' : 'user_id'} = $2 AND expires_at > $1`,
      values: [at, byToken ? selector.token : selector.userId],
    })
    return result.rowCount ?? 0
  }

  /**
   * Adds one to the counter `key` and returns its new value: one `INSERT … ON CONFLICT … DO UPDATE
   * … RETURNING`, atomic on its own. A counter that does not exist, or whose `expiresAt <= now`,
   * starts again at 1 with this `expiresAt`; a live one keeps its expiry.
   */
  async incrementCounter(key: string, expiresAt: number, now: number): Promise<number> {
    this.assertMigrated()
    const t = `${this.s}.scanauth_counters`
    // In DO UPDATE, the table's columns are the row as it was: both CASEs decide from the old expiry.
    const { rows } = await this.pool.query<[number]>({
      name: `scanauth_${this.tag}_increment`,
      text: `INSERT INTO ${t} AS c (key, count, expires_at) VALUES ($1, 1, $2)
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN c.expires_at <= $3 THEN 1 ELSE c.count + 1 END,
          expires_at = CASE WHEN c.expires_at <= $3 THEN excluded.expires_at ELSE c.expires_at END
        RETURNING count`,
      values: [key, expiresAt, now],
      rowMode: 'array',
      types: NUMBERS,
    })
    return (rows[0] as [number])[0]
  }

  /** Deletes the counter `key` (one DELETE by primary key); nothing happens when there is none. */
  async deleteCounter(key: string): Promise<void> {
    this.assertMigrated()
    await this.pool.query({ name: `scanauth_${this.tag}_delete_counter`, text: `DELETE FROM ${this.s}.scanauth_counters WHERE key = $1`, values: [key] })
  }

  /** The order with this `outTradeNo`, or null: one select by primary key of scanauth_orders. */
  async loadOrder(outTradeNo: string): Promise<OrderRecord | null> {
    this.assertMigrated()
    return this.orders.load(this.pool, outTradeNo)
  }

  /**
   * Inserts an order whose `outTradeNo` is free (`INSERT … ON CONFLICT DO NOTHING`), or replaces
   * one still at `expectedVersion` (`UPDATE … WHERE version = …`): one statement, atomic against
   * every process. True when written, false when the expectation failed (nothing written).
   */
  async saveOrder(write: OrderWrite): Promise<boolean> {
    this.assertMigrated()
    return this.orders.save(this.pool, write)
  }

  /** The `open` orders that match, oldest first, at most `limit`: one select on an index in that order. */
  async listOpenOrders(query: OpenOrderQuery): Promise<OrderRecord[]> {
    this.assertMigrated()
    return this.orders.listOpen(this.pool, query)
  }

  /** The user's sessions live at `now`, newest first: one select on the user's range of scanauth_sessions_by_user. */
  async listLiveSessions(query: LiveSessionQuery): Promise<SessionRecord[]> {
    this.assertMigrated()
    return this.operatorReads.liveSessions(this.pool, query)
  }

  /** Users after `afterId`, by id: one range of the primary key. */
  async listUsers(query: UserListQuery): Promise<UserRecord[]> {
    this.assertMigrated()
    return this.operatorReads.users(this.pool, query)
  }

  /** Orders of any status that match, oldest first: one select on an index in that order (`operator-reads.ts`). */
  async listOrders(query: OrderListQuery): Promise<OrderRecord[]> {
    this.assertMigrated()
    return this.operatorReads.orders(this.pool, query)
  }

  /**
   * The active authorizations a reminder pass asks for (see `Store.listActiveAuthorizations`): one
   * select on the partial index of the query's type (migration 7, `active-reads.ts`), so a page
   * reads the authorizations near their end (time) or low on points, never the others.
   */
  async listActiveAuthorizations(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    this.assertMigrated()
    return this.activeReads.list(this.pool, query)
  }

  /**
   * Where the store's schema stands: whether it exists, its version (0 without our tables), this
   * release's (`SCHEMA_VERSION`) and the migrations {@link PostgresStore.migrate} would apply.
   * Two statements at most, no lock, nothing written; needs no `migrate()` first.
   */
  async schemaState(): Promise<SchemaState> {
    return readSchemaState(this.pool, this.schema)
  }

  /**
   * Deletes what is no longer needed at `now` (pass your service's clock), by core's one retention
   * rule (docs/behaviour.md, D-retention): a scene once it and its latest session have expired,
   * sessions and counters once expired, a closed order that never took money once past its
   * payment deadline (B-order-purge), each kept `retentionMs` longer. Users, authorizations, ledger
   * entries, idempotency keys and open, paid and refunded orders are never deleted. Each batch is
   * two statements (the scene candidates, then one DELETE of up to `batchSize` rows per table;
   * `purge.ts` says why that is safe against concurrent commits and order writes), with a turn of
   * the event loop between batches.
   *
   * @throws {@link PostgresStoreError} `invalid_options` naming a bad option.
   */
  async purgeExpired(options: PurgeOptions): Promise<PurgeResult> {
    this.assertMigrated()
    const resolved = resolvePurgeOptions(options, (option, message) => new PostgresStoreError('invalid_options', `PostgresStore.purgeExpired: ${option}: ${message}`))
    const cursor = startOfScenes('0')
    return purgeInBatches(resolved, (cutoff, limit) => this.purges.batch(this.pool, cutoff, limit, cursor))
  }

  /**
   * Stops watching: unlistens and gives the listening client back to the pool, and waits for the
   * scene notifications still on their way. Never ends the pool, which belongs to the
   * application. Idempotent.
   */
  async close(): Promise<void> {
    await this.listener.close()
    // Notifications still on their way hold pool clients: let them finish before the app ends the pool.
    await this.notifier.settled()
  }

  private assertMigrated(): void {
    if (!this.migrated) {
      throw new PostgresStoreError('not_migrated', `call \`await store.migrate()\` once before using the store (schema ${this.schema})`)
    }
  }
}

/**
 * A short tag of a schema name for prepared statement names, which are per connection and so
 * shared by every store on one pool: distinct schemas must never reuse a name for other SQL.
 */
function schemaTag(schema: string): string {
  // FNV-1a, 32 bits: names stay short (PostgreSQL truncates identifiers at 63 bytes).
  let hash = 0x811c9dc5
  for (let i = 0; i < schema.length; i++) hash = Math.imul(hash ^ schema.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(36)
}
