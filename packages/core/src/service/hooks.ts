/**
 * Events passed to the optional hooks of `createScanAuth`.
 *
 * @module
 */
import type { ScanResult } from './api'
import type { PaymentRejection } from '../orders/api'
import type { Authorization } from './views'

/** A handled scan. */
export interface ScanEvent {
  /** The scanned scene. */
  sceneStr: string
  /** Who scanned it. */
  openid: string
  /** What the scan did. */
  result: ScanResult['result']
  /** The user, unless the scan was invalid. */
  userId?: number
}

/** The scanner answered a confirm page (`confirm: 'link'`, B-confirm-7, B-confirm-8). */
export interface ConfirmEvent {
  /** `authorized` or `need_purchase` after Confirm (the scan transaction ran), `denied` after Deny. */
  result: 'authorized' | 'need_purchase' | 'denied'
  /** The scanner's user, after Confirm. */
  userId?: number
}

/** An authorization became active (by a scan, a grant, a poll or a consume). */
export interface ActivationEvent {
  /** The authorization, as it is now. */
  authorization: Authorization
}

/** A payment granted an order's plan. */
export interface OrderPaidEvent {
  /** The order (`out_trade_no`). */
  orderId: string
  /** The buyer. */
  userId: number
  /** The plan bought. */
  planId: string
  /** The authorization granted. */
  authorizationId: number
  /** The payment service's transaction id. */
  transactionId: string | null
}

/** An authentic payment or refund report that was not applied. */
export interface PaymentRejectedEvent {
  /** A payment or a refund. */
  kind: 'payment' | 'refund'
  /** The order id the report named. */
  orderId: string
  /** Why it was not applied. */
  reason: PaymentRejection
  /** The report's merchant id. */
  mchid: string
  /** The amount the report carried, in fen (the order total). */
  amountFen: number
}
