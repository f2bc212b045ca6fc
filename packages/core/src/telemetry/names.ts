/**
 * The names scanauth's telemetry uses: spans, span attributes, metrics and their attributes. They
 * are part of the public contract (docs/operations.md, "Traces and metrics"): dashboards and alerts
 * are built on them, so a change here is a breaking change.
 *
 * @module
 */

/** The name of every span scanauth starts, by operation. */
export const SPAN = {
  createScene: 'scanauth.create_scene',
  scan: 'scanauth.scan',
  status: 'scanauth.status',
  wait: 'scanauth.wait',
  confirm: 'scanauth.confirm',
  grant: 'scanauth.grant',
  consume: 'scanauth.consume',
  revoke: 'scanauth.revoke',
  purchase: 'scanauth.purchase',
  reminders: 'scanauth.reminders',
} as const

/** Span attributes. None of them ever holds a credential or identifies a person. */
export const ATTR = {
  /** What a scan, a confirmation or a consume came to. */
  result: 'scanauth.result',
  /** The status a poll or a wait answered. */
  status: 'scanauth.status',
  /** Which limit refused a call (`device`, `address`, `budget`, `poll`, `purchase_user`, `purchase_address`), with `error.type` `rate_limited`. */
  limit: 'scanauth.limit',
  /** A failure's `ScanAuthError` code, or the class name of an unexpected error. */
  errorType: 'error.type',
  /** A granted, consumed or revoked authorization's type (`time`, `points`). */
  authorizationType: 'scanauth.authorization.type',
  /** A granted or revoked authorization's status afterwards. */
  authorizationStatus: 'scanauth.authorization.status',
  /** A granted authorization's source (`admin`, `purchase`, or the application's). */
  authorizationSource: 'scanauth.authorization.source',
  /** The plan a purchase opened an order for (a catalog id). */
  plan: 'scanauth.plan',
  /** A reminder's delivery channel (`subscribe`, `template`, `custom`, the notifier's own, or `none`). */
  channel: 'scanauth.reminder.channel',
  /** A reminder's outcome: `sent`, `unreachable`, `retry`, `stop`. */
  outcome: 'scanauth.reminder.outcome',
  /** Who bought: `scene` (a device after `need_purchase`), `session`, or `phone` (the plans page on the phone, B-phone-5). */
  purchaseBy: 'scanauth.purchase.by',
} as const

/** Metric names. */
export const METRIC = {
  scans: 'scanauth.scans',
  logins: 'scanauth.logins',
  confirmations: 'scanauth.confirmations',
  rateLimited: 'scanauth.rate_limited',
  reminders: 'scanauth.reminders',
  scanToDevice: 'scanauth.scan_to_device',
} as const

/** The instrumentation scope of core's tracer and meter. */
export const SCOPE = '@scanauth/core'

/** OpenTelemetry's `SpanStatusCode.ERROR`, a stable constant of the API. */
export const STATUS_ERROR = 2
