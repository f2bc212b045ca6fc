/**
 * The body of a commit, run inside its `BEGIN IMMEDIATE` transaction (docs/architecture.md, "Why this
 * is atomic on every backend"): every expectation of the change set checked first, in MemoryStore's
 * order, then every write, the scene change logged in the same transaction.
 *
 * @module
 */
import { NEW_USER, type AssignedIds, type AuthorizationRef, type ChangeSet, type CommitResult, type UserRef } from '@scanauth/core/store'
import type { SceneChangeLog } from './change-log'
import { SqliteStoreError } from './errors'
import { authorizationParams, ledgerParams, sceneParams, userParams } from './rows'
import type { Statements } from './statements'

const CONFLICT_SCENE: CommitResult = Object.freeze({ ok: false, conflict: 'scene' })
const CONFLICT_USER: CommitResult = Object.freeze({ ok: false, conflict: 'user' })
const CONFLICT_IDEMPOTENCY: CommitResult = Object.freeze({ ok: false, conflict: 'idempotency' })

/** Applies `changes` with the prepared statements `s`, or answers the conflict that refuses them; call it inside the transaction. */
export function applyChanges(s: Statements, changeLog: SceneChangeLog, changes: ChangeSet): CommitResult {
  const { scene, user, session, ledger, idempotency } = changes

  // Expectations first, all of them, before any write: a conflict writes nothing. The same
  // order as MemoryStore (scene, user, idempotency key).
  if (scene?.op === 'insert' && s.sceneIdByStr.get(scene.scene.sceneStr) !== undefined) return CONFLICT_SCENE
  if (scene?.op === 'update' && s.sceneVersion.get(scene.scene.id) !== scene.expectedVersion) return CONFLICT_SCENE
  if (user?.op === 'insert' && s.userIdByOpenid.get(user.user.openid) !== undefined) return CONFLICT_USER
  if (user?.op === 'update' && s.userVersion.get(user.user.id) !== user.expectedVersion) return CONFLICT_USER
  if (idempotency !== undefined && s.idempotencyTaken.get(idempotency.key) !== undefined) return CONFLICT_IDEMPOTENCY

  const ids: AssignedIds = { sceneId: null, userId: null, sessionId: null, authorizationIds: [] }
  let ownerId: number | null = null
  if (user) {
    if (user.op === 'insert') {
      ownerId = ids.userId = Number(s.insertUser.run(userParams(user.user)).lastInsertRowid)
    } else {
      ownerId = user.user.id
      const params = userParams(user.user)
      if (s.updateUser.run(params).changes === 0) s.rewriteUser.run(params)
    }
    for (const a of user.insertAuthorizations) {
      ids.authorizationIds.push(Number(s.insertAuthorization.run(authorizationParams(a, ownerId)).lastInsertRowid))
    }
    if (user.op === 'update') {
      for (const a of user.updateAuthorizations) {
        const params = authorizationParams(a, ownerId)
        if (s.updateAuthorization.run(params).changes === 0 && s.rewriteAuthorization.run(params).changes === 0) {
          throw new SqliteStoreError('invalid_change_set', `authorization ${a.id} is not an authorization of user ${ownerId}`)
        }
      }
    }
  }
  const resolve = (ref: UserRef): number => {
    if (ref !== NEW_USER) return ref
    if (user?.op !== 'insert' || ownerId === null) {
      throw new SqliteStoreError('invalid_change_set', 'the change set refers to NEW_USER but inserts no user')
    }
    return ownerId
  }
  if (scene?.op === 'insert') {
    ids.sceneId = Number(s.insertScene.run(sceneParams(scene.scene)).lastInsertRowid)
  } else if (scene?.op === 'update') {
    const draft = scene.scene
    const params = sceneParams({ ...draft, userId: draft.userId === null ? null : resolve(draft.userId) })
    if (s.updateScene.run(params).changes === 0) s.rewriteScene.run(params)
  }
  // In the same transaction as the scene itself: the log never tells of a write that rolled back.
  if (scene) changeLog.record(scene.scene.sceneStr)
  if (session) {
    ids.sessionId = Number(s.insertSession.run({ ...session, userId: resolve(session.userId) }).lastInsertRowid)
  }
  const resolveAuthorization = (ref: AuthorizationRef): number => {
    if (typeof ref === 'number') return ref
    const id = ids.authorizationIds[ref.inserted]
    if (id === undefined) {
      throw new SqliteStoreError('invalid_change_set', `the change set refers to inserted authorization ${ref.inserted} but inserts ${ids.authorizationIds.length}`)
    }
    return id
  }
  // In the order given: AUTOINCREMENT gives them increasing ids in that order.
  if (ledger) for (const entry of ledger) s.insertLedgerEntry.run(ledgerParams(entry, resolve(entry.userId), resolveAuthorization(entry.authorizationId)))
  if (idempotency) {
    const authorizationId = idempotency.authorizationId === null ? null : resolveAuthorization(idempotency.authorizationId)
    s.insertIdempotency.run({ ...idempotency, authorizationId })
  }
  return { ok: true, ids }
}
