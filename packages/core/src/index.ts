/**
 * `@scanauth/core`: scan a QR code in WeChat to authorize a device. This is the door an application
 * imports; its types name no Node module and no Node global, so it type-checks in a browser, edge,
 * Deno or Bun project without `@types/node`. Two more doors serve other audiences:
 * `@scanauth/core/store` (the Store contract and what store authors share) and
 * `@scanauth/core/node` (Node `http` plumbing for framework adapters). docs/architecture.md
 * draws them.
 *
 * - {@link createScanAuth}: the service (scenes, scans, the free trial, grants, consumption, sessions).
 * - {@link MemoryStore}, and the {@link Store} type that `@scanauth/sqlite`, `@scanauth/redis` and
 *   `@scanauth/postgres` implement.
 * - {@link createHttpHandler}: the routes of docs/behaviour.md as one framework-neutral function.
 * - {@link createFetchHandler}: the same routes as a Fetch-standard `(Request) => Promise<Response>`.
 * - {@link requireSessionFetch} and {@link requireAuthorizationFetch}: guards for an app's own Fetch
 *   routes (Hono, Next.js), over the framework-neutral {@link createRouteGuard}.
 * - {@link ScanAuthError}: the one error class, with a stable `code` and an HTTP `status`.
 * - OpenTelemetry spans and metrics when `@opentelemetry/api` is installed (an optional peer
 *   dependency; {@link TelemetryOptions}, docs/operations.md "Traces and metrics").
 *
 * @packageDocumentation
 */
export { createScanAuth } from './service/create-scan-auth'
export type {
  ScanAuth,
  CreateSceneInput,
  CreateSceneResult,
  StatusResult,
  ScanInput,
  ScanResult,
  GrantInput,
  GrantTarget,
  ConsumeInput,
  ConsumeResult,
  RequestConsumeInput,
  RequestConsumeResult,
  SessionInfo,
  UserSelector,
  LedgerPage,
  LedgerList,
  RevokeInput,
  StatusOptions,
  WaitOptions,
} from './service/api'
export type {
  WebOAuthProvider,
  ConfirmationOptions,
  ConfirmationOpenInput,
  ConfirmationStep,
  ConfirmationView,
  ConfirmationDecisionInput,
  ConfirmationDecisionResult,
} from './service/confirm-api'
export { displayLabel, maskAddress, DEFAULT_CONFIRM_TICKET_TTL_SECONDS } from './rules/confirm'
export type {
  PhonePayOptions,
  PhonePayOpenInput,
  PhonePlanChoice,
  PhoneOrderOpenInput,
  PhonePayView,
  PhoneCashier,
  PhoneOrderView,
  PhoneEntryStep,
  PhonePayStep,
  PhoneOrderStep,
} from './phone/api'
export { DEFAULT_PHONE_TICKET_TTL_MINUTES, isWeChatBrowser } from './rules/phone'
export type {
  ReminderOptions,
  ReminderSubscription,
  ReminderMessage,
  ReminderDelivery,
  ReminderNotifier,
  SendRemindersInput,
  SendRemindersResult,
  SubscriptionRedirect,
  SubscriptionOutcome,
} from './reminders/api'
export { MAX_WAIT_MS } from './service/scene-waiters'
export type { ScanAuthOptions, ScanAuthHooks, RateLimitOptions } from './service/options'
export type { TelemetryOptions, TelemetryTracer, TelemetryMeter, TelemetryCounter, TelemetryHistogram, TelemetrySpan, TelemetryAttributes, TelemetryAttributeValue } from './telemetry/types'
export type {
  PlanGrant,
  Plan,
  PaymentProvider,
  PaymentMerchant,
  ProviderOrderRequest,
  ProviderJsapiOrderRequest,
  JsapiPayParameters,
  ProviderTransaction,
  ProviderRefund,
  ProviderCloseResult,
} from './orders/provider'
export {
  MAX_ORDER_TTL_MINUTES,
  MAX_PLAN_DAYS,
  MAX_PLAN_DESCRIPTION_BYTES,
  PLAN_ID_PATTERN,
  isPlanAmountFen,
  isPlanDays,
  isPlanDescription,
  isPlanPoints,
  type PaymentOptions,
} from './orders/options'
export type {
  PlanView,
  PurchaseInput,
  PurchaseResult,
  PaymentOutcome,
  PaymentRejection,
  RefundOutcome,
  ReconcileOptions,
  ReconcileResult,
  OrderView,
} from './orders/api'
export { REUSE_MIN_REMAINING_MS, grantKeyOf } from './rules/orders'
export type { WindowLimit } from './rules/rate-limits'
export type { ScanEvent, ActivationEvent, ConfirmEvent, OrderPaidEvent, PaymentRejectedEvent } from './service/hooks'
export type { QrProvider, QrRequest, QrCode } from './service/qr'
export type { Authorization, AuthorizationSummary, LedgerEntry, UserInfo } from './service/views'
export { ScanAuthError, ERROR_STATUS, type ScanAuthErrorCode } from './errors'
export { MemoryStore, type MemoryStoreSnapshot } from './store/memory-store'
export type { Store } from './store/contract'
export type { LiveSessionQuery, UserListQuery, OrderListQuery, OrderCursor, SchemaState, SchemaStep, MigrationResult } from './store/operator-reads'
export type { ActiveAuthorizationQuery } from './store/reminder-reads'
export type { PurgeOptions, PurgeResult } from './store/purge'
export type {
  SceneRecord,
  SceneStatus,
  SceneConfirmation,
  UserRecord,
  UserAggregate,
  AuthorizationRecord,
  AuthorizationStatus,
  AuthorizationType,
  SessionRecord,
  LedgerKind,
  LedgerEntryRecord,
  IdempotencyRecord,
  OrderRecord,
  OrderStatus,
  OrderChannel,
  OrderGrant,
  OrderRefundRecord,
} from './store/records'
export { createHttpHandler } from './http/handler'
export { DEFAULT_MAX_BODY_BYTES, responseText, type HttpHandler, type HttpHandlerOptions, type HttpRequest, type HttpResponse } from './http/types'
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from './http/fetch-handler'
export { readFetchBody } from './http/fetch-body'
export { DEFAULT_NOTIFY_MAX_BODY_BYTES, type RawNotificationRequest, type RawNotificationHandler } from './http/raw-notification'
export { openApiDocument, openApiJson } from './http/openapi'
export {
  createRouteGuard,
  MAX_REQUEST_ID_LENGTH,
  type RouteGuard,
  type GuardedRequest,
  type RouteGuardOptions,
  type AuthorizationGuardOptions,
  type RouteGuardResult,
  type VerifiedSession,
} from './http/guard'
export {
  requireSessionFetch,
  requireAuthorizationFetch,
  type FetchGuard,
  type FetchSessionGuardOptions,
  type FetchAuthorizationGuardOptions,
} from './http/fetch-guard'
export { SCENE_STR_PATTERN, ORDER_ID_PATTERN } from './service/random'
