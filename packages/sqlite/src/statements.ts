/**
 * Every statement the store runs, prepared once per connection. Each lookup core makes is one
 * indexed statement (the index is named beside it); `test/query-plans.test.ts` checks the plans
 * with EXPLAIN QUERY PLAN.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { IdempotencyRecord, SessionRecord } from '@scanauth/core'
import type { PurgeSceneCandidate } from '@scanauth/core/store'
import { prepareActiveStatements, type ActiveStatements } from './active-reads'
import { prepareOperatorStatements, type OperatorStatements } from './operator-reads'
import { prepareOrderStatements, type OrderStatements } from './orders'
import {
  AUTHORIZATION_COLUMNS,
  IDEMPOTENCY_COLUMNS,
  LEDGER_COLUMNS,
  SCENE_COLUMNS,
  SESSION_COLUMNS,
  USER_WITH_AUTHORIZATION_COLUMNS,
  type AuthorizationParams,
  type AuthorizationRow,
  type IdempotencyRow,
  type LedgerParams,
  type LedgerRow,
  type SceneParams,
  type SceneRow,
  type SessionRow,
  type UserJoinRow,
  type UserParams,
} from './rows'

export type { SceneParams } from './rows'

/** Named parameters of the session insert. */
export type SessionParams = Omit<SessionRecord, 'id'>

/** Named parameters of the idempotency insert (`authorizationId` already resolved). */
export type IdempotencyParams = IdempotencyRecord

/** Named parameters of the counter upsert: `Store.incrementCounter(key, expiresAt, now)`. */
export interface CounterParams {
  key: string
  expiresAt: number
  now: number
}

/** A scene examined by a purge batch (core's `PurgeSceneCandidate`). */
export type PurgeCandidate = PurgeSceneCandidate<number>

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/**
 * The prepared statements of one connection (the order statements live in `orders.ts`, the operator
 * reads' in `operator-reads.ts`, the reminders' read's in `active-reads.ts`).
 */
export interface Statements extends OrderStatements, OperatorStatements, ActiveStatements {
  // Loads.
  /** Index scanauth_scenes_by_scene_str. The whole of a pending poll. */
  sceneByStr: Statement<[string], SceneRow>
  /**
   * Index scanauth_scenes_by_confirm_ticket_hash (partial: only scenes with a confirmation): the
   * scene a confirm link names (B-confirm-2). Found until the scene is purged, decided or not, so a
   * reused ticket is told it was used (B-confirm-4).
   */
  sceneByConfirmTicket: Statement<[string], SceneRow>
  /**
   * The user with its active authorizations and the head of its queue (pass the id twice): primary
   * key, then index scanauth_authorizations_by_user for the active ones and for the first entry of
   * the pending range. Never walks the queue.
   */
  userById: Statement<[number, number], UserJoinRow>
  /** The same by openid (pass it twice): index scanauth_users_by_openid first. */
  userByOpenid: Statement<[string, string], UserJoinRow>
  /** The user with its active and every pending authorization (`wholeQueue`); costs as long as the queue. */
  userWithQueueById: Statement<[number], UserJoinRow>
  /** The same by openid. */
  userWithQueueByOpenid: Statement<[string], UserJoinRow>
  /** Primary key. */
  authorizationById: Statement<[number], AuthorizationRow>
  /** Index scanauth_sessions_by_token. */
  sessionByToken: Statement<[string], SessionRow>
  /** Index scanauth_sessions_by_scene, read backwards from the scene's last entry. */
  latestSessionOfScene: Statement<[number], SessionRow>
  /** Primary key of scanauth_idempotency. */
  idempotencyByKey: Statement<[string], IdempotencyRow>
  /** Index scanauth_ledger_by_user: one page, `(userId, afterId, limit)`. */
  ledgerPage: Statement<[number, number, number], LedgerRow>

