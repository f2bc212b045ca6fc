/**
 * The public shapes of the client: options and results, camelCase (the wire is snake_case; see
 * `wire.ts`). Timestamps are ISO 8601 strings, as on the wire.
 *
 * @module
 */

/** How the client waits for a scene to change: the event stream, the long poll, or the plain poll. */
export type Transport = 'events' | 'long-poll' | 'poll'

/**
 * The `transport` option: `'auto'` starts with the event stream and falls back to the long poll when
 * the stream is refused or silent, then to the plain poll; the others force one transport.
 */
export type TransportOption = 'auto' | Transport

/** A user's current authorization (docs/behaviour.md B-wire-1). */
export interface AuthorizationSummary {
  /** A time window or a number of points. */
  type: 'time' | 'points'
  /** When a time authorization ends (ISO 8601); null for points. */
  endAt: string | null
  /** Points left (0 for a time authorization). */
  remainingPoints: number
}

/** A QR code to show: the first one of a sign-in, or a refresh. */
export interface SceneCode {
  /** The scene the code belongs to. */
  sceneStr: string
  /** The address of the code's image (WeChat's `showqrcode`), for an `<img>`. */
  qrUrl: string
  /**
   * The text the code encodes, for drawing it yourself (a terminal, a canvas): the server's
   * `qr_content`, or `qrUrl` when the server does not send it.
   */
  qrContent: string
  /** When the code stops working (ISO 8601, from the server's `expires_in` and this device's clock). */
  expiresAt: string
  /** 0 for the first code, 1 for the first refresh, and so on. */
  refresh: number
}

/**
 * A scene's status as the server sends it (docs/behaviour.md, wire shapes):
 *
 * - `pending`: waiting for the scan.
 * - `scanned` (servers with `confirm: 'link'` only; not final): the code was scanned and the server
 *   waits for the scanner to confirm on the phone. Show "confirm on your phone"; the wait goes on.
 * - `authorized`, `need_purchase`, `denied` (servers with `confirm: 'link'` only), `expired`: final
 *   for a sign-in (an expired code is replaced within `maxRefreshes`).
 *
 * Typed open (`string & {}`): a newer server may send a status this client does not know yet.
 */
export type SceneStatus = 'pending' | 'scanned' | 'authorized' | 'need_purchase' | 'denied' | 'expired' | (string & {})

/** A status the client read while waiting, for a status line. */
export interface StatusUpdate {
  /** The scene it is about. */
  sceneStr: string
  /** The status as the server sent it: `pending`, `scanned`, `authorized`, `need_purchase`, `denied`, `expired`, … */
  status: SceneStatus
  /** How it arrived. */
  transport: Transport
}

/** The successful end of a sign-in: the device holds a session. */
export interface SignInAuthorized {
  /** Authorized. */
  status: 'authorized'
  /** The scene that was scanned. */
  sceneStr: string
  /** The session token: send it as `Authorization: Bearer <token>`. */
  sessionToken: string
  /** The user's current authorization. */
  authorization: AuthorizationSummary
}

/** The user scanned but has no current authorization: offer the plans, then `purchase({ sceneStr })`. */
export interface SignInNeedPurchase {
  /** Needs a purchase. */
  status: 'need_purchase'
  /** The scanned scene: pass it to `purchase`. */
  sceneStr: string
}

/**
 * The scanner refused on the phone (a server with `confirm: 'link'`): the device is not signed in.
 * Not an error, and the code is not replaced: say so, and offer a new sign-in.
 */
export interface SignInDenied {
  /** Denied by the scanner. */
  status: 'denied'
  /** The scene that was scanned and denied. */
  sceneStr: string
}

/** What `signIn` resolves with. */
export type SignInResult = SignInAuthorized | SignInNeedPurchase | SignInDenied

/** The options of `signIn`. */
export interface SignInOptions {
  /** A label for this device (1–128 characters), chosen by the app; the server rate-limits per device id. */
  deviceId: string
  /** Called with the first code and with each refresh: show it, replacing the previous one. */
  onCode(code: SceneCode): void
  /**
   * Called with each status read while waiting: `pending`, then (on a server with `confirm: 'link'`)
   * `scanned` while the scanner confirms on the phone, then the final one.
   */
  onStatus?(update: StatusUpdate): void
  /** Aborting it rejects the sign-in at once with `aborted` and cancels every request. */
  signal?: AbortSignal
  /** How many times an expired code is replaced by a new one before rejecting with `expired`. Default 3. */
  maxRefreshes?: number
  /** How to wait. Default `'auto'`. */
  transport?: TransportOption
  /** Milliseconds between plain polls. Default 2000. */
  pollIntervalMs?: number
}

