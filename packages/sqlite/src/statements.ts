/**
 * Every statement the store runs, prepared once per connection. Each lookup core makes is one
 * indexed statement (the index is named beside it); `test/sqlite-store.test.ts` checks the plans
 * with EXPLAIN QUERY PLAN.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { SceneRecord, SessionRecord } from '@scanauth/core'
import {
  SCENE_COLUMNS,
  SESSION_COLUMNS,
  USER_WITH_AUTHORIZATION_COLUMNS,
  type AuthorizationParams,
  type SceneRow,
  type SessionRow,
  type UserJoinRow,
  type UserParams,
} from './rows'

/** Named parameters of the scene insert and update (`id` is ignored by the insert). */
export type SceneParams = Omit<SceneRecord, 'id'> & { id: number | null }

/** Named parameters of the session insert. */
export type SessionParams = Omit<SessionRecord, 'id'>

/** A scene examined by a purge batch. */
export interface PurgeCandidate {
  id: number
  expiresAt: number
  /** expires_at of the scene's latest session, 0 when it has none. */
  sessionEnd: number
}

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** The prepared statements of one connection. */
export interface Statements {
  // Loads.
  /** Index scanauth_scenes_by_scene_str. The whole of a pending poll. */
  sceneByStr: Statement<[string], SceneRow>
  /** Primary key, then index scanauth_authorizations_by_user. */
  userById: Statement<[number], UserJoinRow>
  /** Index scanauth_users_by_openid, then index scanauth_authorizations_by_user. */
  userByOpenid: Statement<[string], UserJoinRow>
  /** Index scanauth_sessions_by_token. */
  sessionByToken: Statement<[string], SessionRow>
  /** Index scanauth_sessions_by_scene, read backwards from the scene's last entry. */
  latestSessionOfScene: Statement<[number], SessionRow>

  // Expectations of a commit (plucked single values).
  sceneIdByStr: Statement<[string], number>
  sceneVersion: Statement<[number], number>
  userIdByOpenid: Statement<[string], number>
  userVersion: Statement<[number], number>

  // Writes of a commit.
  insertScene: Statement<[SceneParams]>
  /** Writes a scene whose scene_str and expires_at are unchanged; matches no row otherwise. */
  updateScene: Statement<[SceneParams]>
  /** Writes every column of a scene. */
  rewriteScene: Statement<[SceneParams]>
  insertUser: Statement<[UserParams]>
  /** Writes a user whose openid is unchanged; matches no row otherwise. */
  updateUser: Statement<[UserParams]>
  /** Writes every column of a user. */
  rewriteUser: Statement<[UserParams]>
  insertAuthorization: Statement<[AuthorizationParams]>
  /** Writes an authorization whose status and created_at are unchanged; matches no row otherwise. */
  updateAuthorization: Statement<[AuthorizationParams]>
  /** Writes every column of an authorization of this user. */
  rewriteAuthorization: Statement<[AuthorizationParams]>
  insertSession: Statement<[SessionParams]>

  // Purge.
  purgeSceneCandidates: Statement<[{ cutoff: number; afterExpiresAt: number; afterId: number; limit: number }], PurgeCandidate>
  deleteScene: Statement<[number]>
  purgeSessions: Statement<[{ cutoff: number; limit: number }]>
}

/** Live authorizations, in FIFO order, as the LoadResult contract asks. */
const USER_JOIN = `FROM scanauth_users u
  LEFT JOIN scanauth_authorizations a ON a.user_id = u.id AND a.status IN ('pending', 'active')`
const FIFO = `ORDER BY a.created_at, a.id`

