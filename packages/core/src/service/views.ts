/**
 * What the library hands back to callers: camelCase objects with ISO 8601 timestamps, built from
 * stored records or drafts.
 *
 * @module
 */
import type { AuthorizationRecord, AuthorizationStatus, AuthorizationType, LedgerEntryRecord, LedgerKind, UserRecord } from '../store/records'
import type { AuthorizationDraft } from '../rules/authorizations'

/** The authorization summary of a poll (docs/behaviour.md, B-wire-1, in camelCase). */
export interface AuthorizationSummary {
  /** `time` or `points`. */
  type: AuthorizationType
  /** ISO 8601 end of a time authorization; null when it has no end time (points). */
  endAt: string | null
  /** Points left (0 for time authorizations). */
  remainingPoints: number
}

/** A stored authorization, as `grant`, `consume` and `verifySession` return it. */
export interface Authorization {
  /** Id assigned by the store (increasing). */
  id: number
  /** Owner. */
  userId: number
  /** `time` or `points`. */
  type: AuthorizationType
  /** `pending`, `active`, `expired`, `exhausted` or `revoked`. */
  status: AuthorizationStatus
  /** ISO 8601. */
  startAt: string
  /** ISO 8601, or null for points. */
  endAt: string | null
  /** Points left (0 for time authorizations). */
  remainingPoints: number
  /** Points granted (0 for time authorizations). */
  totalPoints: number
  /** `free` for the free trial; `purchase`, `admin` or an application string. */
  source: string
  /** ISO 8601. */
  createdAt: string
  /** ISO 8601. */
  updatedAt: string
}

/** Epoch milliseconds as an ISO 8601 string. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}

/** The summary of an authorization. */
export function toSummary(a: Pick<AuthorizationDraft, 'type' | 'endAt' | 'remainingPoints'>): AuthorizationSummary {
  return { type: a.type, endAt: a.endAt === null ? null : iso(a.endAt), remainingPoints: a.remainingPoints }
}

/** The full public view of an authorization whose id and owner are known. */
export function toAuthorization(a: AuthorizationDraft, ids: { id: number; userId: number }): Authorization {
  return {
    id: ids.id,
    userId: ids.userId,
    type: a.type,
    status: a.status,
    startAt: iso(a.startAt),
    endAt: a.endAt === null ? null : iso(a.endAt),
    remainingPoints: a.remainingPoints,
    totalPoints: a.totalPoints,
    source: a.source,
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  }
}

/** The public view of a stored authorization. */
export function recordView(a: AuthorizationRecord): Authorization {
  const { id, userId, ...rest } = a
  return toAuthorization({ ...rest, id, changed: false }, { id, userId })
}

/** One entry of a user's ledger, as `listLedger` returns it. */
export interface LedgerEntry {
  /** Increasing id; pass the last one as `afterId` to read on. */
  id: number
  /** The user whose entitlements changed. */
  userId: number
  /** The authorization that changed. */
  authorizationId: number
  /** `grant`, `activate`, `consume`, `expire`, `exhaust` or `revoke`. */
  kind: LedgerKind
  /** Signed change of points: + on a points grant, − on a consumption, 0 otherwise. */
  points: number
  /** The authorization's points after the change. */
  remainingPoints: number
  /** ISO 8601. */
  at: string
  /** The authorization's source, on `grant` entries. */
  source?: string
  /** The idempotency key of the call that made the change, when it had one. */
  idempotencyKey?: string
  /** Why, on a `revoke` entry when the caller gave a reason. */
  reason?: string
}

/** The public view of a ledger entry: optional fields only where they apply. */
export function ledgerView(e: LedgerEntryRecord): LedgerEntry {
  const entry: LedgerEntry = {
    id: e.id,
    userId: e.userId,
    authorizationId: e.authorizationId,
    kind: e.kind,
    points: e.points,
    remainingPoints: e.remainingPoints,
    at: iso(e.at),
  }
  if (e.source !== null) entry.source = e.source
  if (e.idempotencyKey !== null) entry.idempotencyKey = e.idempotencyKey
  if (e.reason !== null) entry.reason = e.reason
  return entry
}

/** A user as `getUser` returns it: read without side effects. */
export interface UserInfo {
  /** Integer id. */
  id: number
  /** Platform user identifier. */
  openid: string
  /** ISO 8601. */
  createdAt: string
  /** ISO 8601: the last processed scan. */
  lastSeenAt: string
  /** Whether the one free trial was granted. */
  hasClaimedFree: boolean
  /** The current authorization at the time of the call by the validity rules, or null. */
  current: Authorization | null
  /** Pending authorizations in activation order (created_at, then id). */
  queue: Authorization[]
}

/** The public view of a user with its current authorization and its queue. */
export function userView(user: UserRecord, current: AuthorizationRecord | null, queue: readonly AuthorizationRecord[]): UserInfo {
  return {
    id: user.id,
    openid: user.openid,
    createdAt: iso(user.createdAt),
    lastSeenAt: iso(user.lastSeenAt),
    hasClaimedFree: user.hasClaimedFree,
    current: current === null ? null : recordView(current),
    queue: queue.map(recordView),
  }
}
