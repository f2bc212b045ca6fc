/**
 * `MemoryStore`: the Store contract over plain maps, for tests, demos and single-process apps that
 * can lose their data on restart. Commits are synchronous inside one event-loop turn, so they are
 * atomic with respect to each other.
 *
 * @module
 */
import type { AuthorizationRecord, SceneRecord, SessionRecord, UserAggregate, UserRecord } from './records'
import type { AssignedIds, ChangeSet, CommitResult, LoadQuery, LoadResult, Store, UserRef } from './store'

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
}

/** How many records {@link MemoryStore.purgeExpired} removed. */
export interface PurgeCount {
  /** Scenes removed. */
  scenes: number
  /** Sessions removed. */
  sessions: number
}

/**
 * A store that keeps everything in process memory. Nothing expires by itself: call
 * {@link MemoryStore.purgeExpired} now and then in a long-running process.
 *
 * @example
 * ```ts
 * const auth = createScanAuth({ store: new MemoryStore(), qr })
 * ```
 */
export class MemoryStore implements Store {
  private readonly scenes = new Map<string, SceneRecord>()
  private readonly users = new Map<number, UserRecord>()
  private readonly userIdByOpenid = new Map<string, number>()
  private readonly authorizations = new Map<number, AuthorizationRecord>()
  /** Live (pending or active) authorization ids per user. */
  private readonly liveByUser = new Map<number, Set<number>>()
  private readonly sessions = new Map<string, SessionRecord>()
  private readonly latestSessionByScene = new Map<number, SessionRecord>()
  private readonly lastId = { scene: 0, user: 0, authorization: 0, session: 0 }

  async load(query: LoadQuery): Promise<LoadResult> {
    const userId = query.userId ?? (query.openid === undefined ? undefined : this.userIdByOpenid.get(query.openid))
    return {
      scene: copy(query.sceneStr === undefined ? undefined : this.scenes.get(query.sceneStr)),
      user: userId === undefined ? null : this.aggregate(userId),
      session: copy(query.sessionToken === undefined ? undefined : this.sessions.get(query.sessionToken)),
      latestSession: copy(query.latestSessionOfScene === undefined ? undefined : this.latestSessionByScene.get(query.latestSessionOfScene)),
    }
  }

  async commit(changes: ChangeSet): Promise<CommitResult> {
    // Check every expectation before writing anything.
    const { scene, user, session } = changes
    if (scene?.op === 'insert' && this.scenes.has(scene.scene.sceneStr)) return { ok: false, conflict: 'scene' }
    if (scene?.op === 'update' && this.scenes.get(scene.scene.sceneStr)?.version !== scene.expectedVersion) return { ok: false, conflict: 'scene' }
    if (user?.op === 'insert' && this.userIdByOpenid.has(user.user.openid)) return { ok: false, conflict: 'user' }
    if (user?.op === 'update' && this.users.get(user.user.id)?.version !== user.expectedVersion) return { ok: false, conflict: 'user' }

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
    const resolve = (ref: UserRef): number => (ref === 'new-user' ? (ownerId as number) : ref)
    if (scene) {
      const id = scene.op === 'insert' ? (ids.sceneId = ++this.lastId.scene) : scene.scene.id
      const userId = scene.op === 'update' && scene.scene.userId !== null ? resolve(scene.scene.userId) : null
      this.scenes.set(scene.scene.sceneStr, { ...scene.scene, id, userId })
    }
    if (session) {
      const record: SessionRecord = { ...session, id: (ids.sessionId = ++this.lastId.session), userId: resolve(session.userId) }
      this.sessions.set(record.token, record)
      this.latestSessionByScene.set(record.sceneId, record)
    }
    return { ok: true, ids }
  }

  /**
   * Deletes scenes and sessions whose expiry passed more than `retentionMs` (default 0) before `now`
   * (default `Date.now()`; pass the service's clock) (an
   * authorized scene only once its latest session has expired too). Users and authorizations are
   * never deleted. Returns how many records were removed.
   */
  purgeExpired(options: { now?: number; retentionMs?: number } = {}): PurgeCount {
    const { now = Date.now(), retentionMs = 0 } = options
    const cutoff = now - retentionMs
    let scenes = 0
    let sessions = 0
    for (const [key, scene] of this.scenes) {
      // An authorized scene keeps answering polls while its session lives: it goes with the session.
      const sessionEnd = this.latestSessionByScene.get(scene.id)?.expiresAt ?? 0
      if (scene.expiresAt <= cutoff && sessionEnd <= cutoff) {
        this.scenes.delete(key)
        scenes++
      }
    }
    for (const [token, session] of this.sessions) {
      if (session.expiresAt <= cutoff) {
        this.sessions.delete(token)
        if (this.latestSessionByScene.get(session.sceneId) === session) this.latestSessionByScene.delete(session.sceneId)
        sessions++
      }
    }
    return { scenes, sessions }
  }

  /** A copy of every record, for tests and debugging. */
  snapshot(): MemoryStoreSnapshot {
    return {
      scenes: [...this.scenes.values()].map((r) => ({ ...r })),
      users: [...this.users.values()].map((r) => ({ ...r })),
      authorizations: [...this.authorizations.values()].map((r) => ({ ...r })),
      sessions: [...this.sessions.values()].map((r) => ({ ...r })),
    }
  }

  private putAuthorization(a: AuthorizationRecord): void {
    this.authorizations.set(a.id, a)
    let live = this.liveByUser.get(a.userId)
    if (!live) this.liveByUser.set(a.userId, (live = new Set()))
    if (a.status === 'pending' || a.status === 'active') live.add(a.id)
    else live.delete(a.id)
  }

  private aggregate(userId: number): UserAggregate | null {
    const user = this.users.get(userId)
    if (!user) return null
    const authorizations = [...(this.liveByUser.get(userId) ?? [])]
      .map((id) => ({ ...(this.authorizations.get(id) as AuthorizationRecord) }))
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
    return { user: { ...user }, authorizations }
  }
}

function copy<T extends object>(record: T | undefined): T | null {
  return record === undefined ? null : { ...record }
}
