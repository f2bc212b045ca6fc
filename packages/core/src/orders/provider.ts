/**
 * The seam between core and a payment provider (docs/behaviour.md, B-order-1…10). Core keeps the
 * plans, the orders and every rule about them; a provider only talks to the payment service:
 * it opens a Native order and hands back the code to show, tells what the service knows of an
 * order, and closes one. `@scanauth/wechat-pay` implements it for WeChat Pay API v3
 * (`createWechatPayProvider`). Amounts are integer fen (1 = ¥0.01) everywhere; never yuan floats.
 *
 * @module
 */

/** What a plan grants once paid: a time authorization of `days` days, or `points` points. */
export type PlanGrant =
  | {
      /** A time authorization. */
      type: 'time'
      /** Its length in days (fractions allowed, e.g. 0.5 for twelve hours). */
      days: number
    }
  | {
      /** A points authorization. */
      type: 'points'
      /** How many points, a positive integer. */
      points: number
    }

/** One entry of the catalog: what a device may buy. */
export interface Plan {
  /** Stable id the purchase names, 1–64 characters of `[0-9A-Za-z_.-]`. */
  id: string
  /** Shown to the payer by WeChat Pay; at most 127 bytes of UTF-8. */
  description: string
  /** The price in fen, a positive safe integer (1990 = ¥19.90). */
  amountFen: number
  /** What a paid order of this plan grants. */
  grant: PlanGrant
}

/** The order as core asks a provider to open it. */
export interface ProviderOrderRequest {
  /** Our order id, sent as `out_trade_no`: 6–32 characters of `[0-9A-Za-z_\-*]`. */
  outTradeNo: string
  /** The plan's description. */
  description: string
  /** The amount in fen. */
  amountFen: number
  /** The payment deadline, epoch milliseconds (sent as `time_expire`). */
  expiresAt: number
}

/** A JSAPI order as core asks a provider to open it: a Native order's fields and who pays (B-phone-1). */
export interface ProviderJsapiOrderRequest extends ProviderOrderRequest {
  /** The payer's openid under the provider's app id: the person the phone page identified. */
  payerOpenid: string
}

/**
 * The six parameters of WeChat's cashier, `WeixinJSBridge.invoke('getBrandWCPayRequest', …)`, for one
 * JSAPI order. Field names are WeChat's own, so a page passes the object as it is.
 */
export interface JsapiPayParameters {
  /** The app id the order was opened for. */
  appId: string
  /** Unix time in **seconds**, as a decimal string. */
  timeStamp: string
  /** A random string of at most 32 characters. */
  nonceStr: string
  /** `prepay_id=` and the order's prepay id. */
  package: string
  /** Always `RSA`; not part of what is signed. */
  signType: 'RSA'
  /** Base64 SHA256-with-RSA, by the merchant's key, of `appId\ntimeStamp\nnonceStr\npackage\n`. */
  paySign: string
}

/**
 * What the payment service says of one order, from a verified notification or a query. Field
 * values are the service's own; core compares them with the stored order before it believes any.
 */
export interface ProviderTransaction {
  /** The merchant the service says the order belongs to. */
  mchid: string
  /** The app id the order was opened for. */
  appid: string
  /** Our order id. */
  outTradeNo: string
  /** The service's transaction id; null while unpaid. */
  transactionId: string | null
  /**
   * WeChat Pay's `trade_state`: `SUCCESS` and `REFUND` mean paid; `NOTPAY` and `USERPAYING` are in
   * flight; `CLOSED`, `REVOKED` and `PAYERROR` are final without a payment.
   */
  tradeState: string
  /** The order total in fen and its currency, as the service reports them. */
  amount: {
    /** The order total, in fen. */ total: number
    /** Its currency, e.g. `CNY`. */ currency: string
  }
  /** When it was paid, as the service reports it (RFC 3339), when paid. */
  successTime?: string
}

/** A refund as the payment service reports it (a verified `REFUND.*` notification or a query). */
export interface ProviderRefund {
  /** The merchant. */
  mchid: string
  /** The order refunded. */
  outTradeNo: string
  /** The service's transaction id of the paid order. */
  transactionId: string
  /** Our refund number. */
  outRefundNo: string
  /** The service's refund id. */
  refundId: string
  /** `SUCCESS`, `CLOSED`, `PROCESSING` or `ABNORMAL`. Only `SUCCESS` changes anything. */
  refundStatus: string
  /** Refunded by this refund, and the order total, in fen. */
  amount: {
    /** Refunded by this refund, in fen. */ refund: number
    /** The order total, in fen. */ total: number
  }
}

/** The merchant identity a provider speaks for; paid transactions must name the same. */
export interface PaymentMerchant {
  /** Merchant id. */
  mchid: string
  /** App id bound to the merchant. */
  appid: string
}

/** A provider's answer to a close: closed, or it turned out to be paid already (`ORDERPAID`). */
export type ProviderCloseResult = 'closed' | 'paid'

/** A payment service, as core needs it. */
export interface PaymentProvider {
  /** Who the provider speaks for; a transaction naming another merchant or app is refused. */
  readonly merchant: PaymentMerchant
  /**
   * Opens a Native order and answers the code the device shows. Called again with the same request
   * for an order still open, it must answer a fresh code for the same order (WeChat Pay "re-entry"),
   * never open a second chargeable one.
   */
  createNativeOrder(order: ProviderOrderRequest): Promise<{
    /** The code the device shows (`weixin://wxpay/…`). */ codeUrl: string
  }>
  /**
   * Opens a JSAPI order for `payerOpenid` and answers the cashier parameters, signed. Called again
   * with the same request for an order still open, it must answer parameters of the same order (WeChat
   * Pay answers the current `prepay_id`), never open a second chargeable one. Needed only for paying
   * on the phone (`payments.phone`, B-phone-1); `createWechatPayProvider` has it.
   */
  createJsapiOrder?(order: ProviderJsapiOrderRequest): Promise<JsapiPayParameters>
  /** What the service knows of the order, or null when it knows none by that id. */
  queryOrder(outTradeNo: string): Promise<ProviderTransaction | null>
  /** Closes an unpaid order; answers `paid` when the service says it is paid already. */
  closeOrder(outTradeNo: string): Promise<ProviderCloseResult>
}
