/**
 * Rows <-> records. Selects run in better-sqlite3's raw mode (a row is an array, in the order of
 * the column lists below): building a record from an array here is cheaper than letting the
 * driver build an object with a property per column and then copying it. Each column list sits
 * beside the tuple type and the mapper that read it, so positions cannot drift apart. Writes bind
 * plain objects whose keys are the named parameters of the statements in `statements.ts`.
 *
 * @module
 */
import { type AuthorizationRecord, type AuthorizationStatus, type AuthorizationType, type IdempotencyRecord, type LedgerEntryRecord, type LedgerKind, type SceneRecord, type SceneStatus, type SessionRecord, type UserAggregate, type UserRecord } from '@scanauth/core'
import { fifoOrder, type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'

/**
 * Scene columns, in the order of {@link SceneRow}. The columns of migration 7 come after `version`:
 * the masked client address (B-confirm-5), the poll secret's digest (B-secret-1), and the
 * confirmation as four columns (B-confirm-1), all NULL on rows written before it.
 */
export const SCENE_COLUMNS = `id, scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version,
  requested_from, poll_secret_hash, confirm_scanned_by, confirm_scanned_at, confirm_ticket_hash, confirm_csrf_hash`

/** A scene row in raw mode. */
export type SceneRow = [
  id: number,
  sceneStr: string,
  deviceId: string,
  status: SceneStatus,
  userId: number | null,
  createdAt: number,
  expiresAt: number,
  authorizedAt: number | null,
  version: number,
  requestedFrom: string | null,
  pollSecretHash: string | null,
  confirmScannedBy: string | null,
  confirmScannedAt: number | null,
  confirmTicketHash: string | null,
  confirmCsrfHash: string | null,
]

/** The record of a scene row. */
export function toScene(r: SceneRow): SceneRecord {
  return {
    id: r[0],
    sceneStr: r[1],
    deviceId: r[2],
    status: r[3],
    userId: r[4],
    createdAt: r[5],
    expiresAt: r[6],
    authorizedAt: r[7],
    requestedFrom: r[9],
    pollSecretHash: r[10],
    // The table's CHECK keeps the four columns whole: with a ticket digest, scanned_by and scanned_at are set.
    confirmation: r[13] === null ? null : { scannedBy: r[11] as string, scannedAt: r[12] as number, ticketHash: r[13], csrfHash: r[14] },
    version: r[8],
  }
}

/** Named parameters of the scene insert and update (`id` is ignored by the insert): the confirmation flattened into its columns. */
export interface SceneParams {
  id: number | null
  sceneStr: string
  deviceId: string
  status: SceneStatus
  userId: number | null
  createdAt: number
  expiresAt: number
  authorizedAt: number | null
  version: number
  requestedFrom: string | null
  pollSecretHash: string | null
  confirmScannedBy: string | null
  confirmScannedAt: number | null
  /** Set whenever the scene is written with a confirmation: the column the ticket lookup searches (B-confirm-2, B-confirm-4). */
  confirmTicketHash: string | null
  confirmCsrfHash: string | null
}

/** A scene (its user already resolved to an id) as statement parameters. */
export function sceneParams(scene: Omit<SceneRecord, 'id'> & { id?: number }): SceneParams {
  const c = scene.confirmation
  return {
    id: scene.id ?? null,
    sceneStr: scene.sceneStr,
    deviceId: scene.deviceId,
    status: scene.status,
    userId: scene.userId,
    createdAt: scene.createdAt,
    expiresAt: scene.expiresAt,
    authorizedAt: scene.authorizedAt,
    version: scene.version,
    // `?? null`: a change set built by hand (plain JavaScript, code older than these fields) may lack
    // them; absent is stored as NULL, as on the rows written before migration 7.
    requestedFrom: scene.requestedFrom ?? null,
    pollSecretHash: scene.pollSecretHash ?? null,
    confirmScannedBy: c?.scannedBy ?? null,
    confirmScannedAt: c?.scannedAt ?? null,
    confirmTicketHash: c?.ticketHash ?? null,
    confirmCsrfHash: c?.csrfHash ?? null,
  }
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

/**
 * The aggregate from the rows of one user, or null for no rows. Rows without an authorization (the
 * LEFT JOIN's row for a user with no active one) are skipped; the rest are put in FIFO order here
 * (createdAt, then id), since the head-of-queue select returns its two parts one after the other.
 */
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
  // Almost always one or two records; the whole queue arrives already in order (a linear pass).
  if (authorizations.length > 1) authorizations.sort(fifoOrder)
  return { user, authorizations }
}

/** Authorization columns, in the order of {@link AuthorizationRow}. */
export const AUTHORIZATION_COLUMNS = 'id, user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at'

/** An authorization row in raw mode. */
export type AuthorizationRow = [
  id: number,
  userId: number,
  type: AuthorizationType,
  status: AuthorizationStatus,
  startAt: number,
  endAt: number | null,
  remainingPoints: number,
  totalPoints: number,
  source: string,
  createdAt: number,
  updatedAt: number,
]

/** The record of an authorization row. */
export function toAuthorization(r: AuthorizationRow): AuthorizationRecord {
  return { id: r[0], userId: r[1], type: r[2], status: r[3], startAt: r[4], endAt: r[5], remainingPoints: r[6], totalPoints: r[7], source: r[8], createdAt: r[9], updatedAt: r[10] }
}

/** Ledger columns, in the order of {@link LedgerRow}. */
export const LEDGER_COLUMNS = 'id, user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason'

/** A ledger row in raw mode. */
export type LedgerRow = [
  id: number,
  userId: number,
  authorizationId: number,
  kind: LedgerKind,
  points: number,
  remainingPoints: number,
  at: number,
  source: string | null,
  idempotencyKey: string | null,
  reason: string | null,
]

/** The record of a ledger row. */
export function toLedgerEntry(r: LedgerRow): LedgerEntryRecord {
  return { id: r[0], userId: r[1], authorizationId: r[2], kind: r[3], points: r[4], remainingPoints: r[5], at: r[6], source: r[7], idempotencyKey: r[8], reason: r[9] }
}

/** Named parameters of the ledger insert. */
export type LedgerParams = Omit<LedgerEntryRecord, 'id'>

/** A ledger entry as statement parameters, its references already resolved to ids. */
export function ledgerParams(entry: NewLedgerEntry, userId: number, authorizationId: number): LedgerParams {
  return {
    userId,
    authorizationId,
    kind: entry.kind,
    points: entry.points,
    remainingPoints: entry.remainingPoints,
    at: entry.at,
    source: entry.source,
    idempotencyKey: entry.idempotencyKey,
    reason: entry.reason,
  }
}

/** Idempotency columns, in the order of {@link IdempotencyRow}. */
export const IDEMPOTENCY_COLUMNS = 'key, fingerprint, authorization_id, result, created_at'

/** An idempotency row in raw mode. */
export type IdempotencyRow = [key: string, fingerprint: string, authorizationId: number | null, result: string | null, createdAt: number]

/** The record of an idempotency row. */
export function toIdempotency(r: IdempotencyRow): IdempotencyRecord {
  return { key: r[0], fingerprint: r[1], authorizationId: r[2], result: r[3], createdAt: r[4] }
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
