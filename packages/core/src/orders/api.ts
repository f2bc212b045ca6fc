/**
 * The public shape of selling access: the catalog, a purchase, and what applying a payment or a
 * refund did (docs/behaviour.md, B-order-1…10). Amounts are integer fen.
 *
 * @module
 */
import type { PlanGrant } from './provider'

/** A plan as {@link ScanAuth.listPlans} answers it. */
export interface PlanView {
  /** The id a purchase names. */
  id: string
  /** What the payer is shown. */
  description: string
  /** The price in fen. */
  amountFen: number
  /** What a paid order grants. */
  grant: PlanGrant
}

/**
 * Input of {@link ScanAuth.purchase}: who buys — the device of a scene a scan bound to a user (the
 * `need_purchase` device holds no usable session), or the holder of a live session — and which plan.
 */
export type PurchaseInput =
  | {
      /**
       * A scene a scan authorized, while it answers `need_purchase` or within 10 minutes of its
       * scan (B-order-12): its user buys, and its device learns of the payment.
       */
      sceneStr: string
      /**
       * The scene's poll secret (`CreateSceneResult.pollSecret`; over HTTP the
       * `X-Scanauth-Poll-Secret` header). Required for a scene created with one (B-order-13).
       */
      pollSecret?: string
      /** Not with `sceneStr`. */
      sessionToken?: undefined
      /** The plan's id. */
      plan: string
      /** The caller's address (the HTTP handlers pass the framework's), 1–128 characters: purchases are limited per address (B-rate-11). */
      clientAddress?: string
    }
  | {
      /** A live session: its user buys. */
      sessionToken: string
      /** Not with `sessionToken`. */
      sceneStr?: undefined
      /** Only with `sceneStr`. */
      pollSecret?: undefined
      /** The plan's id. */
      plan: string
      /** The caller's address (the HTTP handlers pass the framework's), 1–128 characters: purchases are limited per address (B-rate-11). */
      clientAddress?: string
    }

/** Result of {@link ScanAuth.purchase}: the code to show and what it costs. */
export interface PurchaseResult {
  /** The order's id, the `out_trade_no` sent to the payment service. */
  orderId: string
  /** What the pay code encodes (WeChat Pay: `weixin://wxpay/bizpayurl?pr=…`). */
  codeUrl: string
  /** The price in fen. */
  amountFen: number
  /** The payment deadline, ISO 8601. */
  expiresAt: string
  /**
   * True when the person who scanned the buying scene got a link to buy on their phone instead
   * (`payments.phone`, B-phone-2): the device may say so beside the code. Absent otherwise.
   */
  phoneLink?: true
}

/** Why a payment or refund report changed nothing although it was authentic. */
export type PaymentRejection =
  | 'unknown_order'
  | 'merchant_mismatch'
  | 'appid_mismatch'
  | 'amount_mismatch'
  | 'currency_mismatch'
  | 'transaction_mismatch'

/** What {@link ScanAuth.applyPayment} did. */
export type PaymentOutcome =
  | {
      /** This call granted the order's plan (exactly one call ever answers this per order). */
      result: 'granted'
      /** The order. */
      orderId: string
      /** The authorization it granted. */
      authorizationId: number
    }
  | {
      /** The order was applied before; nothing changed. */
      result: 'already_applied'
      /** The order. */
      orderId: string
      /** The authorization granted then (null for an order refunded before it was paid). */
      authorizationId: number | null
    }
  | {
      /** The report says the order is not paid (`NOTPAY`, `CLOSED`, …); nothing changed. */
      result: 'not_paid'
      /** The order. */
      orderId: string
    }
  | {
      /** Authentic but not ours to apply: nothing changed, `onPaymentRejected` was told. */
      result: 'rejected'
      /** The order id the report named. */
      orderId: string
      /** Why. */
      reason: PaymentRejection
    }

/** What {@link ScanAuth.applyRefund} did. */
export type RefundOutcome =
  | {
      /** Recorded; with `revokedAuthorizationId` set, the refund was full and took the grant back. */
      result: 'refunded' | 'partially_refunded'
      /** The order. */
      orderId: string
      /** The authorization revoked by a full refund; null for a partial one. */
      revokedAuthorizationId: number | null
    }
  | {
      /** This refund was applied before (same `out_refund_no`); nothing changed. */
      result: 'already_applied'
      /** The order. */
      orderId: string
    }
  | {
      /** The refund is not `SUCCESS` (`PROCESSING`, `CLOSED`, `ABNORMAL`); nothing changed. */
      result: 'not_refunded'
      /** The order. */
      orderId: string
    }
  | {
      /** Authentic but not ours to apply: nothing changed, `onPaymentRejected` was told. */
      result: 'rejected'
      /** The order id the report named. */
      orderId: string
      /** Why. */
      reason: PaymentRejection
    }

/** Options of {@link ScanAuth.reconcileOrders}. */
export interface ReconcileOptions {
  /** The time to reconcile at, epoch milliseconds. Default: the service's clock. */
  now?: number
  /** Only orders opened at least this long ago, in seconds (a payment in flight is left alone). Default 60. */
  minAgeSeconds?: number
  /** At most this many orders per call (1–10 000). Default 500. */
  limit?: number
}

/** What {@link ScanAuth.reconcileOrders} did. */
export interface ReconcileResult {
  /** Orders asked about at the payment service. */
  checked: number
  /** Orders found paid and granted now. */
  granted: number
  /** Orders closed (past their deadline, or closed at the service). */
  closed: number
  /** Orders left open (unpaid, before their deadline). */
  open: number
  /** Orders whose check failed (the service or the store); they are tried again next time. */
  failed: number
  /** True when `limit` stopped the call before every due order was checked. */
  more: boolean
  /** Why each failed check failed, for the job's log. */
  errors: Array<{
    /** The order whose check failed. */ orderId: string
    /** What went wrong. */ message: string
  }>
}

/** An order as {@link ScanAuth.getOrder} answers it. */
export interface OrderView {
  /** The order's id (`out_trade_no`). */
  orderId: string
  /** The buyer. */
  userId: number
  /** The plan bought. */
  planId: string
  /** The price in fen. */
  amountFen: number
  /** `open`, `paid`, `closed` or `refunded`. */
  status: 'open' | 'paid' | 'closed' | 'refunded'
  /** The scene whose device waits for it, or null. */
  sceneStr: string | null
  /** How it is paid: `native` (a code the device shows) or `jsapi` (WeChat's cashier on the phone, B-phone-1). */
  channel: 'native' | 'jsapi'
  /** ISO 8601. */
  createdAt: string
  /** The payment deadline, ISO 8601. */
  expiresAt: string
  /** ISO 8601, once paid. */
  paidAt: string | null
  /** The payment service's transaction id, once paid. */
  transactionId: string | null
  /** The authorization the payment granted, once paid. */
  authorizationId: number | null
  /** Refunded so far, in fen. */
  refundedFen: number
}
