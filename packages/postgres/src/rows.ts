/**
 * Rows <-> records. Loads return each record as a JSON array built by the server
 * (`json_build_array`, columns in the order of the lists below), so that one statement can carry
 * every part of a load, and a mapper here turns each array into a record. Each column list sits
 * beside the tuple type and the mapper that read it, so positions cannot drift apart.
 *
 * @module
 */
import pg from 'pg'
import type { QueryConfig } from 'pg'
import type {
  AuthorizationRecord,
  AuthorizationStatus,
  AuthorizationType,
  IdempotencyRecord,
  LedgerEntryRecord,
  LedgerKind,
  SceneRecord,
  SceneStatus,
  SessionRecord,
  UserAggregate,
} from '@scanauth/core'

/**
 * Type parsers for our statements: `bigint` columns (ids, versions, points, counts, fen) as
 * JavaScript numbers. node-postgres reads int8 as a string by default, since it may exceed 2^53;
 * ours never do.
 */
export const NUMBERS: QueryConfig['types'] = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format ?? 'text')) as NonNullable<QueryConfig['types']>['getTypeParser'],
}

/**
 * Scene columns of table alias `x`, in the order of {@link SceneRow}. The columns of migration 3 come
 * after `version`: the masked client address (B-confirm-5), the poll secret's digest (B-secret-1),
 * and the confirmation as four columns (B-confirm-1), all NULL on rows written before it.
 */
export const sceneColumns = (x: string) =>
  `${x}.id, ${x}.scene_str, ${x}.device_id, ${x}.status, ${x}.user_id, ${x}.created_at, ${x}.expires_at, ${x}.authorized_at, ${x}.version, ` +
  `${x}.requested_from, ${x}.poll_secret_hash, ${x}.confirm_scanned_by, ${x}.confirm_scanned_at, ${x}.confirm_ticket_hash, ${x}.confirm_csrf_hash`

/** A scene as a JSON array. */
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
    // scanauth_scenes_confirmation_check keeps the four columns whole: with a ticket digest, scanned_by and scanned_at are set.
    confirmation: r[13] === null ? null : { scannedBy: r[11] as string, scannedAt: r[12] as number, ticketHash: r[13], csrfHash: r[14] },
    version: r[8],
  }
}

/** Session columns of alias `x`, in the order of {@link SessionRow}. */
export const sessionColumns = (x: string) => `${x}.id, ${x}.token, ${x}.user_id, ${x}.device_id, ${x}.scene_id, ${x}.created_at, ${x}.expires_at`

/** A session as a JSON array. */
export type SessionRow = [number, string, number, string, number, number, number]

/** The record of a session row. */
export function toSession(r: SessionRow): SessionRecord {
  return { id: r[0], token: r[1], userId: r[2], deviceId: r[3], sceneId: r[4], createdAt: r[5], expiresAt: r[6] }
}

/** Authorization columns of alias `x`, in the order of {@link AuthorizationRow}. */
export const authorizationColumns = (x: string) =>
  `${x}.id, ${x}.user_id, ${x}.type, ${x}.status, ${x}.start_at, ${x}.end_at, ${x}.remaining_points, ${x}.total_points, ${x}.source, ${x}.created_at, ${x}.updated_at`

/** An authorization as a JSON array. */
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

/** User columns of alias `x`, in the order of {@link UserRow} (without the trailing authorizations). */
export const userColumns = (x: string) => `${x}.id, ${x}.openid, ${x}.created_at, ${x}.last_seen_at, ${x}.has_claimed_free, ${x}.version`

/** A user as a JSON array, its loaded authorizations (already in FIFO order) last. */
export type UserRow = [id: number, openid: string, createdAt: number, lastSeenAt: number, hasClaimedFree: boolean, version: number, authorizations: AuthorizationRow[]]

/** The aggregate of a user row. */
export function toUserAggregate(r: UserRow): UserAggregate {
  return {
    user: { id: r[0], openid: r[1], createdAt: r[2], lastSeenAt: r[3], hasClaimedFree: r[4], version: r[5] },
    authorizations: r[6].map(toAuthorization),
  }
}

/** Ledger columns, in the order of {@link LedgerRow}. */
export const LEDGER_COLUMNS = 'id, user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason'

/** A ledger row (array mode, bigints read as numbers). */
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

/** Idempotency columns of alias `x`, in the order of {@link IdempotencyRow}. */
export const idempotencyColumns = (x: string) => `${x}.key, ${x}.fingerprint, ${x}.authorization_id, ${x}.result, ${x}.created_at`

/** An idempotency record as a JSON array. */
export type IdempotencyRow = [key: string, fingerprint: string, authorizationId: number | null, result: string | null, createdAt: number]

/** The record of an idempotency row. */
export function toIdempotency(r: IdempotencyRow): IdempotencyRecord {
  return { key: r[0], fingerprint: r[1], authorizationId: r[2], result: r[3], createdAt: r[4] }
}
