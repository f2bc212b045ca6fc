/**
 * The public shape of a scanauth instance: what `createScanAuth` returns, its inputs and results.
 *
 * @module
 */
import type { OrderView, PaymentOutcome, PlanView, PurchaseInput, PurchaseResult, ReconcileOptions, ReconcileResult, RefundOutcome } from '../orders/api'
import type { ProviderRefund, ProviderTransaction } from '../orders/provider'
import type { ConfirmationDecisionInput, ConfirmationDecisionResult, ConfirmationOpenInput, ConfirmationStep } from './confirm-api'
import type { PhoneOrderOpenInput, PhoneOrderStep, PhonePayOpenInput, PhonePayStep, PhonePlanChoice } from '../phone/api'
import type { SendRemindersInput, SendRemindersResult, SubscriptionOutcome, SubscriptionRedirect } from '../reminders/api'
import type { Authorization, AuthorizationSummary, UserInfo } from './views'
import type {
  ConsumeInput,
  ConsumeResult,
  GrantInput,
  LedgerList,
  LedgerPage,
  RequestConsumeInput,
  RequestConsumeResult,
  RevokeInput,
  SessionInfo,
  UserSelector,
} from './entitlement-api'

// The entitlement operations' inputs and results live beside this file; every caller finds them here too.
export type {
  ConsumeInput,
  ConsumeResult,
  GrantInput,
  GrantTarget,
  LedgerList,
  LedgerPage,
  RequestConsumeInput,
  RequestConsumeResult,
  RevokeInput,
  SessionInfo,
  UserSelector,
} from './entitlement-api'

/** Options of a wait. */
export interface WaitOptions {
  /** How long to wait for a change, in milliseconds (1 to 600,000); then the answer is read again as it is. */
  timeoutMs: number
  /** Ends the wait early: the promise rejects with the signal's reason. */
  signal?: AbortSignal
  /**
   * The status the caller already knows (an event stream that sent `scanned`). A wait ends when the
   * scene leaves `pending`; a `scanned` one is news only to a caller that has not seen it
   * (B-confirm-10). Without it, a wait takes the status its first read finds as known.
   */
  seen?: StatusResult['status']
}

/** Input of {@link ScanAuth.createScene}. */
export interface CreateSceneInput {
  /** The device's label (1–128 characters, no control characters); scenes are limited per device. */
  deviceId: string
  /**
   * The address of the client asking (the HTTP handlers pass the framework's: Express `req.ip`, Koa
   * `ctx.ip`), 1–128 characters; scenes are limited per address (an IPv6 address counts as its /64).
   * Without it, only the per-device limit and the daily budget apply.
   */
  clientAddress?: string
}

/** Result of {@link ScanAuth.createScene}. */
export interface CreateSceneResult {
  /** `pc_` and 32 lowercase hex characters; the device polls with it. */
  sceneStr: string
  /** Address of the scannable code, as the platform returned it. */
  qrUrl: string
  /**
   * The text the code encodes, when the QR provider gave it (`QrCode.content`): draw the code from
   * it where an image cannot be shown. Absent otherwise.
   */
  qrContent?: string
  /** Scene lifetime in seconds. */
  expiresIn: number
  /**
   * With `requirePollSecret`: the secret the device presents to read the session token of this scene
   * (`X-Scanauth-Poll-Secret`, B-secret-1…4). Shown once, here; only its digest is stored. Absent otherwise.
   */
  pollSecret?: string
}

/** Options of {@link ScanAuth.getStatus}. */
export interface StatusOptions {
  /**
   * The scene's poll secret (`CreateSceneResult.pollSecret`). A scene created with one answers
   * `authorized` (the answer that carries the session token) only to a call that presents it; without
   * it, or with a wrong one, that answer is refused with `poll_secret_required` (403, B-secret-2).
   */
  pollSecret?: string
}

/** Result of {@link ScanAuth.getStatus}. */
export type StatusResult =
  | {
      /**
       * Waiting for a scan; the scene (or its session) expired; or no current authorization. With
       * `confirm: 'link'` also `scanned` (scanned, waiting for the scanner to confirm on the phone; not
       * final) and `denied` (the scanner refused; final), B-confirm-9.
       */
      status: 'pending' | 'expired' | 'need_purchase' | 'scanned' | 'denied'
    }
  | {
      /** The scene was scanned and the user has a current authorization. */
      status: 'authorized'
      /** The session token created by the scan; present it as `Authorization: Bearer <token>`. */
      sessionToken: string
      /** The user's current authorization. */
      authorization: AuthorizationSummary
    }

