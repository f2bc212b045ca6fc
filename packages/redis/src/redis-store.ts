/**
 * `RedisStore`: the Store contract on Redis through ioredis (standalone, Sentinel or Cluster).
 *
 * - A load is one round trip: a GET (MGET) for scenes, sessions and idempotency records alone, an
 *   HGET for one authorization, else one read-only Lua script. A user's load costs the same
 *   whatever the length of its queue (its active authorizations and the head of the queue).
 * - A commit is one Lua script that checks the change set's expectations and applies its writes
 *   atomically on the server, so commits from any number of processes serialize per key.
 * - `listLedger` is one ZRANGEBYSCORE; `endSessions` one script run; `incrementCounter` one script
 *   run (`scripts/counter.ts`), `deleteCounter` one DEL.
 * - Scenes and sessions expire by relative TTLs derived from their own times (`expiry.ts`); users,
 *   authorizations, ledger entries and idempotency records never expire.
 * - Orders (`loadOrder`, `saveOrder`, `listOpenOrders`) are their own aggregate, one round trip
 *   each (`orders.ts`): an order is a hash that never expires, kept with three open-order indexes
 *   and a closed-order index by one script. `purgeExpired` deletes closed orders that never took
 *   money past their payment deadline, one script run per batch.
 * - The operator reads (`listLiveSessions`, `listUsers`, `listOrders`, `schemaState`) are one round
 *   trip each, on an index (`operator-reads.ts`): none scans the keyspace.
 * - `listActiveAuthorizations` (reminders) is one round trip on one of two indexes of the active
 *   authorizations that the commit script keeps (`active-index.ts`).
 * - `watchScenes` listens to what the commit script publishes, on one subscriber connection held
 *   only while someone listens (`scene-subscription.ts`).
 *
 * The key layout, TTLs and Cluster notes are in `docs/redis.md`.
 *
 * @module
 */
import { type LedgerEntryRecord, type OrderRecord, type PurgeOptions, type PurgeResult, type Store } from '@scanauth/core'
import { purgeInBatches, resolvePurgeOptions, type ChangeSet, type CommitResult, type LedgerQuery, type LoadQuery, type LoadResult, type OpenOrderQuery, type OrderWrite, type SceneChangeListener, type SessionSelector } from '@scanauth/core/store'
import type { ActiveAuthorizationQuery, AuthorizationRecord, LiveSessionQuery, OrderListQuery, SchemaState, SessionRecord, UserListQuery, UserRecord } from '@scanauth/core/store'
import { RedisActiveIndex } from './active-index'
import { decodeLedgerEntry } from './codec-entitlements'
import { commitArgs, parseCommitReply } from './commit-args'
import { nextCommitId } from './commit-id'
import { num } from './codec'
import { counterTtl, MIN_TTL_MS, relativeTtl } from './expiry'
import { Keys } from './keys'
import { describeReply, RedisStoreError } from './errors'
import { decodeAuthorizationReply, decodeLoadReply, decodeStrings, EMPTY_LOAD, loadArgs, planLoad } from './load'
import { resolveOptions, type RedisStoreOptions } from './options'
import { SceneSubscription } from './scene-subscription'
import { COMMIT_SCRIPT } from './scripts/commit'
import { COUNTER_SCRIPT } from './scripts/counter'
import { END_SESSIONS_SCRIPT } from './scripts/end-sessions'
import { LOAD_SCRIPT } from './scripts/load'
import { LuaScript, type ScriptClient } from './scripts/lua-script'
import { RedisOperatorReads, type OperatorReadsClient } from './operator-reads'
import { RedisOrders, type OrdersClient } from './orders'

/** The scripts, hashed once per process and shared by every store. */
const commitScript = new LuaScript(COMMIT_SCRIPT)
const loadScript = new LuaScript(LOAD_SCRIPT)
const endSessionsScript = new LuaScript(END_SESSIONS_SCRIPT)
const counterScript = new LuaScript(COUNTER_SCRIPT)

/** The commands the store sends besides the scripts (both ioredis `Redis` and `Cluster` have them). */
type StoreClient = ScriptClient & OrdersClient & OperatorReadsClient & {
  get(key: string): Promise<string | null>
  mget(...keys: string[]): Promise<Array<string | null>>
  hget(key: string, field: string): Promise<string | null>
  del(key: string): Promise<number>
  zrangebyscore(key: string, min: string, max: string, limit: 'LIMIT', offset: number, count: number): Promise<string[]>
}

