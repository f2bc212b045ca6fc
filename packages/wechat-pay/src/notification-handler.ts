/**
 * `createWechatPayNotificationHandler`: the `notify_url` endpoint. Verifies and decrypts (see
 * {@link parseWechatPayNotification}), hands payments to `auth.applyPayment` and refunds to
 * `auth.applyRefund`, and answers so that WeChat Pay retries exactly when it should: a 2xx only
 * once core has applied (or had nothing to apply), 401 for anything not provably WeChat Pay's, 400
 * for a body it cannot read, 500 for our own failures (wrong APIv3 key, the store down).
 *
 * @module
 */
import type { PaymentOutcome, ProviderRefund, ProviderTransaction, RefundOutcome, ScanAuth, TelemetryOptions } from '@scanauth/core'
import { WechatPayError, type WechatPayErrorCode } from './errors'
import type { VerificationKeys, VerificationKeySet } from './keys'
import { checkNotificationOptions, parseChecked, type WechatPayNotification } from './notification'
import type { RawNotificationRequest } from './raw-notification'
import { toProviderRefund, toProviderTransaction } from './resources'
import { NotificationTelemetry, type HandledNotification } from './telemetry'

/** A payment or refund report core refused as not ours to apply, as `onRejected` receives it. */
export type WechatPayRejection =
  | {
      /** A `TRANSACTION.SUCCESS` notification. */
      kind: 'payment'
      /** The notification. */
      notification: WechatPayNotification
      /** What it reported. */
      transaction: ProviderTransaction
      /** Core's answer: `result` is `rejected`, its `reason` says why. */
      outcome: PaymentOutcome
    }
  | {
      /** A `REFUND.*` notification. */
      kind: 'refund'
      /** The notification. */
      notification: WechatPayNotification
      /** What it reported. */
      refund: ProviderRefund
      /** Core's answer: `result` is `rejected`, its `reason` says why. */
      outcome: RefundOutcome
    }

/** Options of {@link createWechatPayNotificationHandler}. */
export interface WechatPayNotificationHandlerOptions {
  /** The scanauth service (or anything with its `applyPayment` and `applyRefund`). */
  auth: Pick<ScanAuth, 'applyPayment' | 'applyRefund'>
  /** WeChat Pay's keys by serial: hold the platform certificate and the public key during a migration. */
  verificationKeys: VerificationKeys | VerificationKeySet
  /** The merchant's APIv3 key: 32 ASCII characters. */
  apiV3Key: string
  /** The clock, epoch milliseconds. Default `Date.now`. */
  now?: () => number
  /** Allowed distance of `Wechatpay-Timestamp` from our clock, in seconds. Default 300. */
  maxSkewSeconds?: number
  /**
   * Told of an authentic report core refused (another merchant, a wrong amount, an unknown order):
   * worth an alert. The answer is still 204, since a retry would be refused the same way.
   */
  onRejected?: (rejection: WechatPayRejection) => void | Promise<void>
  /** Told of every notification answered with a non-2xx status, with the reason. For logs. */
  onError?: (error: unknown, answer: WechatPayNotificationResponse) => void
  /**
   * OpenTelemetry: a `scanauth.notification` span per notification and the `scanauth.notifications`
   * counter by outcome (docs/operations.md, "Traces and metrics"). By default (`true`) they go to
   * the global providers when `@opentelemetry/api` is installed (an optional peer dependency);
   * `false` turns them off; `{ tracer, meter }` sends them to your own.
   */
  telemetry?: boolean | TelemetryOptions
}

/** The handler's answer, for the host to send. */
export interface WechatPayNotificationResponse {
  /** 204, 400, 401 or 500. */
  status: number
  /** Response headers. */
  headers: Record<string, string>
  /** Empty for 204; `{"code":"FAIL","message":…}` otherwise. */
  body: string
}

/** The endpoint as a function of the raw request. */
export type WechatPayNotificationHandler = (request: RawNotificationRequest) => Promise<WechatPayNotificationResponse>

/** The answer of each failure: who is at fault decides whether a retry can help. */
const STATUS_OF: Partial<Record<WechatPayErrorCode, number>> = {
  missing_header: 401,
  timestamp_out_of_range: 401,
  unknown_serial: 401,
  signature_invalid: 401,
  unsupported_algorithm: 400,
  malformed_body: 400,
  decryption_failed: 500,
}

/** Words for the FAIL body; deliberately short (the caller may be a forger). */
const MESSAGE_OF: Partial<Record<WechatPayErrorCode, string>> = {
  missing_header: 'missing signature headers',
  timestamp_out_of_range: 'timestamp out of range',
  unknown_serial: 'unknown Wechatpay-Serial',
  signature_invalid: 'signature verification failed',
  unsupported_algorithm: 'unsupported algorithm',
  malformed_body: 'malformed notification',
  decryption_failed: 'internal error',
}

