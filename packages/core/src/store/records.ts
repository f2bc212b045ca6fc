/**
 * The stored records: what a {@link Store} keeps, exactly as the resources of
 * docs/behaviour.md, plus the optimistic-concurrency `version` of each aggregate.
 *
 * All timestamps are epoch milliseconds taken from the injected clock. Public results of
 * `createScanAuth` turn them into ISO 8601 strings (see `views.ts`).
 *
 * @module
 */

/**
 * Status of a scene. `scanned` and `denied` are entered only with `confirm: 'link'` (confirm on the
 * phone, docs/behaviour.md B-confirm-1…12): a scan moves `pending → scanned`, the scanner's decision
 * moves it on to `authorized` or to `denied` (final). By default a scan authorizes at once.
 */
export type SceneStatus = 'pending' | 'scanned' | 'authorized' | 'expired' | 'denied'

/**
 * What a scan in `confirm: 'link'` mode remembers on its scene (B-confirm-1): who scanned, and the
 * SHA-256 digests (base64url) of the one-time confirm ticket and of the confirm page's CSRF token.
 * The secrets themselves are never stored.
 */
export interface SceneConfirmation {
  /** The openid of the scan; only this person may confirm or deny. */
  scannedBy: string
  /** When the scan was handled. */
  scannedAt: number
  /** Digest of the ticket in the confirm link; stores find the scene by it (`LoadQuery.confirmTicketHash`). */
  ticketHash: string
  /** Digest of the CSRF token of the page last shown to the scanner; null until the page is opened. */
  csrfHash: string | null
}

/** Kind of an authorization: a time window, or a number of points. */
export type AuthorizationType = 'time' | 'points'

/**
 * Status of an authorization. At most one per user is `active`; `pending` ones wait in FIFO order.
 * `revoked` is our extension: an authorization withdrawn by the application (a refund), never
 * active again (docs/behaviour.md, B-revoke-1…4).
 */
export type AuthorizationStatus = 'pending' | 'active' | 'expired' | 'exhausted' | 'revoked'

/** A scene: one QR code a device asked for, waiting for its first scan. */
export interface SceneRecord {
  /** Integer id assigned by the store, increasing. */
  id: number
  /** `pc_` followed by 32 lowercase hexadecimal characters. Unique. */
  sceneStr: string
  /** The device that asked for the scene. */
  deviceId: string
  /** Where the scene is in its lifecycle. */
  status: SceneStatus
  /** The user whose scan was processed; null until then. */
  userId: number | null
  /** When the scene was created. */
  createdAt: number
  /** createdAt plus the scene lifetime. The scene is expired once `now >= expiresAt`. */
  expiresAt: number
  /** When its first valid scan was processed; null until then. */
  authorizedAt: number | null
  /**
   * The address of the client that asked for the scene, masked (`203.0.113.*`, `2001:db8:1::*`), for
   * the confirm page; null when unknown (B-confirm-5).
   */
  requestedFrom: string | null
  /** SHA-256 digest (base64url) of the scene's poll secret with `requirePollSecret`; null otherwise (B-secret-1…4). */
  pollSecretHash: string | null
  /** The confirm-on-the-phone state; null unless a scan moved the scene to `scanned`. */
  confirmation: SceneConfirmation | null
  /** Bumped by every write of the scene; commits check it. */
  version: number
}

/** A platform user, found by openid or created on the first scan. */
export interface UserRecord {
  /** Integer id assigned by the store, increasing. */
  id: number
  /** Platform user identifier. Unique. */
  openid: string
  /** When the user was first seen. */
  createdAt: number
  /** Refreshed by every processed scan. */
  lastSeenAt: number
  /** Set to true exactly once, when the free authorization is granted. */
  hasClaimedFree: boolean
  /** Bumped by every write of the user or of any of its authorizations; commits check it. */
  version: number
}

/** A time or points authorization owned by a user. */
export interface AuthorizationRecord {
  /** Integer id assigned by the store, increasing. */
  id: number
  /** Owner. */
  userId: number
  /** `time` or `points`. */
  type: AuthorizationType
  /** Where it is in its lifecycle. */
  status: AuthorizationStatus
  /** Start of a time authorization (reset on activation); creation time for points. */
  startAt: number
  /** End of a time authorization; null for points. Invalid once `now >= endAt`. */
  endAt: number | null
  /** Points left; 0 for time authorizations. */
  remainingPoints: number
  /** Points granted; 0 for time authorizations. */
  totalPoints: number
  /** `free` for the free trial; `purchase`, `admin` or an application string otherwise. */
  source: string
  /** FIFO order of pending authorizations, ties broken by lower id. */
  createdAt: number
  /** Last change. */
  updatedAt: number
}

/** A session issued when a scan is processed; the device receives its token on the next poll. */
export interface SessionRecord {
  /** Integer id assigned by the store, increasing. */
  id: number
  /** URL-safe random string from 32 CSPRNG bytes. */
  token: string
  /** The user the scan bound the session to. */
  userId: number
  /** Copied from the scene. */
  deviceId: string
  /** The scene that produced the session. */
  sceneId: number
  /** When the scan created it. */
  createdAt: number
  /** createdAt plus the session lifetime. Expired once `now >= expiresAt`. */
  expiresAt: number
}