/** What `getSession` resolves with for a live session. */
export interface SessionInfo {
  /** The user the session belongs to. */
  userId: number
  /** The device the session was issued to. */
  deviceId: string
  /** When the session ends (ISO 8601). */
  expiresAt: string
  /** The user's current authorization, or null when there is none. */
  authorization: AuthorizationSummary | null
}

/** What `consume` resolves with. */
export type ConsumeResult =
  | {
      /** The points were taken (or the time authorization is current). */
      status: 'ok'
      /** The authorization after the call. */
      authorization: AuthorizationSummary
    }
  | {
      /** No current authorization. */
      status: 'need_purchase'
      /** Where to buy, when the server is configured with one. */
      purchaseUrl?: string
    }
  | {
      /** Fewer points left than asked for; nothing was taken. */
      status: 'insufficient_points'
    }

/** What a plan grants. */
export type PlanGrant =
  | {
      /** A time window. */
      type: 'time'
      /** Its length in days. */
      days: number
    }
  | {
      /** A number of points. */
      type: 'points'
      /** How many. */
      points: number
    }

/** One plan of the catalog (`GET plans`). */
export interface Plan {
  /** Pass it to `purchase`. */
  id: string
  /** What to show. */
  description: string
  /** The price in fen (1990 is ¥19.90). */
  amountFen: number
  /** What it grants. */
  grant: PlanGrant
}

/** The pay code of an order, for `purchase`'s `onCode`. */
export interface OrderCode {
  /** The order's id. */
  orderId: string
  /** WeChat Pay's `code_url` (`weixin://wxpay/…`): draw it as a QR code for the phone to pay. */
  codeUrl: string
  /** The amount in fen. */
  amountFen: number
  /** The order's deadline (ISO 8601): the purchase rejects with `expired` when it passes unpaid. */
  expiresAt: string
  /**
   * True when the person who scanned this scene got a link in WeChat to buy on that phone (the
   * server's `phone_link`, a server with `payments.phone`): the device keeps showing this code and may
   * say "The phone that scanned got a link to buy there". Paid there or here, the purchase resolves the
   * same way. Always false for a session purchase, and with a server without it.
   */
  phoneLink: boolean
}

/** Who buys: the scene a `need_purchase` sign-in returned, or a live session. */
export type PurchaseBuyer =
  | {
      /** The scene of a `need_purchase` sign-in. */
      sceneStr: string
      /** Not with `sceneStr`. */
      sessionToken?: undefined
    }
  | {
      /** A live session's token. */
      sessionToken: string
      /** Not with `sessionToken`. */
      sceneStr?: undefined
    }

/** The options of `purchase`. */
export type PurchaseOptions = PurchaseBuyer & {
  /** A plan id from `listPlans`. */
  plan: string
  /** Called with the order's pay code. */
  onCode(code: OrderCode): void
  /** Aborting it rejects at once with `aborted` (the order stays open at the server until its deadline). */
  signal?: AbortSignal
  /** Called with each status read while waiting on a scene purchase. */
  onStatus?(update: StatusUpdate): void
  /** How to wait on a scene purchase. Default `'auto'`. */
  transport?: TransportOption
  /** Milliseconds between plain polls (and between order checks of a session purchase). Default 2000. */
  pollIntervalMs?: number
}

/** What `purchase` resolves with once the order is paid. */
export interface PurchaseResult {
  /** Authorized. */
  status: 'authorized'
  /**
   * The order this purchase opened (the one `onCode` showed). When the person paid on the phone that
   * scanned instead (`phoneLink`), the phone's order is the one paid and this one was closed.
   */
  orderId: string
  /** The scene of a scene purchase; undefined for a session purchase. */
  sceneStr: string | undefined
  /** The session token: the scene's new session, or the session that bought. */
  sessionToken: string
  /** The user's current authorization after the payment. */
  authorization: AuthorizationSummary
}
