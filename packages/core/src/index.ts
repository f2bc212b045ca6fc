/**
 * `@scanauth/core`: scan a QR code in WeChat to authorize a device.
 *
 * - {@link createScanAuth}: the service (scenes, scans, the free trial, grants, consumption, sessions).
 * - {@link MemoryStore} and the {@link Store} contract that `@scanauth/sqlite`, `@scanauth/redis` and `@scanauth/postgres` implement.
 * - {@link sceneNeededUntil} and {@link purgeInBatches}: the one retention rule and the `purgeExpired` loop the stores share.
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
export { createScanAuth } from './service'
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
} from './api'
export type {
  WebOAuthProvider,
  ConfirmationOptions,
  ConfirmationOpenInput,
  ConfirmationStep,
  ConfirmationView,
  ConfirmationDecisionInput,
  ConfirmationDecisionResult,
} from './confirm-api'
export { displayLabel, maskAddress, DEFAULT_CONFIRM_TICKET_TTL_SECONDS } from './rules/confirm'
export { MAX_WAIT_MS, type WaitOptions } from './scene-waiters'
export type { ScanAuthOptions, ScanAuthHooks, RateLimitOptions } from './options'
export type { TelemetryOptions, TelemetryTracer, TelemetryMeter, TelemetryCounter, TelemetryHistogram, TelemetrySpan, TelemetryAttributes, TelemetryAttributeValue } from './telemetry/types'
export type {
  PlanGrant,
  Plan,
  PaymentProvider,
  PaymentMerchant,
  ProviderOrderRequest,
  ProviderTransaction,
  ProviderRefund,
  ProviderCloseResult,
} from './payments'
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
} from './payment-options'
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
} from './orders-api'
export { REUSE_MIN_REMAINING_MS, grantKeyOf } from './rules/orders'
export type { WindowLimit } from './rules/rate-limits'
export type { ScanEvent, ActivationEvent, ConfirmEvent, OrderPaidEvent, PaymentRejectedEvent } from './hooks'
export type { QrProvider, QrRequest, QrCode } from './qr'
export type { Authorization, AuthorizationSummary, LedgerEntry, UserInfo } from './views'
export { ScanAuthError, ERROR_STATUS, type ScanAuthErrorCode } from './errors'
export { MemoryStore, type MemoryStoreSnapshot } from './memory-store'
export { SceneListenerSet, type SceneListenerEvents } from './scene-listeners'
export {
  resolvePurgeOptions,
  purgeInBatches,
  purgeableScenes,
  startOfScenes,
  DEFAULT_PURGE_BATCH_SIZE,
  type PurgeSceneCandidate,
  type PurgeSceneCursor,
  type PurgeOptions,
  type PurgeResult,
  type ResolvedPurgeOptions,
  type PurgeBatchOutcome,
} from './purge'
export { sceneNeededUntil, orderNeededUntil, purgeCutoff, mayPurge } from './rules/retention'
export { fifoOrder } from './rules/authorizations'
export {
  NEW_USER,
  type Store,
  type LoadQuery,
  type LoadResult,
  type ChangeSet,
  type SceneWrite,
  type SceneDraft,
  type UserWrite,
  type UserRef,
  type NewAuthorization,
  type NewSession,
  type AssignedIds,
  type CommitResult,
  type AuthorizationRef,
  type NewLedgerEntry,
  type NewIdempotencyRecord,
  type SessionSelector,
  type SceneChangeListener,
  type LedgerQuery,
  type OrderWrite,
  type OpenOrderQuery,
} from './store'
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
  OrderGrant,
  OrderRefundRecord,
} from './records'
export { createHttpHandler } from './http/handler'
export { DEFAULT_MAX_BODY_BYTES, responseText, type HttpHandler, type HttpHandlerOptions, type HttpRequest, type HttpResponse } from './http/types'
export { readRawBody, firstQueryValues } from './http/node-body'
export { mayWait, clientGoneSignal } from './http/node-wait'
export { writeEventStream, writeResponseHead } from './http/node-events'
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from './http/fetch-handler'
export { readFetchBody } from './http/fetch-body'
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
export { SCENE_STR_PATTERN, ORDER_ID_PATTERN, newSceneStr, newSessionToken, newOrderId, newSecret } from './random'