/** Input of {@link ScanAuth.handleScan}: one scan event from the platform. */
export interface ScanInput {
  /** The scene carried by the scanned code. */
  sceneStr: string
  /** The platform user identifier (1–128 characters, no control characters). */
  openid: string
}

/** Result of {@link ScanAuth.handleScan}. `userId` is present unless the result is `invalid`. */
export type ScanResult =
  | {
      /** The scan was processed: the user has a current authorization, or needs to purchase one. */
      result: 'authorized' | 'need_purchase'
      /** The user found or created for the openid. */
      userId: number
      /**
       * With `payments.phone`, on `need_purchase`: the scanner's link to buy on this phone,
       * `{phone.url}pay?ticket=…` (B-phone-2). Put it in the reply and nowhere else.
       */
      payUrl?: string
      /**
       * With `reminders` and a one-time subscription, on `authorized`: the scanner's "remind me before
       * it ends" link (WeChat's confirm page, B-remind-6). Put it in the reply.
       */
      remindUrl?: string
    }
  | {
      /**
       * With `confirm: 'link'`: the scene is now `scanned` and waits for the scanner's decision on the
       * confirm page (B-confirm-1); no user, trial or session yet. Reply with `confirmUrl`.
       */
      result: 'scanned'
      /** Not set: nothing is known of the user until the confirmation. */
      userId?: undefined
      /** The device label the scene was created for (raw: escape it where it is shown, see `displayLabel`). */
      deviceId: string
      /** The one-time confirm ticket (B-confirm-2); put it in the link and nowhere else. */
      ticket: string
      /** The confirm page's address with the ticket (`confirmation.url?ticket=…`), when `confirmation.url` is set. */
      confirmUrl?: string
      /** When the ticket, and the scene, expire (epoch ms). */
      expiresAt: number
    }
  | {
      /** Not processed: unknown, already authorized or expired scene (or, with `confirm: 'link'`, already scanned or denied). */
      result: 'invalid'
      /** Never set for an invalid scan. */
      userId?: undefined
    }