/** Prepares every statement on `db` (whose schema must be current). */
export function prepareStatements(db: Database.Database): Statements {
  return {
    sceneByStr: db.prepare<[string], SceneRow>(`SELECT ${SCENE_COLUMNS} FROM scanauth_scenes WHERE scene_str = ?`).raw(),
    userById: db.prepare<[number], UserJoinRow>(`SELECT ${USER_WITH_AUTHORIZATION_COLUMNS} ${USER_JOIN} WHERE u.id = ? ${FIFO}`).raw(),
    userByOpenid: db.prepare<[string], UserJoinRow>(`SELECT ${USER_WITH_AUTHORIZATION_COLUMNS} ${USER_JOIN} WHERE u.openid = ? ${FIFO}`).raw(),
    sessionByToken: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM scanauth_sessions WHERE token = ?`).raw(),
    latestSessionOfScene: db
      .prepare<[number], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM scanauth_sessions WHERE scene_id = ? ORDER BY id DESC LIMIT 1`)
      .raw(),

    sceneIdByStr: db.prepare<[string], number>(`SELECT id FROM scanauth_scenes WHERE scene_str = ?`).pluck(),
    sceneVersion: db.prepare<[number], number>(`SELECT version FROM scanauth_scenes WHERE id = ?`).pluck(),
    userIdByOpenid: db.prepare<[string], number>(`SELECT id FROM scanauth_users WHERE openid = ?`).pluck(),
    userVersion: db.prepare<[number], number>(`SELECT version FROM scanauth_users WHERE id = ?`).pluck(),

    insertScene: db.prepare(`INSERT INTO scanauth_scenes
      (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version)
      VALUES (@sceneStr, @deviceId, @status, @userId, @createdAt, @expiresAt, @authorizedAt, @version)`),
    // An UPDATE naming an indexed column rewrites that index's entry even when the value is the
    // same (SQLite decides from the statement, not the values), which dirties one more page per
    // index in every commit. So the usual statements leave the indexed columns out of SET and
    // match them in WHERE instead; when one of them really changes, the statement matches no row
    // and the store runs the full rewrite below it.
    updateScene: db.prepare(`UPDATE scanauth_scenes SET
      device_id = @deviceId, status = @status, user_id = @userId, created_at = @createdAt,
      authorized_at = @authorizedAt, version = @version
      WHERE id = @id AND scene_str = @sceneStr AND expires_at = @expiresAt`),
    rewriteScene: db.prepare(`UPDATE scanauth_scenes SET
      scene_str = @sceneStr, device_id = @deviceId, status = @status, user_id = @userId, created_at = @createdAt,
      expires_at = @expiresAt, authorized_at = @authorizedAt, version = @version
      WHERE id = @id`),
    insertUser: db.prepare(`INSERT INTO scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version)
      VALUES (@openid, @createdAt, @lastSeenAt, @hasClaimedFree, @version)`),
    updateUser: db.prepare(`UPDATE scanauth_users SET
      created_at = @createdAt, last_seen_at = @lastSeenAt, has_claimed_free = @hasClaimedFree, version = @version
      WHERE id = @id AND openid = @openid`),
    rewriteUser: db.prepare(`UPDATE scanauth_users SET
      openid = @openid, created_at = @createdAt, last_seen_at = @lastSeenAt, has_claimed_free = @hasClaimedFree, version = @version
      WHERE id = @id`),
    insertAuthorization: db.prepare(`INSERT INTO scanauth_authorizations
      (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
      VALUES (@userId, @type, @status, @startAt, @endAt, @remainingPoints, @totalPoints, @source, @createdAt, @updatedAt)`),
    // user_id in the WHERE clauses: an authorization is only ever updated through its own user.
    updateAuthorization: db.prepare(`UPDATE scanauth_authorizations SET
      type = @type, start_at = @startAt, end_at = @endAt, remaining_points = @remainingPoints,
      total_points = @totalPoints, source = @source, updated_at = @updatedAt
      WHERE id = @id AND user_id = @userId AND status = @status AND created_at = @createdAt`),
    rewriteAuthorization: db.prepare(`UPDATE scanauth_authorizations SET
      type = @type, status = @status, start_at = @startAt, end_at = @endAt, remaining_points = @remainingPoints,
      total_points = @totalPoints, source = @source, created_at = @createdAt, updated_at = @updatedAt
      WHERE id = @id AND user_id = @userId`),
    insertSession: db.prepare(`INSERT INTO scanauth_sessions (token, user_id, device_id, scene_id, created_at, expires_at)
      VALUES (@token, @userId, @deviceId, @sceneId, @createdAt, @expiresAt)`),

    // Keyset pagination over scanauth_scenes_by_expiry: each batch examines at most `limit` expired
    // scenes after the last one examined, however many expired scenes are kept for their sessions.
    purgeSceneCandidates: db.prepare(`SELECT s.id, s.expires_at AS expiresAt,
        COALESCE((SELECT x.expires_at FROM scanauth_sessions x WHERE x.scene_id = s.id ORDER BY x.id DESC LIMIT 1), 0) AS sessionEnd
      FROM scanauth_scenes s
      WHERE s.expires_at <= @cutoff AND (s.expires_at, s.id) > (@afterExpiresAt, @afterId)
      ORDER BY s.expires_at, s.id
      LIMIT @limit`),
    deleteScene: db.prepare(`DELETE FROM scanauth_scenes WHERE id = ?`),
    purgeSessions: db.prepare(`DELETE FROM scanauth_sessions WHERE id IN
      (SELECT id FROM scanauth_sessions WHERE expires_at <= @cutoff ORDER BY expires_at LIMIT @limit)`),
  }
}
