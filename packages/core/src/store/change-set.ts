/**
 * Change sets: what the service asks a store to commit atomically ({@link Store.commit}), the
 * expectations a commit checks (versions, "no user with this openid yet"), and what the store answers
 * (the ids it assigned, or the conflict that refused it). See `contract.ts` for the methods.
 *
 * @module
 */
import type { AuthorizationRecord, IdempotencyRecord, LedgerEntryRecord, SceneRecord, SessionRecord, UserRecord } from './records'

/**
 * Stands for "the id of the user this same change set inserts", wherever a change set must refer
 * to a user that does not have an id yet (a first scan binds the scene and the session to it).
 */
export const NEW_USER = 'new-user' as const

/** A user id, or {@link NEW_USER} for the user the same change set inserts. */
export type UserRef = number | typeof NEW_USER

/** A scene as written by a change set: its `userId` may refer to the user inserted alongside. */
export type SceneDraft = Omit<SceneRecord, 'userId'> & {
  /** The bound user: an id, {@link NEW_USER}, or null while unbound. */
  userId: UserRef | null
}

/** An authorization to insert; its owner is the user of the change set, its id is assigned by the store. */
export type NewAuthorization = Omit<AuthorizationRecord, 'id' | 'userId'>

/** A session to insert; its id is assigned by the store. */
export type NewSession = Omit<SessionRecord, 'id' | 'userId'> & {
  /** The session's user: an id, or {@link NEW_USER}. */
  userId: UserRef
}

/** Insert a new scene (expects no scene with the same `sceneStr`), or replace one (expects its version). */
export type SceneWrite =
  | {
      /** Insert a new scene. */
      op: 'insert'
      /** The scene, without the id the store assigns. */
      scene: Omit<SceneRecord, 'id'>
    }
  | {
      /** Replace a stored scene (matched by `scene.id` / `scene.sceneStr`). */
      op: 'update'
      /** The scene as it must be stored, its `version` already bumped. */
      scene: SceneDraft
      /** The version the stored scene must still have. */
      expectedVersion: number
    }

/**
 * Insert a new user (expects no user with the same openid), or replace one (expects its version).
 * Either way, authorizations of that user may be inserted; an update may also replace existing ones
 * (matched by id; they belong to this user).
 */
export type UserWrite =
  | {
      /** Insert a new user. */
      op: 'insert'
      /** The user, without the id the store assigns. */
      user: Omit<UserRecord, 'id'>
      /** Authorizations of the new user, in creation order. */
      insertAuthorizations: NewAuthorization[]
    }
  | {
      /** Replace a stored user (matched by `user.id`). */
      op: 'update'
      /** The user as it must be stored, its `version` already bumped. */
      user: UserRecord
      /** The version the stored user must still have. */
      expectedVersion: number
      /** New authorizations of this user, in creation order. */
      insertAuthorizations: NewAuthorization[]
      /** Stored authorizations of this user to replace, matched by id. */
      updateAuthorizations: AuthorizationRecord[]
    }

/**
 * Everything one operation writes, committed all-or-nothing. At most one scene, one user (with its
 * authorizations) and one new session: the aggregates of one operation.
 */
export interface ChangeSet {
  /** The scene to insert or replace. */
  scene?: SceneWrite
  /** The user (and its authorizations) to insert or replace. */
  user?: UserWrite
  /** A session to insert. */
  session?: NewSession
  /** Ledger entries to append, in this order (their ids increase in this order). */
  ledger?: NewLedgerEntry[]
  /** An idempotency key to record; expects no record with that key. */
  idempotency?: NewIdempotencyRecord
}

/**
 * An authorization id, or `{ inserted: i }` for the `i`-th authorization (from 0) that the same
 * change set inserts in `user.insertAuthorizations`, whose id the store assigns at commit.
 */
export type AuthorizationRef =
  | number
  | {
      /** The index, from 0, in the change set's `user.insertAuthorizations`. */
      inserted: number
    }

/** A ledger entry to append; its id is assigned by the store, its references resolved at commit. */
export type NewLedgerEntry = Omit<LedgerEntryRecord, 'id' | 'userId' | 'authorizationId'> & {
  /** The user: an id, or {@link NEW_USER}. */
  userId: UserRef
  /** The authorization: an id, or the index of one inserted by the same change set. */
  authorizationId: AuthorizationRef
}

/** An idempotency record to insert (expects the key to be free). */
export type NewIdempotencyRecord = Omit<IdempotencyRecord, 'authorizationId'> & {
  /** The authorization a grant created (usually `{ inserted: 0 }`), or null. */
  authorizationId: AuthorizationRef | null
}

/** Ids the store assigned to what a commit inserted (`null` where nothing of that kind was inserted). */
export interface AssignedIds {
  /** The inserted scene's id. */
  sceneId: number | null
  /** The inserted user's id. */
  userId: number | null
  /** The inserted session's id. */
  sessionId: number | null
  /** In the order of `insertAuthorizations`. */
  authorizationIds: number[]
}

/**
 * The outcome of a commit: applied with the ids it assigned, or refused because an expectation did
 * not hold (nothing applied). `conflict` names the aggregate whose expectation failed: another writer
 * changed it since it was loaded, or inserted it first.
 */
export type CommitResult =
  | {
      /** Applied. */
      ok: true
      /** The ids assigned to what was inserted. */
      ids: AssignedIds
    }
  | {
      /** Refused; nothing was applied. */
      ok: false
      /** Whose expectation failed. */
      conflict: 'scene' | 'user' | 'idempotency'
    }
