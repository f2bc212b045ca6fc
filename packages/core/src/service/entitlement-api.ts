/**
 * The inputs and results of the entitlement operations of a scanauth instance (granting, consuming,
 * the ledger, revocation, sessions): the part of `ScanAuth`'s shape that `service/entitlements.ts`
 * implements.
 *
 * @module
 */
import type { Authorization, LedgerEntry } from './views'

/** A user, by id or by openid (read-only operations never create one). */
export type UserSelector =
  | {
      /** The user's id. */
      userId: number
      /** Not with `userId`. */
      openid?: undefined
    }
  | {
      /** The user's platform identifier. */
      openid: string
      /** Not with `openid`. */
      userId?: undefined
    }

/**
 * Whom a grant is for: an existing user id, or an openid. Unlike the read-only operations, a grant
 * by openid creates the user when it does not exist yet (without the free trial).
 */
export type GrantTarget = UserSelector

/**
 * Input of {@link ScanAuth.grant}. `source` defaults to `admin`; `free` is refused (the free trial
 * comes only from a first scan).
 */
export type GrantInput = GrantTarget & {
  /**
   * Makes the call safe to repeat (a payment notification delivered twice): a repeat with the same
   * key returns the authorization of the first call and changes nothing; the same key with other
   * parameters throws `idempotency_conflict` (409). 1–128 characters, global per store.
   */
  idempotencyKey?: string
} &
  (
    | {
        /** A time authorization. */
        type: 'time'
        /** Its duration in seconds (a positive integer); it starts when it becomes active. */
        durationSeconds: number
        /** Where it came from: `purchase`, `admin` (default) or an application string. */
        source?: string
      }
    | {
        /** A points authorization. */
        type: 'points'
        /** How many points (a positive integer). */
        points: number
        /** Where it came from: `purchase`, `admin` (default) or an application string. */
        source?: string
      }
  )

/** Input of {@link ScanAuth.consume}. */
export interface ConsumeInput {
  /** The session token the device received from its poll. */
  sessionToken: string
  /** Points to spend from a points authorization (a positive integer, default 1); a time authorization ignores it. */
  points?: number
  /**
   * Makes the call safe to repeat (a client retrying after a timeout): a repeat with the same key
   * returns the first call's result and spends nothing; other parameters with the same key throw
   * `idempotency_conflict` (409). 1–128 characters, global per store.
   */
  idempotencyKey?: string
}

/**
 * Input of {@link ScanAuth.consumeForRequest}: one request of a route guarded with points, named by
 * the request's idempotency key and bound to the route (B-guard-5).
 */
export interface RequestConsumeInput {
  /** The session token the request presented. */
  sessionToken: string
  /** Points to spend (a positive integer, default 1). */
  points?: number
  /** The request's key (1–128 characters, global per store): a route guard builds it from the session and the request's header. */
  idempotencyKey: string
  /**
   * What the key is bound to besides the session and the points: a route guard passes the method and
   * the path (`POST /api/export`). The same key with another scope or other points throws
   * `idempotency_conflict` (409). At most 1024 characters.
   */
  scope: string
}

/** Result of {@link ScanAuth.consumeForRequest}. */
export interface RequestConsumeResult {
  /** What the consumption answered: for a replay, what the first request with the key answered. */
  result: ConsumeResult
  /**
   * True when the key was used before with the same session, points and scope: nothing was spent
   * now, and `result` is the first request's. A route must not be served again for free on it (B-guard-5).
   */
  replayed: boolean
}

/** Paging of {@link ScanAuth.listLedger}. */
export interface LedgerPage {
  /** Only entries after this id (the previous page's `nextAfterId`). Default: from the first entry. */
  afterId?: number
  /** At most this many entries, 1–1000. Default 100. */
  limit?: number
}

/** Result of {@link ScanAuth.listLedger}. */
export interface LedgerList {
  /** Entries, oldest first. */
  entries: LedgerEntry[]
  /** Pass as `afterId` for the next page; null when there is no more. */
  nextAfterId: number | null
}

/** Input of {@link ScanAuth.revokeAuthorization}. */
export interface RevokeInput {
  /** The authorization to revoke. */
  authorizationId: number
  /** Why (a refund, a chargeback), recorded on the ledger's `revoke` entry. 1–500 characters. */
  reason?: string
}

/** Result of {@link ScanAuth.consume}. */
export type ConsumeResult =
  | {
      /** The current authorization was used. */
      status: 'ok'
      /** It, after the use (points already decremented). */
      authorization: Authorization
    }
  | {
      /** No current authorization, or fewer points left than asked; nothing was spent. */
      status: 'need_purchase' | 'insufficient_points'
    }

/** Result of {@link ScanAuth.verifySession} for a live session. */
export interface SessionInfo {
  /** The user the session belongs to. */
  userId: number
  /** The device the session was issued to (from its scene). */
  deviceId: string
  /** ISO 8601. */
  expiresAt: string
  /** The user's current authorization after the activation step, or null. */
  authorization: Authorization | null
}