/**
 * A scanauth store on Redis. The client belongs to the application: the store never connects,
 * quits or reconfigures it, and {@link RedisStore.close} leaves it open.
 *
 * For change notification ({@link RedisStore.watchScenes}, which `waitForStatus`, the long poll and
 * the event stream use) the store opens a second connection for notifications while someone
 * waits, and closes it when nobody does, and in `close()`: a duplicate of the client
 * (`client.duplicate()`, so with its options), subscribed to one channel. Count it in the
 * server's `maxclients`, per process. While that connection is being set up (a round trip, when
 * a wait finds none open), the store's loads and commits wait for its SUBSCRIBE to be confirmed,
 * so that nothing committed after a wait's first read can go unheard.
 *
 * Requires Redis 7.0 or later (the scripts use `#!lua` flags).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * import { createScanAuth } from '@scanauth/core'
 * import { RedisStore } from '@scanauth/redis'
 *
 * const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
 * const auth = createScanAuth({ store: new RedisStore({ client: redis }), qr })
 * ```
 */
export class RedisStore implements Store {
  /** The key layout under this store's prefix. */
  readonly keys: Keys
  private readonly client: StoreClient
  private readonly graceMs: number
  private readonly receiptTtlMs: number
  private readonly subscription: SceneSubscription
  private readonly orders: RedisOrders
  private readonly operatorReads: RedisOperatorReads
  private readonly activeIndex: RedisActiveIndex

  /**
   * Checks the options; connects nothing (the client is the application's).
   *
   * @throws {@link RedisStoreError} `invalid_options` naming the option that is wrong.
   */
  constructor(options: RedisStoreOptions) {
    const resolved = resolveOptions(options)
    this.client = resolved.client as unknown as StoreClient
    this.keys = new Keys(resolved.keyPrefix)
    this.graceMs = resolved.expiryGraceSeconds * 1000
    this.receiptTtlMs = resolved.commitReceiptSeconds * 1000
    this.subscription = new SceneSubscription(resolved.client, this.keys.sceneChannel)
    this.orders = new RedisOrders(this.client, this.keys, this.receiptTtlMs)
    this.operatorReads = new RedisOperatorReads(this.client, this.keys)
    this.activeIndex = new RedisActiveIndex(this.client, this.keys)
  }

  /** The prefix of every key this store writes. */
  get keyPrefix(): string {
    return this.keys.prefix
  }

  /**
   * Reads what `query` asks for in one round trip. Absent parts are `null`. A user comes with its
   * active authorizations and the head of its queue (the whole queue with `wholeQueue`), ordered by
   * `createdAt`, then id.
   *
   * @throws {@link RedisStoreError} `invalid_query` for `userId` with `openid`; `malformed_record` when a
   *   key holds a value this store did not write.
   */
  load(query: LoadQuery): Promise<LoadResult> {
    // Only while the subscriber connection is being set up (a round trip, once per wait that
    // finds none): a wait's first read must come after SUBSCRIBE, or a scan committed in
    // between would be neither read nor heard. Otherwise nothing is added to a load.
    const settling = this.subscription.settling
    if (settling !== null) return settling.then(() => this.read(query))
    return this.read(query)
  }

  /** The load itself, in one round trip. */
  private read(query: LoadQuery): Promise<LoadResult> {
    const plan = planLoad(query, this.keys)
    switch (plan.kind) {
      case 'strings': {
        const [only] = plan.keys
        // A device's poll: one GET of the packed scene.
        if (plan.keys.length === 1) return this.client.get(only as string).then((value) => decodeStrings(query, plan.parts, [value]))
        if (only === undefined) return Promise.resolve({ ...EMPTY_LOAD })
        return this.client.mget(...plan.keys).then((values) => decodeStrings(query, plan.parts, values))
      }
      case 'authorization':
        return this.client.hget(this.keys.authorizations, num(plan.id)).then((value) => decodeAuthorizationReply(plan.id, value))
      default:
        return this.loadByScript(query)
    }
  }

  private async loadByScript(query: LoadQuery): Promise<LoadResult> {
    return decodeLoadReply(query, await loadScript.run(this.client, [this.keys.seq], loadArgs(query, this.keys.prefix)))
  }

  /**
   * Checks the change set's expectations and applies all of its writes, or none, in one script
   * run. A failed expectation returns `{ ok: false, conflict }`; a connection error throws. When
   * ioredis re-sends a commit whose reply was lost, the commit's receipt makes the re-sent copy
   * answer the first outcome instead of applying again.
   *
   * @throws {@link RedisStoreError} `invalid_change_set` when the change set breaks the Store contract
   *   (nothing is sent).
   */
  async commit(changes: ChangeSet): Promise<CommitResult> {
    // As for loads: a commit made through this store after watchScenes is published to it.
    const settling = this.subscription.settling
    if (settling !== null) await settling
    const args = commitArgs(changes, {
      prefix: this.keys.prefix,
      receiptId: this.receiptTtlMs > 0 ? nextCommitId() : '',
      receiptTtlMs: this.receiptTtlMs,
      graceMs: this.graceMs,
    })
    return parseCommitReply(await commitScript.run(this.client, [this.keys.seq], args))
  }

