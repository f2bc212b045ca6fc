/**
 * `MemoryStore`: the Store contract over plain maps, for tests, demos and single-process apps that
 * can lose their data on restart. Commits are synchronous inside one event-loop turn, so they are
 * atomic with respect to each other.
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
import { ScanAuthError } from '../errors'
import { MemoryActiveAuthorizations } from './memory-active'
import { MemoryOrders } from './memory-orders'
import { purgeInBatches, resolvePurgeOptions, type PurgeOptions, type PurgeResult } from './purge'
import { fifoOrder } from '../rules/authorizations'
import { mayPurge, sceneNeededUntil } from '../rules/retention'
import { hasPassed } from '../rules/time'
import { SceneListenerSet } from './scene-listeners'
import type { LiveSessionQuery, OrderListQuery, SchemaState, UserListQuery } from './operator-reads'
import type { ActiveAuthorizationQuery } from './reminder-reads'
import type {
  AssignedIds,
  AuthorizationRef,
  ChangeSet,
  CommitResult,
  LedgerQuery,
  LoadQuery,
  LoadResult,
  OpenOrderQuery,
  OrderWrite,
  SceneChangeListener,
  SessionSelector,
  Store,
  UserRef,
} from './contract'

/** Every record a {@link MemoryStore} holds, for inspection in tests and debugging. */
export interface MemoryStoreSnapshot {
  /** Every scene. */
  scenes: SceneRecord[]
  /** Every user. */
  users: UserRecord[]
  /** Every authorization, whatever its status. */
  authorizations: AuthorizationRecord[]
  /** Every session. */
  sessions: SessionRecord[]
  /** Every ledger entry, by id. */
  ledger: LedgerEntryRecord[]
  /** Every idempotency record. */
  idempotency: IdempotencyRecord[]
  /** Every order, whatever its status (optional in a snapshot of another store: its harness may leave orders out). */
  orders?: OrderRecord[]
}

/** A user's authorizations the rules can act on, kept apart so a load never walks the retired ones. */
interface UserQueues {
  /** Ids of its `active` authorizations. */
  active: Set<number>
  /** Its `pending` authorizations in activation order (created_at, then id). */
  pending: AuthorizationRecord[]
}

/**
 * A store that keeps everything in process memory. Nothing expires by itself: call
 * {@link MemoryStore.purgeExpired} now and then in a long-running process.
 *
 * @example
 * ```ts
 * import { createScanAuth, MemoryStore, type QrProvider } from '@scanauth/core'
 *
 * declare const qr: QrProvider
 * const auth = createScanAuth({ store: new MemoryStore(), qr })
 * ```
 */
export class MemoryStore implements Store {
  private readonly scenes = new Map<string, SceneRecord>()
  /** The confirm ticket index (B-confirm-6): ticket digest → sceneStr. */
  private readonly sceneStrByTicketHash = new Map<string, string>()
  private readonly users = new Map<number, UserRecord>()
  private readonly userIdByOpenid = new Map<string, number>()
  private readonly authorizations = new Map<number, AuthorizationRecord>()
  private readonly queues = new Map<number, UserQueues>()
  /** The active ones by type, for the reminders' read. */
  private readonly activeByType = new MemoryActiveAuthorizations(this.authorizations)
  private readonly sessions = new Map<string, SessionRecord>()
  private readonly sessionsByUser = new Map<number, Set<string>>()
  private readonly latestSessionByScene = new Map<number, SessionRecord>()
  private readonly ledger: LedgerEntryRecord[] = []
  private readonly ledgerByUser = new Map<number, LedgerEntryRecord[]>()
  private readonly idempotency = new Map<string, IdempotencyRecord>()
  private readonly sceneListeners = new SceneListenerSet()
  private readonly counters = new Map<string, { count: number; expiresAt: number }>()
  private readonly orders = new MemoryOrders()
  private readonly lastId = { scene: 0, user: 0, authorization: 0, session: 0, ledger: 0 }

  async load(query: LoadQuery): Promise<LoadResult> {
    const session = query.sessionToken === undefined ? undefined : this.sessions.get(query.sessionToken)
    // The session's user (B-load-2) is found through the session just read, in the same call.
    const userId =
      query.userId ??
      (query.openid !== undefined ? this.userIdByOpenid.get(query.openid) : query.userOfSession === true ? session?.userId : undefined)
    const get = <K, V extends object>(map: Map<K, V>, key: K | undefined) => copy(key === undefined ? undefined : map.get(key))
    const sceneStr = query.confirmTicketHash !== undefined ? this.sceneStrByTicketHash.get(query.confirmTicketHash) : query.sceneStr
    const scene = get(this.scenes, sceneStr)
    return {
      // Its own copy of the nested confirmation, so a caller that changes what it loaded changes nothing here.
      scene: scene === null ? null : { ...scene, confirmation: scene.confirmation === null ? null : { ...scene.confirmation } },
      user: userId === undefined ? null : this.aggregate(userId, query.wholeQueue === true),
      session: copy(session),
      latestSession: get(this.latestSessionByScene, query.latestSessionOfScene),
      idempotency: get(this.idempotency, query.idempotencyKey),
      authorization: get(this.authorizations, query.authorizationId),
    }
  }

