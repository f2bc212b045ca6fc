/**
 * Rows <-> records. Selects run in better-sqlite3's raw mode (a row is an array, in the order of
 * the column lists below): building a record from an array here is cheaper than letting the
 * driver build an object with a property per column and then copying it. Each column list sits
 * beside the tuple type and the mapper that read it, so positions cannot drift apart. Writes bind
 * plain objects whose keys are the named parameters of the statements in `statements.ts`.
 *
 * @module
 */
import type {
  AuthorizationRecord,
  AuthorizationStatus,
  AuthorizationType,
  NewAuthorization,
  SceneRecord,
  SceneStatus,
  SessionRecord,
  UserAggregate,
  UserRecord,
} from '@scanauth/core'

/** Scene columns, in the order of {@link SceneRow}. */
export const SCENE_COLUMNS = 'id, scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version'

/** A scene row in raw mode. */
export type SceneRow = [number, string, string, SceneStatus, number | null, number, number, number | null, number]

/** The record of a scene row. */
export function toScene(r: SceneRow): SceneRecord {
  return { id: r[0], sceneStr: r[1], deviceId: r[2], status: r[3], userId: r[4], createdAt: r[5], expiresAt: r[6], authorizedAt: r[7], version: r[8] }
}

/** Session columns, in the order of {@link SessionRow}. */
export const SESSION_COLUMNS = 'id, token, user_id, device_id, scene_id, created_at, expires_at'

/** A session row in raw mode. */
export type SessionRow = [number, string, number, string, number, number, number]

/** The record of a session row. */
export function toSession(r: SessionRow): SessionRecord {
  return { id: r[0], token: r[1], userId: r[2], deviceId: r[3], sceneId: r[4], createdAt: r[5], expiresAt: r[6] }
}

/**
 * User columns (`u`) followed by those of one joined authorization (`a`), in the order of
 * {@link UserJoinRow}. The join is a LEFT JOIN: a user without live authorizations gives one row
 * whose authorization columns are all null.
 */
export const USER_WITH_AUTHORIZATION_COLUMNS = `u.id, u.openid, u.created_at, u.last_seen_at, u.has_claimed_free, u.version,
  a.id, a.type, a.status, a.start_at, a.end_at, a.remaining_points, a.total_points, a.source, a.created_at, a.updated_at`

/** One row of the user-with-authorizations select in raw mode. */
export type UserJoinRow = [
  id: number,
  openid: string,
  createdAt: number,
  lastSeenAt: number,
  hasClaimedFree: number,
  version: number,
  aId: number | null,
  aType: AuthorizationType,
  aStatus: AuthorizationStatus,
  aStartAt: number,
  aEndAt: number | null,
  aRemainingPoints: number,
  aTotalPoints: number,
  aSource: string,
  aCreatedAt: number,
  aUpdatedAt: number,
]

/** The aggregate from the rows of one user (already in FIFO order), or null for no rows. */
export function toUserAggregate(rows: readonly UserJoinRow[]): UserAggregate | null {
  const first = rows[0]
  if (first === undefined) return null
  const userId = first[0]
  const user: UserRecord = { id: userId, openid: first[1], createdAt: first[2], lastSeenAt: first[3], hasClaimedFree: first[4] === 1, version: first[5] }
  const authorizations: AuthorizationRecord[] = []
  for (const r of rows) {
    if (r[6] === null) continue
    authorizations.push({
      id: r[6],
      userId,
      type: r[7],
      status: r[8],
      startAt: r[9],
      endAt: r[10],
      remainingPoints: r[11],
      totalPoints: r[12],
      source: r[13],
      createdAt: r[14],
      updatedAt: r[15],
    })
  }
  return { user, authorizations }
}

/** Named parameters of the user insert and update (`id` is ignored by the insert). */
export interface UserParams {
  id: number | null
  openid: string
  createdAt: number
  lastSeenAt: number
  hasClaimedFree: 0 | 1
  version: number
}

/** A user as statement parameters: SQLite has no boolean, so `hasClaimedFree` becomes 0/1. */
export function userParams(user: Omit<UserRecord, 'id'> & { id?: number }): UserParams {
  return {
    id: user.id ?? null,
    openid: user.openid,
    createdAt: user.createdAt,
    lastSeenAt: user.lastSeenAt,
    hasClaimedFree: user.hasClaimedFree ? 1 : 0,
    version: user.version,
  }
}

/** Named parameters of the authorization insert and update (`id` is ignored by the insert). */
export type AuthorizationParams = Omit<AuthorizationRecord, 'id'> & { id: number | null }

/** An authorization as statement parameters, owned by `userId` whatever the record says. */
export function authorizationParams(a: NewAuthorization & { id?: number }, userId: number): AuthorizationParams {
  return {
    id: a.id ?? null,
    userId,
    type: a.type,
    status: a.status,
    startAt: a.startAt,
    endAt: a.endAt,
    remainingPoints: a.remainingPoints,
    totalPoints: a.totalPoints,
    source: a.source,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  }
}
