/**
 * The one error class of scanauth and its code map.
 *
 * @module
 */

/** Every error code scanauth raises, with the HTTP status it maps to. */
export const ERROR_STATUS = {
  /** Input failed validation (missing, malformed or over-long fields, invalid JSON). */
  invalid_request: 400,
  /** No session for the presented token, or it has expired. */
  unauthorized: 401,
  /** No scene with that scene_str. */
  scene_not_found: 404,
  /** No user with that id. */
  user_not_found: 404,
  /** No authorization with that id. */
  authorization_not_found: 404,
  /** Payments are not configured (`createScanAuth` without `payments`): there is nothing to buy. */
  payments_not_configured: 404,
  /** No plan with that id in the catalog. */
  plan_not_found: 404,
  /** No order with that id for the session presented (`GET {base}/order`). */
  order_not_found: 404,
  /** Confirm on the phone is not set up (`confirm: 'link'` with `confirmation.url` and `confirmation.oauth`). */
  confirm_not_configured: 404,
  /** No scene carries that confirm ticket (a mistyped or made-up link). */
  confirm_ticket_invalid: 404,
  /** The decision for that ticket was already made (confirmed or denied): a ticket is used once. */
  confirm_ticket_used: 410,
  /** The confirm ticket's time ran out (2 minutes by default); the device shows a new code. */
  confirm_ticket_expired: 410,
  /** The confirm link was opened by someone other than the person who scanned (a forwarded link). */
  confirm_wrong_user: 403,
  /** The confirm form's CSRF token is missing or is not the one of the page last shown. */
  confirm_csrf_invalid: 403,
  /** WeChat refused the OAuth code (unknown, used or expired): open the link again. */
  confirm_oauth_refused: 400,
  /** WeChat could not be asked who opened the link (network, timeout, a 5xx); nothing changed. */
  confirm_oauth_failed: 502,
  /** Paying on the phone is not set up (`payments.phone`): the phone pages are not served. */
  phone_not_configured: 404,
  /** No scene carries that phone ticket (a mistyped or made-up link, B-phone-2). */
  phone_ticket_invalid: 404,
  /** The phone ticket already opened its page: a ticket is used once (B-phone-4). */
  phone_ticket_used: 410,
  /** The phone ticket's time ran out (30 minutes by default); buy from the device or open the plans page. */
  phone_ticket_expired: 410,
  /** A phone page was opened by someone other than the person it serves (a forwarded link, another user's order). */
  phone_wrong_user: 403,
  /** A plans page's CSRF token is missing, made up, or not the one of the page last shown (B-phone-5). */
  phone_csrf_invalid: 403,
  /** WeChat refused the OAuth code of a phone page (unknown, used or expired): open the link again. */
  phone_oauth_refused: 400,
  /** WeChat could not be asked who opened a phone page (network, timeout, a 5xx); nothing changed. */
  phone_oauth_failed: 502,
  /** Reminders are not configured (`createScanAuth` without `reminders`). */
  reminders_not_configured: 404,
  /** Reminders with a one-time subscription are not set up: `{base}/m/subscribed` is not served. */
  subscription_not_configured: 404,
  /** WeChat's subscription redirect names a template or scene this server did not offer; nothing was stored. */
  subscription_invalid: 400,
  /** The subscription redirect's `reserved` state was not issued to that person, or was used already; nothing was stored. */
  subscription_state_invalid: 403,
  /**
   * The order page was asked about an order WeChat Pay does not report paid (a cashier's `ok` is never
   * proof, B-phone-7): nothing was granted. It may be asked again once the payment goes through.
   */
  order_not_paid: 409,
  /**
   * The scene was created with a poll secret (`requirePollSecret`) and the call did not present it:
   * the answer that carries the session token is given only with it (B-secret-2), and a purchase
   * through the scene is made only with it (B-order-13).
   */
  poll_secret_required: 403,
  /** The path is ours but the method is not. */
  method_not_allowed: 405,
  /**
   * A JSON route got a body that is not `application/json` (a form, `text/plain`, or no content
   * type): refused before it is read, so that a page of another site cannot make its visitors'
   * browsers call the route with a simple cross-site request (B-wire-6).
   */
  unsupported_media_type: 415,
  /**
   * A purchase through a scene that no scan has bound to a user yet: there is no buyer. Scan first;
   * the device learns `need_purchase` from its poll, then buys.
   */
  scene_not_scanned: 409,
  /**
   * A purchase through a scene that no longer serves a buying device (B-order-12): its user has a
   * current authorization and its scan was more than 10 minutes ago. Nothing was opened or closed.
   * The device holds the scene's session then: it buys with that session instead.
   */
  scene_not_purchasable: 409,
  /**
   * Another purchase of the same user is being opened right now (two taps, two devices); nothing
   * was opened by this call. Try again in a moment: the order it opens is then reused.
   */
  purchase_in_progress: 409,
  /** The idempotency key was already used for a call with other parameters; nothing was changed. */
  idempotency_conflict: 409,
  /**
   * Too many requests: a scene-creation limit (per device, per client address, the daily QR code
   * budget), a scene's poll ceiling, or a purchase limit (per user, per client address) was reached.
   * `retryAfterSeconds` says when to try again; nothing was changed and neither the platform nor the
   * payment service was called.
   */
  rate_limited: 429,
  /** An unexpected failure inside scanauth or its store. */
  internal_error: 500,
  /**
   * The options given to `createScanAuth` are invalid (a missing store, a negative lifetime). A mistake
   * in the application's code, thrown at start-up; it has no HTTP meaning, and 500 is what it would be
   * if it ever reached a response: the server, not the client, is at fault.
   */
  invalid_options: 500,
  /**
   * The payment service failed or could not be reached while opening, reusing or closing an order.
   * No second chargeable order was opened; the purchase may be repeated.
   */
  payment_provider_failed: 502,
  /** The messaging platform could not create the QR code. */
  qr_creation_failed: 502,
  /** Too many concurrent writers on one scene or user; nothing was changed, the call may be repeated. */
  conflict: 503,
} as const

/** A code of {@link ERROR_STATUS}. */
export type ScanAuthErrorCode = keyof typeof ERROR_STATUS

/**
 * The error scanauth throws for anything a caller can act on. `code` is stable and machine-readable,
 * `status` is the HTTP status the HTTP handler answers with, and `message` becomes the `detail` of the
 * error body.
 *
 * @example
 * ```ts
 * try { await auth.getStatus(scene) } catch (e) {
 *   if (e instanceof ScanAuthError && e.code === 'scene_not_found') { ... }
 * }
 * ```
 */
export class ScanAuthError extends Error {
  /** Machine-readable code, e.g. `scene_not_found`. */
  readonly code: ScanAuthErrorCode
  /** HTTP status for this code. */
  readonly status: number
  /**
   * For `rate_limited`: whole seconds (at least 1) until the limit that refused the call lets a call
   * through again; the HTTP handler sends it as `Retry-After`. `undefined` for every other code.
   */
  readonly retryAfterSeconds: number | undefined

  constructor(code: ScanAuthErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined)
    this.name = 'ScanAuthError'
    this.code = code
    this.status = ERROR_STATUS[code]
    this.retryAfterSeconds = options?.retryAfterSeconds
  }
}