  // Expectations of a commit (plucked single values).
  sceneIdByStr: Statement<[string], number>
  sceneVersion: Statement<[number], number>
  userIdByOpenid: Statement<[string], number>
  userVersion: Statement<[number], number>
  idempotencyTaken: Statement<[string], number>

  // Writes of a commit.
  insertScene: Statement<[SceneParams]>
  /** Writes a scene whose scene_str, expires_at and confirm_ticket_hash are unchanged; matches no row otherwise. */
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
  insertLedgerEntry: Statement<[LedgerParams]>
  insertIdempotency: Statement<[IdempotencyParams]>

  // endSessions: one UPDATE each, `{ at, token }` / `{ at, userId }`.
  /** Index scanauth_sessions_by_token. */
  endSessionByToken: Statement<[{ at: number; token: string }]>
  /** Index scanauth_sessions_by_user: only the user's sessions still live at `at`. */
  endSessionsOfUser: Statement<[{ at: number; userId: number }]>

  // Counters (Store.incrementCounter / deleteCounter), each one statement on its own.
  /**
   * The upsert behind `incrementCounter`, `{ key, expiresAt, now }`: answers the new count. Primary
   * key of scanauth_counters; restarts a counter whose expires_at has passed.
   */
  incrementCounter: Statement<[CounterParams], number>
  /** Primary key of scanauth_counters. */
  deleteCounter: Statement<[string]>

  // Purge.
  purgeSceneCandidates: Statement<[{ cutoff: number; afterExpiresAt: number; afterId: number; limit: number }], PurgeCandidate>
  deleteScene: Statement<[number]>
  purgeSessions: Statement<[{ cutoff: number; limit: number }]>
  /** Index scanauth_counters_by_expiry: up to `limit` counters whose expiry is at or before `cutoff`. */
  purgeCounters: Statement<[{ cutoff: number; limit: number }]>
}

/**
 * The user (`where` picks it by id or openid, one parameter) with what the LoadResult contract asks
 * for (docs/behaviour.md, B-load-1: the activation step only ever looks at the head of the
 * queue). Two parts in one statement, so both read the same snapshot of the file: the active ones
 * (a LEFT JOIN, so a user without one still gives a row), then the head of the queue, found by a
 * scalar subquery that takes the first entry of the user's pending range of
 * scanauth_authorizations_by_user (in index order, so LIMIT 1 reads one entry). The rows come
 * back in that order; `toUserAggregate` puts them in FIFO order.
 */
function userWithHead(where: string): string {
  return `SELECT ${USER_WITH_AUTHORIZATION_COLUMNS} FROM scanauth_users u
      LEFT JOIN scanauth_authorizations a ON a.user_id = u.id AND a.status = 'active'
      WHERE ${where}
    UNION ALL
    SELECT ${USER_WITH_AUTHORIZATION_COLUMNS} FROM scanauth_users u
      JOIN scanauth_authorizations a ON a.id = (
        SELECT h.id FROM scanauth_authorizations h
        WHERE h.user_id = u.id AND h.status = 'pending'
        ORDER BY h.created_at, h.id LIMIT 1)
      WHERE ${where}`
}

/** The user with every active and pending authorization, in FIFO order (`wholeQueue`). */
function userWithQueue(where: string): string {
  return `SELECT ${USER_WITH_AUTHORIZATION_COLUMNS} FROM scanauth_users u
    LEFT JOIN scanauth_authorizations a ON a.user_id = u.id AND a.status IN ('pending', 'active')
    WHERE ${where} ORDER BY a.created_at, a.id`
}