/** A scanauth instance. Create one with `createScanAuth`. */
export interface ScanAuth {
  /**
   * Creates a scene for a device: a new scene_str, a QR code from the platform valid for the scene
   * lifetime, and a pending scene stored with its expiry. When the platform fails, throws
   * `ScanAuthError` `qr_creation_failed` (502) and stores nothing. The rate limits are checked first
   * (per device, per client address, the daily QR code budget: B-rate-1…8); over one it throws
   * `rate_limited` (429, with `retryAfterSeconds`) without calling the platform or storing anything.
   */
  createScene(input: CreateSceneInput): Promise<CreateSceneResult>
  /**
   * Answers a device's poll in the decision order of docs/behaviour.md (B-poll-1…5). A pending poll is one read.
   * An unknown scene throws `ScanAuthError` `scene_not_found` (404). Over the scene's poll ceiling
   * (B-rate-9, counted per instance) it throws `rate_limited` (429) before reading the store.
   */
  getStatus(sceneStr: string, options?: StatusOptions): Promise<StatusResult>
  /**
   * Waits for a scene to leave `pending` and answers like {@link ScanAuth.getStatus} as soon as it
   * has (a scan committed by any process through the same store, or the scene's expiry, which a
   * timer at its deadline notices); after `timeoutMs` without a change it answers as the scene is
   * then (`pending`). `signal` ends the wait early (the promise rejects with its reason). An unknown
   * scene throws `scene_not_found` (404) like a poll. One store subscription per instance serves
   * every waiter. With `confirm: 'link'`, a wait that finds the scene `scanned` waits for it to leave
   * `scanned` (B-confirm-10).
   */
  waitForStatus(sceneStr: string, options: WaitOptions & StatusOptions): Promise<StatusResult>
  /**
   * Processes a scan event: the first valid scan of a scene finds or creates the user, grants the
   * free trial once per user, runs the activation step, authorizes the scene and creates a session.
   * Every other scan is `invalid` and changes nothing (except marking an expired scene).
   */
  handleScan(input: ScanInput): Promise<ScanResult>
  /**
   * Grants a time or points authorization (pending, then the activation step runs) and returns it as
   * stored. By `openid`, the user is found or created without claiming the free trial. An unknown
   * `userId` throws `ScanAuthError` `user_not_found` (404).
   */
  grant(input: GrantInput): Promise<Authorization>
  /**
   * Runs the activation step for the session's user, then uses the current authorization: points are
   * decremented atomically, a time authorization is used as is. An unknown or expired session throws
   * `ScanAuthError` `unauthorized` (401).
   */
  consume(input: ConsumeInput): Promise<ConsumeResult>
  /**
   * The consumption of a route guard with points (B-guard-4, B-guard-5): {@link ScanAuth.consume}
   * keyed by the request and bound to its route, telling a first request from a replay of one. A
   * replay spends nothing and answers the first request's result with `replayed: true`; the same key
   * with another scope or other points throws `idempotency_conflict` (409).
   */
  consumeForRequest(input: RequestConsumeInput): Promise<RequestConsumeResult>
  /** The session behind a token, with the user's current authorization; null when unknown or expired. */
  verifySession(token: string): Promise<SessionInfo | null>
  /**
   * A user's ledger: every change to its entitlements, oldest first, paged by `afterId`. An unknown
   * user has an empty ledger.
   */
  listLedger(user: UserSelector, page?: LedgerPage): Promise<LedgerList>
  /**
   * Revokes a `pending` or `active` authorization (status `revoked`) and runs the activation step in
   * the same commit, so the next queued one becomes active. A revoked one is returned unchanged; an
   * unknown id throws `authorization_not_found` (404); an expired or exhausted one `invalid_request`.
   */
  revokeAuthorization(input: RevokeInput): Promise<Authorization>
  /** Ends one session: `true` when a live session was ended, `false` when it was unknown or already over. */
  revokeSession(token: string): Promise<boolean>
  /** Ends every live session of a user ("sign out everywhere") and returns how many it ended. */
  revokeSessions(user: UserSelector): Promise<number>
  /** A user with its current authorization and queue, or null. Never creates a user and never writes. */
  getUser(user: UserSelector): Promise<UserInfo | null>
  /**
   * The plan catalog of `payments.plans`, in its order. Empty when payments are not configured.
   */
  listPlans(): PlanView[]
  /**
   * Opens an order for a plan and answers the code to pay with (B-order-1…4, B-order-12, B-order-13).
   * The buyer is the user a scan bound `sceneStr` to (its device then learns of the payment through
   * the scene's status), while the scene answers `need_purchase` or within 10 minutes of its scan and
   * with its `pollSecret` when it has one; or the user of a live `sessionToken`. An open order of the
   * same user, plan and scene still well before its deadline is reused with a fresh code; the other
   * open orders opened the same way (through that scene, or with a session) are closed at the payment
   * service first, and orders of other scenes stay open. Purchases are limited per user and per
   * `clientAddress` (B-rate-10…12). Throws `payments_not_configured` (404), `plan_not_found` (404),
   * `scene_not_found` (404), `scene_not_scanned` (409), `poll_secret_required` (403),
   * `scene_not_purchasable` (409), `unauthorized` (401), `rate_limited` (429), `purchase_in_progress`
   * (409) or `payment_provider_failed` (502); nothing reaches the payment service before the input
   * checks and the limits pass.
   */
  purchase(input: PurchaseInput): Promise<PurchaseResult>
  /**
   * Applies what the payment service says of an order (a verified notification, or a query): when it
   * is paid and names our merchant, app, order, amount and currency, grants the order's plan exactly
   * once (keyed by the order, across instances and repeated reports) and wakes the scene's device
   * (B-order-5…7). Anything else changes nothing.
   */
  applyPayment(transaction: ProviderTransaction): Promise<PaymentOutcome>
  /**
   * Applies a refund the payment service reports: recorded once per `outRefundNo`; when the refunds
   * reach the order's amount, the authorization the order bought is revoked (B-order-8…9).
   */
  applyRefund(refund: ProviderRefund): Promise<RefundOutcome>
  /**
   * Asks the payment service about every open order opened at least `minAgeSeconds` ago: paid ones
   * are granted, ones past their deadline are closed there and here (B-order-10). Run it from a cron
   * job every few minutes; it is safe to run on several instances at once.
   */
  reconcileOrders(options?: ReconcileOptions): Promise<ReconcileResult>
  /** An order by its id (`out_trade_no`), or null. */
  getOrder(orderId: string): Promise<OrderView | null>
  /**
   * The order a scene's device waits on: the latest open order opened for the scene whose deadline
   * has not passed, or null. While there is one, a `need_purchase` answer is not final for the long
   * poll and the event stream (B-order-7): they wait for the payment.
   */
  openOrderOfScene(sceneStr: string): Promise<OrderView | null>
  /**
   * What a scan means on this instance: `scan` (the default: it signs the device in) or `link`
   * (confirm on the phone). The HTTP handler serves `{base}/confirm` only in `link` mode.
   */
  readonly confirmMode: 'scan' | 'link'
  /**
   * The confirm link, opened (B-confirm-6…8): without an OAuth `code`, answers where to send the
   * phone (WeChat web OAuth, `snsapi_base`); with one, exchanges it for the openid of the person who
   * opened the link, refuses anyone but the scanner, and answers what the confirm page shows with a
   * fresh CSRF token. Throws `confirm_not_configured` (404), `confirm_ticket_invalid` (404),
   * `confirm_ticket_used` (410), `confirm_ticket_expired` (410), `confirm_wrong_user` (403),
   * `confirm_oauth_refused` (400), `confirm_oauth_failed` (502) or `invalid_request` (400); none of
   * them changes anything.
   */
  openConfirmation(input: ConfirmationOpenInput): Promise<ConfirmationStep>
  /**
   * The scanner's decision on the confirm page (B-confirm-7, B-confirm-8): `confirm` runs the whole
   * scan transaction for the scanner (user, free trial, activation step, session) and answers
   * `authorized` or `need_purchase`; `deny` moves the scene to `denied`. The ticket is then used. Throws
   * like {@link ScanAuth.openConfirmation}, and `confirm_csrf_invalid` (403) for a missing or wrong CSRF
   * token; nothing changes then.
   */
  decideConfirmation(input: ConfirmationDecisionInput): Promise<ConfirmationDecisionResult>
  /**
   * Whether this instance sells on the phone that scanned (`payments.phone`): the HTTP handler then
   * serves `{base}/m/pay` and `{base}/m/order`.
   */
  readonly phonePay: boolean
  /**
   * `GET {base}/m/pay`, the plans page on the phone (B-phone-3…5): outside WeChat's browser it answers
   * `open_in_wechat`; without an OAuth `code`, where to send the phone (WeChat web OAuth,
   * `snsapi_base`); with one, the person's current authorization, queue and the plans, with a fresh
   * CSRF token. A `ticket` (from a `need_purchase` scan's link) makes the purchases for that scene's
   * device; it works once, and only for the person who scanned. Throws `phone_not_configured` (404),
   * `phone_ticket_invalid` (404), `phone_ticket_used` (410), `phone_ticket_expired` (410),
   * `phone_wrong_user` (403), `phone_oauth_refused` (400), `phone_oauth_failed` (502),
   * `user_not_found` (404, nobody scanned with that WeChat account yet) or `invalid_request` (400);
   * only the ticket's first use is recorded.
   */
  openPhonePay(input: PhonePayOpenInput): Promise<PhonePayStep>
  /**
   * `POST {base}/m/pay`, a plans page's form (B-phone-5, B-phone-6): with a `plan`, opens (or reuses)
   * the person's JSAPI order, for the ticket's device while it may buy, and answers the signed cashier
   * parameters; without one, the plans again. Throws `phone_csrf_invalid` (403) for a missing,
   * made-up or replaced token, `plan_not_found` (404), and what {@link ScanAuth.purchase} throws
   * (`rate_limited`, `purchase_in_progress`, `payment_provider_failed`); nothing is opened then.
   */
  choosePhonePlan(input: PhonePlanChoice): Promise<PhonePayStep>
  /**
   * `GET {base}/m/order?id=…`, where the cashier goes on `ok` (B-phone-7): after WeChat OAuth, the
   * person's own order only (`phone_wrong_user`, 403, for another's). An open order is looked up at
   * the payment service and, if paid, granted through the same idempotent path as the notification.
   * An order not paid is `order_not_paid` (409), and nothing is granted; WeChat Pay unreachable is
   * `payment_provider_failed` (502).
   */
  openPhoneOrder(input: PhoneOrderOpenInput): Promise<PhoneOrderStep>
  /**
   * One pass of reminders before access ends (`reminders`, B-remind-1…5): every person whose time
   * ends within a lead (everything they hold, queue included), or whose points run low, is told once
   * per authorization and lead, across instances and passes; the claim is stored before the notifier
   * is called. Safe from a cron job on several instances at once. Throws `reminders_not_configured`
   * (404) without the option, `invalid_request` for a bad `now` or `limit`.
   */
  sendReminders(input?: SendRemindersInput): Promise<SendRemindersResult>
  /** Whether this instance offers the "remind me" link (a notifier with a one-time subscription and an address): `{base}/m/subscribed` is then served. */
  readonly reminderSubscription: boolean
  /** The "remind me before it ends" link for `openid` (B-remind-6), or null when none is offered. */
  remindMeUrl(openid: string): Promise<string | null>
  /**
   * WeChat's redirect back from the one-time subscription page to `{base}/m/subscribed` (B-remind-7):
   * a confirmation from a link issued to that person stores one message's worth of consent;
   * `cancel` stores nothing. Throws `subscription_not_configured` (404), `subscription_invalid` (400)
   * or `subscription_state_invalid` (403), storing nothing.
   */
  acceptSubscription(redirect: SubscriptionRedirect): Promise<SubscriptionOutcome>
}