  async commit(changes: ChangeSet): Promise<CommitResult> {
    // Check every expectation before writing anything.
    const { scene, user, session, ledger, idempotency } = changes
    if (scene?.op === 'insert' && this.scenes.has(scene.scene.sceneStr)) return { ok: false, conflict: 'scene' }
    if (scene?.op === 'update' && this.scenes.get(scene.scene.sceneStr)?.version !== scene.expectedVersion) return { ok: false, conflict: 'scene' }
    if (user?.op === 'insert' && this.userIdByOpenid.has(user.user.openid)) return { ok: false, conflict: 'user' }
    if (user?.op === 'update' && this.users.get(user.user.id)?.version !== user.expectedVersion) return { ok: false, conflict: 'user' }
    if (idempotency && this.idempotency.has(idempotency.key)) return { ok: false, conflict: 'idempotency' }

    const ids: AssignedIds = { sceneId: null, userId: null, sessionId: null, authorizationIds: [] }
    let ownerId: number | null = null
    if (user) {
      ownerId = user.op === 'insert' ? (ids.userId = ++this.lastId.user) : user.user.id
      this.users.set(ownerId, { ...user.user, id: ownerId })
      this.userIdByOpenid.set(user.user.openid, ownerId)
      for (const a of user.insertAuthorizations) {
        const id = ++this.lastId.authorization
        ids.authorizationIds.push(id)
        this.putAuthorization({ ...a, id, userId: ownerId })
      }
      if (user.op === 'update') for (const a of user.updateAuthorizations) this.putAuthorization({ ...a })
    }
    const resolveUser = (ref: UserRef): number => (ref === 'new-user' ? (ownerId as number) : ref)
    const resolveAuthorization = (ref: AuthorizationRef): number => (typeof ref === 'number' ? ref : (ids.authorizationIds[ref.inserted] as number))
    if (scene) {
      const id = scene.op === 'insert' ? (ids.sceneId = ++this.lastId.scene) : scene.scene.id
      const userId = scene.op === 'update' && scene.scene.userId !== null ? resolveUser(scene.scene.userId) : null
      const confirmation = scene.scene.confirmation === null ? null : { ...scene.scene.confirmation }
      // A ticket names its scene only while the scene carries it: an update that clears or replaces
      // the confirmation (core clears a phone-pay ticket, B-phone-2) takes the old digest out.
      const previous = this.scenes.get(scene.scene.sceneStr)?.confirmation?.ticketHash
      if (previous !== undefined && previous !== confirmation?.ticketHash) this.sceneStrByTicketHash.delete(previous)
      this.scenes.set(scene.scene.sceneStr, { ...scene.scene, id, userId, confirmation })
      if (confirmation !== null) this.sceneStrByTicketHash.set(confirmation.ticketHash, scene.scene.sceneStr)
      this.tellSceneChanged(scene.scene.sceneStr)
    }
    if (session) {
      const record: SessionRecord = { ...session, id: (ids.sessionId = ++this.lastId.session), userId: resolveUser(session.userId) }
      this.sessions.set(record.token, record)
      this.latestSessionByScene.set(record.sceneId, record)
      indexed(this.sessionsByUser, record.userId, () => new Set<string>()).add(record.token)
    }
    for (const entry of ledger ?? []) {
      const record = { ...entry, id: ++this.lastId.ledger, userId: resolveUser(entry.userId), authorizationId: resolveAuthorization(entry.authorizationId) }
      this.ledger.push(record)
      indexed(this.ledgerByUser, record.userId, () => []).push(record)
    }
    if (idempotency) {
      const authorizationId = idempotency.authorizationId === null ? null : resolveAuthorization(idempotency.authorizationId)
      this.idempotency.set(idempotency.key, { ...idempotency, authorizationId })
    }
    return { ok: true, ids }
  }

  watchScenes(listener: SceneChangeListener): () => void {
    return this.sceneListeners.add(listener)
  }

  /** Tells the scene listeners after the commit returned, as a store on another backend would. */
  private tellSceneChanged(sceneStr: string): void {
    if (this.sceneListeners.size === 0) return
    queueMicrotask(() => this.sceneListeners.tell(sceneStr))
  }