/**
 * A user with the authorizations the rules can act on: every `active` one and the head of the
 * queue (the first `pending` one by createdAt, then id), or every `pending` one when the load asked
 * for the whole queue. The activation step activates at most one pending authorization, always the
 * head, so the head is all it needs: a user's load costs the same however long the queue grows.
 * Retired (expired, exhausted, revoked) authorizations stay stored but are not loaded.
 */
export interface UserAggregate {
  /** The user. */
  user: UserRecord
  /** Its `active` authorizations and the head of its queue (or the whole queue), by createdAt then id. */
  authorizations: AuthorizationRecord[]
}

/** What a ledger entry records (docs/behaviour.md, B-ledger-1…5). */
export type LedgerKind = 'grant' | 'activate' | 'consume' | 'expire' | 'exhaust' | 'revoke'

/**
 * One entry of the append-only ledger: a change to one authorization of one user, written in the
 * same atomic commit as the change itself.
 */
export interface LedgerEntryRecord {
  /** Integer id assigned by the store, increasing. */
  id: number
  /** The user whose entitlements changed. */
  userId: number
  /** The authorization that changed. */
  authorizationId: number
  /** What happened to it. */
  kind: LedgerKind
  /** Signed change of its points: + on a points grant, − on a consumption, 0 otherwise. */
  points: number
  /** Its points after the change. */
  remainingPoints: number
  /** When, from the service's clock. */
  at: number
  /** The authorization's source, on `grant` entries; null otherwise. */
  source: string | null
  /** The idempotency key of the call that made the change, when it had one; null otherwise. */
  idempotencyKey: string | null
  /** Why, on `revoke` entries when the caller said; null otherwise. */
  reason: string | null
}

/**
 * An idempotency key in use: what the first call with it did, so that a repeat answers the same
 * and changes nothing. Keys are global per store (grant and consume share one namespace).
 */
export interface IdempotencyRecord {
  /** The caller's key, 1–128 characters. */
  key: string
  /** A digest of the first call's operation and parameters; a repeat must match it. */
  fingerprint: string
  /** The authorization a `grant` created; null for a `consume`. */
  authorizationId: number | null
  /** The JSON result of a `consume`; null for a `grant`. */
  result: string | null
  /** When the first call committed. */
  createdAt: number
}

/**
 * Status of an order (docs/behaviour.md, B-order-1…10): `open` until the payment service reports it
 * paid (`paid`), it is closed unpaid or replaced (`closed`), or a full refund takes it back
 * (`refunded`). Only `open` orders are ever listed by {@link OrderRecord.status}.
 */
export type OrderStatus = 'open' | 'paid' | 'closed' | 'refunded'

/** How an order is paid (docs/behaviour.md, B-phone-1): a Native code, or JSAPI inside WeChat. */
export type OrderChannel = 'native' | 'jsapi'

/** One refund applied to an order, as the payment service reported it. */
export interface OrderRefundRecord {
  /** Our refund number (`out_refund_no`). */
  outRefundNo: string
  /** The payment service's refund id. */
  refundId: string
  /** Refunded by this refund, in fen. */
  amountFen: number
  /** When it was applied, from the service's clock. */
  at: number
}

/** What a paid order grants: a copy of its plan's grant taken when the order was opened. */
export type OrderGrant =
  | {
      /** Access for a time. */ type: 'time'
      /** How many days. */ days: number
    }
  | {
      /** Points, one used per use. */ type: 'points'
      /** How many points. */ points: number
    }

/**
 * An order: one purchase attempt of one plan by one user, known to the payment service by its
 * `outTradeNo`. Its own aggregate with its own version; the grant a payment makes is keyed by the
 * order (`order:<outTradeNo>`) so that it happens exactly once however often the payment arrives.
 */
export interface OrderRecord {
  /** Our order id, sent to the payment service as `out_trade_no`; `SA` + 26 characters. Unique. */
  outTradeNo: string
  /** The buyer. */
  userId: number
  /** The plan bought, by id. */
  planId: string
  /** The plan's description when the order was opened (sent to the payment service). */
  description: string
  /** The price in fen when the order was opened. */
  amountFen: number
  /** What the plan granted when the order was opened. */
  grant: OrderGrant
  /** The scene whose device waits for this payment; null for a purchase made with a session. */
  sceneStr: string | null
  /**
   * How it is paid: `native`, a code the device shows and another phone scans; `jsapi`, WeChat's
   * cashier on the phone of the buyer the phone page identified (B-phone-1). Orders stored before
   * the channel was recorded read as `native`.
   */
  channel: OrderChannel
  /** Where it is in its lifecycle. */
  status: OrderStatus
  /** When it was opened. */
  createdAt: number
  /** The payment deadline sent to the payment service (`time_expire`). */
  expiresAt: number
  /** Last change. */
  updatedAt: number
  /** When the payment was applied; null until then. */
  paidAt: number | null
  /** The payment service's transaction id, once paid. */
  transactionId: string | null
  /** The authorization the payment granted, once paid. */
  authorizationId: number | null
  /** Refunded so far, in fen. */
  refundedFen: number
  /** The refunds applied, oldest first (their `outRefundNo` makes a repeated notice harmless). */
  refunds: OrderRefundRecord[]
  /** Bumped by every write of the order; {@link Store.saveOrder} checks it. */
  version: number
}
