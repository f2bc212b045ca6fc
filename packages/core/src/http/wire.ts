/**
 * The wire bodies: the snake_case JSON of docs/behaviour.md (wire shapes and errors), built from the library's camelCase results.
 * Each function returns the type of its answer's schema in wire-schemas.ts (the schemas the OpenAPI
 * document is generated from), so a body that leaves its schema does not compile.
 */
import type { ConsumeResult, CreateSceneResult, SessionInfo, StatusResult } from '../service/api'
import type { OrderView, PlanView, PurchaseResult } from '../orders/api'
import type { AuthorizationSummary } from '../service/views'
import { ScanAuthError, type ScanAuthErrorCode } from '../errors'
import type {
  AuthorizationSummaryAnswer,
  ConsumeAnswer,
  CreateSceneAnswer,
  CodedErrorAnswer,
  ErrorAnswer,
  NeedPurchaseAnswer,
  OrderAnswer,
  PlanAnswer,
  PurchaseAnswer,
  SessionAnswer,
  StatusAnswer,
} from './wire-schemas'

/** Authorization summary (docs/behaviour.md, B-wire-1). */
export function summaryBody(a: Pick<AuthorizationSummary, 'type' | 'endAt' | 'remainingPoints'>): AuthorizationSummaryAnswer {
  return { type: a.type, end_at: a.endAt, remaining_points: a.remainingPoints }
}

/**
 * POST create_scene, 200: the three fields of docs/behaviour.md (B-create-3), and `qr_content` only
 * when the QR provider gave the code's text, `poll_secret` only with `requirePollSecret` (B-secret-1).
 */
export function createSceneBody(r: CreateSceneResult): CreateSceneAnswer {
  const body: CreateSceneAnswer = {
    scene_str: r.sceneStr,
    qr_url: r.qrUrl,
    expires_in: r.expiresIn,
  }
  if (r.qrContent !== undefined) body.qr_content = r.qrContent
  if (r.pollSecret !== undefined) body.poll_secret = r.pollSecret
  return body
}

/**
 * `{status: 'need_purchase'}`, with `purchase_url` when the handler has a `purchaseUrl` (off by
 * default, so the body stays the one of docs/behaviour.md, wire shapes).
 */
function needPurchaseBody(purchaseUrl: string | undefined): NeedPurchaseAnswer {
  return purchaseUrl === undefined ? { status: 'need_purchase' } : { status: 'need_purchase', purchase_url: purchaseUrl }
}

/**
 * GET status, 200: `{status}` alone, or with the session token and summary when authorized;
 * `need_purchase` carries `purchase_url` when one is configured.
 */
export function statusBody(r: StatusResult, purchaseUrl?: string): StatusAnswer {
  if (r.status === 'need_purchase') return needPurchaseBody(purchaseUrl)
  if (r.status !== 'authorized') return { status: r.status }
  return { status: r.status, session_token: r.sessionToken, authorization: summaryBody(r.authorization) }
}

/** GET session, 200. */
export function sessionBody(s: SessionInfo): SessionAnswer {
  return {
    user_id: s.userId,
    device_id: s.deviceId,
    expires_at: s.expiresAt,
    authorization: s.authorization === null ? null : summaryBody(s.authorization),
  }
}

/** POST consume, 200; `need_purchase` carries `purchase_url` when one is configured. */
export function consumeBody(r: ConsumeResult, purchaseUrl?: string): ConsumeAnswer {
  if (r.status === 'need_purchase') return needPurchaseBody(purchaseUrl)
  if (r.status !== 'ok') return { status: r.status }
  return { status: r.status, authorization: summaryBody(r.authorization) }
}

/** Every error: `{detail}`. */
export function errorBody(detail: string): ErrorAnswer {
  return { detail }
}

/** The error of a route the specification does not define (B-wire-7): its code beside the detail. */
export function codedErrorBody(error: string, detail: string): CodedErrorAnswer {
  return { error, detail }
}

/**
 * What the answer to a failure of a service we call says, in our words (for the QR code, the
 * specification's "QR code creation failed" followed by the reason, B-create-4). The service's own text
 * (WeChat's `errmsg`, a transport error) may name the server's outbound address or internal hosts
 * (40164 "invalid ip … not in whitelist"), so it goes only to `onError` and the log, with the
 * error, never to the caller (docs/security.md, "Upstream errors").
 */
const UPSTREAM_DETAIL: Partial<Record<ScanAuthErrorCode, string>> = {
  qr_creation_failed: 'QR code creation failed: the messaging platform refused the request or could not be reached. Try again in a moment.',
  payment_provider_failed: 'The payment service refused the request or could not be reached. Try again in a moment.',
}

/** Whether `error` is a failure of a service we call (a 502), which `onError` is told about. */
export function isUpstreamFailure(error: unknown): error is ScanAuthError {
  return error instanceof ScanAuthError && error.status === 502
}

/** The `detail` an error answer carries: the error's message, or our own words for an upstream failure. */
export function detailOf(error: ScanAuthError): string {
  return UPSTREAM_DETAIL[error.code] ?? error.message
}

/** GET plans, 200: the catalog in its order (docs/behaviour.md, B-order-1). Amounts in fen. */
export function plansBody(plans: readonly PlanView[]): PlanAnswer[] {
  return plans.map((p) => ({ id: p.id, description: p.description, amount_fen: p.amountFen, grant: { ...p.grant } }))
}

/** POST purchase, 200: the order and the code to pay with (B-order-2). */
export function purchaseBody(r: PurchaseResult): PurchaseAnswer {
  const body = { order_id: r.orderId, code_url: r.codeUrl, amount_fen: r.amountFen, expires_at: r.expiresAt }
  return r.phoneLink === true ? { ...body, phone_link: true } : body
}

/** GET order, 200: where the buyer's order stands (docs/behaviour.md, B-order-11). */
export function orderBody(o: OrderView): OrderAnswer {
  return { order_id: o.orderId, status: o.status, plan: o.planId, amount_fen: o.amountFen, expires_at: o.expiresAt, paid_at: o.paidAt }
}