  async listLedger(query: LedgerQuery): Promise<LedgerEntryRecord[]> {
    const entries = this.ledgerByUser.get(query.userId) ?? []
    // Ids increase along the list: skip to the first one after `afterId` by binary search.
    let low = 0
    let high = entries.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((entries[mid] as LedgerEntryRecord).id <= query.afterId) low = mid + 1
      else high = mid
    }
    return entries.slice(low, low + query.limit).map((e) => ({ ...e }))
  }

  async endSessions(selector: SessionSelector, at: number): Promise<number> {
    const tokens = 'token' in selector ? [selector.token] : [...(this.sessionsByUser.get(selector.userId) ?? [])]
    let ended = 0
    for (const token of tokens) {
      const session = this.sessions.get(token)
      if (session === undefined || hasPassed(session.expiresAt, at)) continue
      // Replace the record (loads hand out copies, so nothing else holds it).
      const over = { ...session, expiresAt: at }
      this.sessions.set(token, over)
      if (this.latestSessionByScene.get(session.sceneId) === session) this.latestSessionByScene.set(session.sceneId, over)
      ended++
    }
    return ended
  }

  async incrementCounter(key: string, expiresAt: number, now: number): Promise<number> {
    const counter = this.counters.get(key)
    if (counter === undefined || hasPassed(counter.expiresAt, now)) {
      this.counters.set(key, { count: 1, expiresAt })
      return 1
    }
    return ++counter.count
  }

  async deleteCounter(key: string): Promise<void> {
    this.counters.delete(key)
  }

  /**
   * Deletes what is no longer needed at `now` (pass the service's clock), by core's one retention
   * rule (docs/behaviour.md, D-retention): scenes once they and their latest session have expired,
   * sessions and counters once expired, closed orders that never took money once past their
   * payment deadline (B-order-purge), each kept `retentionMs` longer; users, authorizations, the
   * ledger, idempotency keys and open, paid and refunded orders never. Each map (the closed
   * orders' set for orders) is walked once, in batches of `batchSize` deletions per kind with a
   * turn of the event loop between them. Throws a `ScanAuthError` `invalid_options` naming a bad
   * option.
   */
  async purgeExpired(options: PurgeOptions): Promise<PurgeResult> {
    const resolved = resolvePurgeOptions(options, (option, message) => new ScanAuthError('invalid_options', `MemoryStore.purgeExpired: ${option}: ${message}`))
    // Map iterators survive deletions and see entries added meanwhile, so one walk spans the batches.
    const scenes = this.scenes.values()
    const sessions = this.sessions.values()
    const counters = this.counters.entries()
    const orders = this.orders.closedWalk()
    return purgeInBatches(resolved, (cutoff, limit) => {
      const scenePass = deleteUpTo(scenes, limit, (scene) => {
        if (!mayPurge(sceneNeededUntil(scene, this.latestSessionByScene.get(scene.id) ?? null), cutoff)) return false
        if (scene.confirmation !== null) this.sceneStrByTicketHash.delete(scene.confirmation.ticketHash)
        return this.scenes.delete(scene.sceneStr)
      })
      const sessionPass = deleteUpTo(sessions, limit, (session) => {
        if (!mayPurge(session.expiresAt, cutoff) || !this.sessions.delete(session.token)) return false
        this.sessionsByUser.get(session.userId)?.delete(session.token)
        if (this.latestSessionByScene.get(session.sceneId) === session) this.latestSessionByScene.delete(session.sceneId)
        return true
      })
      const counterPass = deleteUpTo(counters, limit, ([key, counter]) => mayPurge(counter.expiresAt, cutoff) && this.counters.delete(key))
      const orderPass = deleteUpTo(orders, limit, (outTradeNo) => this.orders.purge(outTradeNo, cutoff))
      return {
        scenes: scenePass.deleted,
        sessions: sessionPass.deleted,
        counters: counterPass.deleted,
        orders: orderPass.deleted,
        done: scenePass.walked && sessionPass.walked && counterPass.walked && orderPass.walked,
      }
    })
  }

  /** The order with this `outTradeNo`, or null (see {@link Store.loadOrder}). */
  async loadOrder(outTradeNo: string): Promise<OrderRecord | null> {
    return this.orders.load(outTradeNo)
  }

  /** Inserts or replaces one order after checking its expectation (see {@link Store.saveOrder}). */
  async saveOrder(write: OrderWrite): Promise<boolean> {
    return this.orders.save(write)
  }

  /** The open orders that match, oldest first (see {@link Store.listOpenOrders}). */
  async listOpenOrders(query: OpenOrderQuery): Promise<OrderRecord[]> {
    return this.orders.listOpen(query)
  }

  /**
   * The user's sessions live at `now`, newest first (see `Store.listLiveSessions`): a walk over that
   * user's own sessions only.
   */
  async listLiveSessions(query: LiveSessionQuery): Promise<SessionRecord[]> {
    const live: SessionRecord[] = []
    for (const token of this.sessionsByUser.get(query.userId) ?? []) {
      const session = this.sessions.get(token)
      if (session === undefined || hasPassed(session.expiresAt, query.now)) continue
      if (query.beforeId !== undefined && !(session.id < query.beforeId)) continue
      live.push(session)
    }
    return live
      .sort((a, b) => b.id - a.id)
      .slice(0, Math.max(0, query.limit))
      .map((s) => ({ ...s }))
  }

  /**
   * Users by id after `afterId` (see `Store.listUsers`): ids run from 1 without gaps (users are
   * never deleted), so a page looks up `limit` ids, whatever the number of users.
   */
  async listUsers(query: UserListQuery): Promise<UserRecord[]> {
    const page: UserRecord[] = []
    for (let id = Math.max(1, Math.floor(query.afterId ?? 0) + 1); id <= this.lastId.user && page.length < query.limit; id++) {
      const user = this.users.get(id)
      if (user !== undefined) page.push({ ...user })
    }
    return page
  }

  /** Orders of any status that match, oldest first (see `Store.listOrders`). */
  async listOrders(query: OrderListQuery): Promise<OrderRecord[]> {
    return this.orders.list(query)
  }

  /**
   * The active authorizations a reminder pass asks for (see `Store.listActiveAuthorizations`): a
   * walk of the active ones of the type, then a sort of those that match (`memory-active.ts`).
   */
  async listActiveAuthorizations(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    return this.activeByType.list(query)
  }

  /** A memory store has one layout, version 1, and nothing to migrate: always current. */
  async schemaState(): Promise<SchemaState> {
    return { version: 1, latest: 1, pending: [], exists: true }
  }

  /** A copy of every record, for tests and debugging. */
  snapshot(): MemoryStoreSnapshot {
    const all = <T extends object>(values: Iterable<T>) => [...values].map((r) => ({ ...r }))
    return {
      scenes: all(this.scenes.values()),
      users: all(this.users.values()),
      authorizations: all(this.authorizations.values()),
      sessions: all(this.sessions.values()),
      ledger: all(this.ledger),
      idempotency: all(this.idempotency.values()),
      orders: this.orders.all(),
    }
  }

  /** Stores an authorization and files it in its user's active set or queue, by status, and among the active ones of its type. */
  private putAuthorization(a: AuthorizationRecord): void {
    const previous = this.authorizations.get(a.id)
    this.authorizations.set(a.id, a)
    this.activeByType.file(a)
    const queues = indexed(this.queues, a.userId, () => ({ active: new Set<number>(), pending: [] as AuthorizationRecord[] }))
    if (previous?.status === 'pending') queues.pending.splice(queues.pending.findIndex((p) => p.id === a.id), 1)
    queues.active.delete(a.id)
    if (a.status === 'active') queues.active.add(a.id)
    if (a.status === 'pending') {
      // Nearly always the end (a new grant is the newest); a clock set back lands it earlier.
      let at = queues.pending.length
      while (at > 0 && fifoOrder(queues.pending[at - 1] as AuthorizationRecord, a) > 0) at--
      queues.pending.splice(at, 0, a)
    }
  }

  private aggregate(userId: number, wholeQueue: boolean): UserAggregate | null {
    const user = this.users.get(userId)
    if (!user) return null
    const queues = this.queues.get(userId)
    const active = [...(queues?.active ?? [])].map((id) => this.authorizations.get(id) as AuthorizationRecord)
    const pending = wholeQueue ? (queues?.pending ?? []) : (queues?.pending.slice(0, 1) ?? [])
    const authorizations = [...active, ...pending]
      .map((a) => ({ ...a }))
      .sort(fifoOrder)
    return { user: { ...user }, authorizations }
  }
}

/** The value of `map` at `key`, created by `make` when absent. */
function indexed<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key)
  if (value === undefined) map.set(key, (value = make()))
  return value
}

function copy<T extends object>(record: T | undefined): T | null {
  return record === undefined ? null : { ...record }
}

/**
 * Walks `entries` until `remove` has deleted `limit` of them or the walk is over; `walked` tells
 * which. `remove` answers whether it deleted the entry.
 */
function deleteUpTo<T>(entries: Iterator<T>, limit: number, remove: (entry: T) => boolean): { deleted: number; walked: boolean } {
  let deleted = 0
  while (deleted < limit) {
    const next = entries.next()
    if (next.done === true) return { deleted, walked: true }
    if (remove(next.value)) deleted++
  }
  return { deleted, walked: false }
}