  /**
   * A user's ledger entries after `afterId`, oldest first: one `ZRANGEBYSCORE` of the user's ledger
   * (scored by entry id), whatever its length.
   */
  async listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]> {
    if (query.limit <= 0) return []
    const members = await this.client.zrangebyscore(this.keys.ledger(query.userId), `(${num(query.afterId)}`, '+inf', 'LIMIT', 0, query.limit)
    return members.map((member) => decodeLedgerEntry(query.userId, member))
  }

  /**
   * Ends the selected sessions still live at `at`, in one script run: each gets `expiresAt = at`,
   * and its key (with the scene's latest-session pointer to it) keeps only the grace period.
   */
  async endSessions(selector: SessionSelector, at: number): Promise<number> {
    const [mode, target] = 'token' in selector ? ['t', selector.token] : ['u', num(selector.userId)]
    // The grace counted from `at`, like every TTL (expiry.ts): at least MIN_TTL_MS, never "none"
    // (only a NaN `at` could yield that).
    const ttl = relativeTtl(at, at, this.graceMs) || String(MIN_TTL_MS)
    const reply = await endSessionsScript.run(this.client, [this.keys.seq], [this.keys.prefix, mode, target, num(at), ttl])
    return Number(reply)
  }

  /**
   * Tells `listener` the `scene_str` of every scene a commit writes from now on, through any
   * RedisStore with the same prefix on the same server or Cluster, in any process; returns the
   * function that stops it. The commit script publishes each one (`PUBLISH <prefix>scenes`), so
   * the committing process needs no setting. The first listener makes the store open its
   * subscriber connection (`client.duplicate()`), the last one leaving closes it; one connection
   * however many listeners. "From now on" for commits through other connections means from the
   * moment SUBSCRIBE is confirmed, which this store's next load or commit waits for: register,
   * then read, as `waitForStatus` does. A message published while that connection is down is
   * lost: the waits end at their timeout with a fresh read (docs/redis.md, "Waiting for a scan").
   */
  watchScenes(listener: SceneChangeListener): () => void {
    return this.subscription.watch(listener)
  }

  /** Whether the store holds its subscriber connection: only while {@link RedisStore.watchScenes} has listeners. */
  get watching(): boolean {
    return this.subscription.connected
  }

  /**
   * The `purgeExpired` of every store. On Redis it deletes only orders: each scene, session and
   * counter key carries a TTL taken from core's retention rule (docs/behaviour.md, D-retention;
   * an authorized scene as long as its session) plus `expiryGraceSeconds`, and Redis frees it by
   * itself, so those counts are always 0 (set `expiryGraceSeconds` to keep them longer). Closed
   * orders that never took money are deleted once `retentionMs` past their payment deadline
   * (B-order-purge), from the closed-order index: one script run per batch of up to `batchSize`,
   * with a turn of the event loop between batches. Open, paid and refunded orders stay for good.
   * Code that purges on a timer works unchanged whichever store it is given.
   *
   * @throws {@link RedisStoreError} `invalid_options` naming a bad option.
   */
  async purgeExpired(options: PurgeOptions): Promise<PurgeResult> {
    const resolved = resolvePurgeOptions(options, (option, message) => new RedisStoreError('invalid_options', `RedisStore.purgeExpired: ${option}: ${message}`))
    return purgeInBatches(resolved, async (cutoff, limit) => {
      const { deleted, done } = await this.orders.purge(cutoff, limit)
      return { scenes: 0, sessions: 0, counters: 0, orders: deleted, done }
    })
  }

  /**
   * Closes the subscriber connection if the store holds one (its listeners are told nothing
   * more). The application's client stays open, and the store stays usable: a later
   * `watchScenes` opens a new subscriber connection.
   */
  async close(): Promise<void> {
    await this.subscription.close()
  }

  /**
   * Adds one to the counter `key` and returns its new value, in one script run (one round trip),
   * atomic against every other client. The counter lives at `<prefix>c:<key>` as `count|expiresAt`;
   * it starts again at 1 when it does not exist or its stored `expiresAt <= now` (the injected
   * clock's times, compared in the script). Its TTL, `expiresAt − now` when it starts, only lets
   * Redis free a dead counter.
   *
   * @throws {@link RedisStoreError} `malformed_record` when the key holds a value this store did not write.
   */
  async incrementCounter(key: string, expiresAt: number, now: number): Promise<number> {
    const counter = this.keys.counter(key)
    const reply = await counterScript.run(this.client, [counter], [num(expiresAt), num(now), counterTtl(expiresAt, now)])
    if (typeof reply === 'number') return reply
    if (reply === null) throw new RedisStoreError('malformed_record', `the counter ${JSON.stringify(counter)} holds a value this store did not write (not count|expiresAt)`)
    throw new RedisStoreError('unexpected_reply', `the counter script answered ${describeReply(reply)}`)
  }

  /**
   * The order with this outTradeNo, or null: one `HGETALL` of `<prefix>od:<outTradeNo>`.
   *
   * @throws {@link RedisStoreError} `malformed_record` when the key holds a hash this store did not write.
   */
  loadOrder(outTradeNo: string): Promise<OrderRecord | null> {
    return this.orders.load(outTradeNo)
  }

  /**
   * Inserts an order (its outTradeNo must be free) or replaces one (its stored version must be
   * `expectedVersion`), with its open-order index entries, in one script run, atomic against every
   * other client: true when written, false when the expectation failed (nothing written). The
   * order is stored as given and never expires. A write re-sent by ioredis after a lost reply
   * answers true from its receipt (`commitReceiptSeconds`), as a commit does.
   *
   * @throws {@link RedisStoreError} `invalid_order` when the order cannot be stored faithfully (a
   *   number that is not finite, a `createdAt` that is not a safe integer ≥ 0); nothing is sent.
   */
  saveOrder(write: OrderWrite): Promise<boolean> {
    return this.orders.save(write)
  }

  /**
   * The `open` orders that match every filter of `query`, oldest first (createdAt, then
   * outTradeNo), after the cursor, at most `limit`: one run of a read-only script on the scene's,
   * else the user's, else the all-orders open index.
   *
   * @throws {@link RedisStoreError} `malformed_record` when an order's hash is not one this store wrote.
   */
  listOpenOrders(query: OpenOrderQuery): Promise<OrderRecord[]> {
    return this.orders.list(query)
  }

  /**
   * The user's sessions live at `now`, newest first: one run of a read-only script over the user's
   * session index (`us:<userId>`, the live ones), sorted by id in the script.
   */
  listLiveSessions(query: LiveSessionQuery): Promise<SessionRecord[]> {
    return this.operatorReads.liveSessions(query)
  }

  /** Users after `afterId`, by id: one run of a read-only script, `limit` GETs of `u:<id>` after the cursor. */
  listUsers(query: UserListQuery): Promise<UserRecord[]> {
    return this.operatorReads.users(query)
  }

  /**
   * Orders of any status that match, oldest first: one run of a read-only script on the index of
   * the user's orders, else of the status, else of every order (`oau:<userId>`, `oas:<status>`,
   * `oa`), the cursor and the time range as lex bounds.
   *
   * @throws {@link RedisStoreError} `malformed_record` when an order's hash is not one this store wrote.
   */
  listOrders(query: OrderListQuery): Promise<OrderRecord[]> {
    return this.operatorReads.orders(query)
  }

  /**
   * The active authorizations a reminder pass asks for (see `Store.listActiveAuthorizations`): one
   * run of a read-only script on the index the commit script keeps of the query's type, `<p>ae`
   * (time ones by endAt) or `<p>ap` (points ones by remainingPoints), and the records of the page
   * (`active-index.ts`). On a prefix written before those indexes existed, the first call builds
   * them first, once (docs/redis.md, "Upgrading a prefix written before these indexes").
   *
   * @throws {@link RedisStoreError} `malformed_record` when a record is not one this store wrote.
   */
  listActiveAuthorizations(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    return this.activeIndex.list(query)
  }

  /**
   * The key layout the prefix holds (0 when nothing was written under it; 1 for data of 0.1.0) and
   * the one this store writes (`LAYOUT_VERSION`); nothing is ever pending: Redis data is not
   * migrated (`docs/redis.md`, "Upgrading from 0.1.0"). One round trip, nothing written.
   */
  schemaState(): Promise<SchemaState> {
    return this.operatorReads.schemaState()
  }

  /** Deletes the counter `key` (one DEL of `<prefix>c:<key>`); nothing happens when there is none. */
  async deleteCounter(key: string): Promise<void> {
    await this.client.del(this.keys.counter(key))
  }
}
