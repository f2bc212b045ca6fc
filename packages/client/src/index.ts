/**
 * `@scanauth/client`: the device side of scanauth for browsers, Electron, Node CLIs and kiosks. One
 * object ({@link createScanAuthClient}) signs a device in by a scanned QR code (the event stream,
 * falling back to the long poll and the poll), refreshes an expired code a bounded number of times,
 * cancels cleanly, and buys a plan. Built on `fetch`; no Node built-in.
 *
 * @module
 */
export { createScanAuthClient, type ScanAuthClient, type ScanAuthClientOptions } from './client'
export { ScanAuthClientError, type ScanAuthClientErrorCode, type ScanAuthClientErrorDetails } from './errors'
export type { FetchLike } from './http'
export type {
  AuthorizationSummary,
  ConsumeResult,
  OrderCode,
  Plan,
  PlanGrant,
  PurchaseBuyer,
  PurchaseOptions,
  PurchaseResult,
  SceneCode,
  SceneStatus,
  SessionInfo,
  SignInAuthorized,
  SignInDenied,
  SignInNeedPurchase,
  SignInOptions,
  SignInResult,
  StatusUpdate,
  Transport,
  TransportOption,
} from './types'
