/**
 * What the library hands back to callers: camelCase objects with ISO 8601 timestamps, built from
 * stored records or drafts.
 *
 * @module
 */
import type { AuthorizationStatus, AuthorizationType } from './records'
import type { AuthorizationDraft } from './rules/authorizations'

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
  /** `pending`, `active`, `expired` or `exhausted`. */
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