/** Prepares every statement on `db` (whose schema must be current). */
export function prepareStatements(db: Database.Database): Statements {
  return {
    sceneByStr: db.prepare<[string], SceneRow>(`SELECT ${SCENE_COLUMNS} FROM scanauth_scenes WHERE scene_str = ?`).raw(),
    sceneByConfirmTicket: db.prepare<[string], SceneRow>(`SELECT ${SCENE_COLUMNS} FROM scanauth_scenes WHERE confirm_ticket_hash = ?`).raw(),
    userById: db.prepare<[number, number], UserJoinRow>(userWithHead('u.id = ?')).raw(),
    userByOpenid: db.prepare<[string, string], UserJoinRow>(userWithHead('u.openid = ?')).raw(),
    userWithQueueById: db.prepare<[number], UserJoinRow>(userWithQueue('u.id = ?')).raw(),
    userWithQueueByOpenid: db.prepare<[string], UserJoinRow>(userWithQueue('u.openid = ?')).raw(),
    authorizationById: db.prepare<[number], AuthorizationRow>(`SELECT ${AUTHORIZATION_COLUMNS} FROM scanauth_authorizations WHERE id = ?`).raw(),
    sessionByToken: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM scanauth_sessions WHERE token = ?`).raw(),
    latestSessionOfScene: db
      .prepare<[number], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM scanauth_sessions WHERE scene_id = ? ORDER BY id DESC LIMIT 1`)
      .raw(),
    idempotencyByKey: db.prepare<[string], IdempotencyRow>(`SELECT ${IDEMPOTENCY_COLUMNS} FROM scanauth_idempotency WHERE key = ?`).raw(),
    ledgerPage: db
      .prepare<[number, number, number], LedgerRow>(`SELECT ${LEDGER_COLUMNS} FROM scanauth_ledger WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`)
      .raw(),

    sceneIdByStr: db.prepare<[string], number>(`SELECT id FROM scanauth_scenes WHERE scene_str = ?`).pluck(),
    sceneVersion: db.prepare<[number], number>(`SELECT version FROM scanauth_scenes WHERE id = ?`).pluck(),
    userIdByOpenid: db.prepare<[string], number>(`SELECT id FROM scanauth_users WHERE openid = ?`).pluck(),
    userVersion: db.prepare<[number], number>(`SELECT version FROM scanauth_users WHERE id = ?`).pluck(),
    idempotencyTaken: db.prepare<[string], number>(`SELECT 1 FROM scanauth_idempotency WHERE key = ?`).pluck(),

    insertScene: db.prepare(`INSERT INTO scanauth_scenes
      (scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version,
       requested_from, poll_secret_hash, confirm_scanned_by, confirm_scanned_at, confirm_ticket_hash, confirm_csrf_hash)
      VALUES (@sceneStr, @deviceId, @status, @userId, @createdAt, @expiresAt, @authorizedAt, @version,
       @requestedFrom, @pollSecretHash, @confirmScannedBy, @confirmScannedAt, @confirmTicketHash, @confirmCsrfHash)`),
    // An UPDATE naming an indexed column rewrites that index's entry even when the value is the
    // same (SQLite decides from the statement, not the values), which dirties one more page per
    // index in every commit. So the usual statements leave the indexed columns out of SET and
    // match them in WHERE instead; when one of them really changes, the statement matches no row
    // and the store runs the full rewrite below it. confirm_ticket_hash is matched with IS (NULL
    // on most scenes): it changes once, when a scan in confirm mode sets it (B-confirm-1,
    // B-confirm-2), and a ticket digest never changes after that, so only that write takes the
    // rewrite (which that scan needs anyway: it also cuts expires_at to the ticket's life).
    updateScene: db.prepare(`UPDATE scanauth_scenes SET
      device_id = @deviceId, status = @status, user_id = @userId, created_at = @createdAt,
      authorized_at = @authorizedAt, version = @version, requested_from = @requestedFrom, poll_secret_hash = @pollSecretHash,
      confirm_scanned_by = @confirmScannedBy, confirm_scanned_at = @confirmScannedAt, confirm_csrf_hash = @confirmCsrfHash
      WHERE id = @id AND scene_str = @sceneStr AND expires_at = @expiresAt AND confirm_ticket_hash IS @confirmTicketHash`),
    rewriteScene: db.prepare(`UPDATE scanauth_scenes SET
      scene_str = @sceneStr, device_id = @deviceId, status = @status, user_id = @userId, created_at = @createdAt,
      expires_at = @expiresAt, authorized_at = @authorizedAt, version = @version, requested_from = @requestedFrom,
      poll_secret_hash = @pollSecretHash, confirm_scanned_by = @confirmScannedBy, confirm_scanned_at = @confirmScannedAt,
      confirm_ticket_hash = @confirmTicketHash, confirm_csrf_hash = @confirmCsrfHash
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
    insertLedgerEntry: db.prepare(`INSERT INTO scanauth_ledger
      (user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason)
      VALUES (@userId, @authorizationId, @kind, @points, @remainingPoints, @at, @source, @idempotencyKey, @reason)`),
    insertIdempotency: db.prepare(`INSERT INTO scanauth_idempotency (key, fingerprint, authorization_id, result, created_at)
      VALUES (@key, @fingerprint, @authorizationId, @result, @createdAt)`),

    // The Store contract: a session still live at `at` ends at `at`; one already over keeps its end.
    endSessionByToken: db.prepare(`UPDATE scanauth_sessions SET expires_at = @at WHERE token = @token AND expires_at > @at`),
    endSessionsOfUser: db.prepare(`UPDATE scanauth_sessions SET expires_at = @at WHERE user_id = @userId AND expires_at > @at`),

    // One statement, so atomic on its own against every connection (it takes the write lock for
    // its own autocommit transaction, waiting up to busy_timeout). In the DO UPDATE branch both
    // CASEs read the row as it was: a counter whose expiry has passed (expires_at <= now, the
    // Store contract's boundary) starts again at 1 with the new expiry; a live one counts on and
    // keeps its expiry. A new key inserts 1.
    incrementCounter: db
      .prepare<[CounterParams], number>(`INSERT INTO scanauth_counters (key, count, expires_at) VALUES (@key, 1, @expiresAt)
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN expires_at <= @now THEN 1 ELSE count + 1 END,
        expires_at = CASE WHEN expires_at <= @now THEN excluded.expires_at ELSE expires_at END
      RETURNING count`)
      .pluck(),
    deleteCounter: db.prepare<[string]>(`DELETE FROM scanauth_counters WHERE key = ?`),

    // Keyset pagination over scanauth_scenes_by_expiry: each batch offers at most `limit` expired
    // scenes after the last one offered, leaving out those whose latest session is still needed, so
    // that scenes kept for their sessions never fill a batch and hold up the ones behind them.
    purgeSceneCandidates: db.prepare(`SELECT id, expiresAt, sessionEnd FROM (
        SELECT s.id, s.expires_at AS expiresAt,
          (SELECT x.expires_at FROM scanauth_sessions x WHERE x.scene_id = s.id ORDER BY x.id DESC LIMIT 1) AS sessionEnd
        FROM scanauth_scenes s
        WHERE s.expires_at <= @cutoff AND (s.expires_at, s.id) > (@afterExpiresAt, @afterId)
      )
      WHERE sessionEnd IS NULL OR sessionEnd <= @cutoff
      ORDER BY expiresAt, id
      LIMIT @limit`),
    deleteScene: db.prepare(`DELETE FROM scanauth_scenes WHERE id = ?`),
    purgeSessions: db.prepare(`DELETE FROM scanauth_sessions WHERE id IN
      (SELECT id FROM scanauth_sessions WHERE expires_at <= @cutoff ORDER BY expires_at LIMIT @limit)`),
    purgeCounters: db.prepare(`DELETE FROM scanauth_counters WHERE key IN
      (SELECT key FROM scanauth_counters WHERE expires_at <= @cutoff ORDER BY expires_at LIMIT @limit)`),

    // Orders: their own aggregate, one statement per method (orders.ts). Spread in here so that
    // every check over the store's statements (query-plans.test.ts) sees them too.
    ...prepareOrderStatements(db),
    ...prepareOperatorStatements(db),
    ...prepareActiveStatements(db),
  }
}