const REFUND_EVENTS = new Set(['REFUND.SUCCESS', 'REFUND.ABNORMAL', 'REFUND.CLOSED'])

function fail(status: number, message: string): WechatPayNotificationResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ code: 'FAIL', message }) }
}

/** A fresh 204 each time: the host may add headers to what it is given. */
const ok = (): WechatPayNotificationResponse => ({ status: 204, headers: {}, body: '' })

/**
 * Creates the `notify_url` endpoint. Options are checked here, once (`invalid_options`): the keys
 * are parsed, the APIv3 key must be 32 ASCII characters and `maxSkewSeconds` a whole number; a
 * notification is then handled with them as they are, never checking them again.
 *
 * @example
 * ```ts
 * import type { ScanAuth } from '@scanauth/core'
 * import { createWechatPayNotificationHandler, type VerificationKeys } from '@scanauth/wechat-pay'
 *
 * declare const auth: ScanAuth, verificationKeys: VerificationKeys, apiV3Key: string
 * declare const headers: Record<string, string | string[] | undefined>, rawBody: Buffer
 * const notify = createWechatPayNotificationHandler({ auth, verificationKeys, apiV3Key })
 * const answer = await notify({ headers, body: rawBody })   // → { status: 204 | 400 | 401 | 500, headers, body }
 * ```
 */
export function createWechatPayNotificationHandler(options: WechatPayNotificationHandlerOptions): WechatPayNotificationHandler {
  const { auth, onRejected, onError } = options
  const telemetry = new NotificationTelemetry(options.telemetry)
  if (auth === undefined || typeof auth.applyPayment !== 'function' || typeof auth.applyRefund !== 'function') {
    throw new WechatPayError('invalid_options', 'createWechatPayNotificationHandler: auth must have applyPayment and applyRefund')
  }
  const parseOptions = checkNotificationOptions(options)

  const failed = (error: unknown, answer: WechatPayNotificationResponse) => {
    try {
      onError?.(error, answer)
    } catch {
      // A logging hook must not change what WeChat Pay is told.
    }
    return answer
  }
  const tellRejected = async (rejection: WechatPayRejection) => {
    try {
      await onRejected?.(rejection)
    } catch {
      // Core has recorded the rejection already; the answer stays 204 (a retry would change nothing).
    }
  }

  /** One notification: the answer, and what it came to (for telemetry). */
  async function handle(request: RawNotificationRequest): Promise<HandledNotification<WechatPayNotificationResponse>> {
    let notification: WechatPayNotification
    try {
      notification = parseChecked({ headers: request.headers ?? {}, body: request.body ?? '' }, parseOptions)
    } catch (error) {
      const code = error instanceof WechatPayError ? error.code : undefined
      const status = (code === undefined ? undefined : STATUS_OF[code]) ?? 500
      const answer = failed(error, fail(status, (code === undefined ? undefined : MESSAGE_OF[code]) ?? 'internal error'))
      return { answer, kind: 'unknown', outcome: status === 401 ? 'unauthenticated' : status === 400 ? 'malformed' : 'failed', error }
    }
    const eventType = notification.eventType
    const kind = eventType === 'TRANSACTION.SUCCESS' ? 'payment' : REFUND_EVENTS.has(eventType) ? 'refund' : 'other'
    try {
      if (kind === 'payment') {
        const transaction = toProviderTransaction(notification.resource)
        // Core checks it against the order and grants exactly once (B-order-5, B-order-6).
        const outcome = await auth.applyPayment(transaction)
        if (outcome.result === 'rejected') await tellRejected({ kind: 'payment', notification, transaction, outcome })
        return { answer: ok(), kind, outcome: outcome.result, eventType, rejection: outcome.result === 'rejected' ? outcome.reason : undefined }
      }
      if (kind === 'refund') {
        const refund = toProviderRefund(notification.resource)
        // Recorded once per out_refund_no; a full refund revokes (B-order-8, B-order-9).
        const outcome = await auth.applyRefund(refund)
        if (outcome.result === 'rejected') await tellRejected({ kind: 'refund', notification, refund, outcome })
        return { answer: ok(), kind, outcome: outcome.result, eventType, rejection: outcome.result === 'rejected' ? outcome.reason : undefined }
      }
      // Any other event type: authentic, nothing for us to do, and a retry would not change that.
      return { answer: ok(), kind, outcome: 'ignored', eventType }
    } catch (error) {
      if (error instanceof WechatPayError && error.code === 'malformed_body') {
        return { answer: failed(error, fail(400, 'malformed notification')), kind, outcome: 'malformed', eventType, error }
      }
      // The store or the service failed: 500 makes WeChat Pay retry later.
      return { answer: failed(error, fail(500, 'internal error')), kind, outcome: 'failed', eventType, error }
    }
  }

  return function wechatPayNotificationHandler(request) {
    return telemetry.record(() => handle(request))
  }
}
