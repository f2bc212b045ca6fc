/**
 * The public shapes of the WeChat Pay emulator: its options, its knobs, the handle
 * `startWechatPayEmulator` returns, and the views its methods and JSON endpoints return.
 *
 * @module
 */

/**
 * How the emulator identifies the key it signs answers and notifications with, in `Wechatpay-Serial`:
 * `public-key` (what new merchants get) sends `PUB_KEY_ID_…`, `certificate` sends the hex serial of a
 * platform certificate.
 */
export type WechatPayKeyMode = 'public-key' | 'certificate'

/** The state of an order, as `trade_state` reads it. */
export type WechatPayTradeState = 'NOTPAY' | 'SUCCESS' | 'CLOSED' | 'REFUND'

/** The state of a refund, as `status` reads it. */
export type WechatPayRefundStatus = 'PROCESSING' | 'SUCCESS'

/**
 * Behaviours real WeChat Pay shows now and then, switched on so an app's notification handler can
 * be tested against them. Set them with the `knobs` option, `setKnobs` or `POST /emulator/knobs`.
 */
export interface WechatPayKnobs {
  /**
   * Before each notification, send it once with a deliberately wrong signature
   * (`WECHATPAY/SIGNTEST/…`), as WeChat does to probe that merchants verify. The app must answer it
   * 4xx/5xx; the real notification follows either way. Default false.
   */
  probeFirst: boolean
  /** After a notification was accepted, deliver the very same notification (same `id`, same body) again. Default false. */
  duplicateSameId: boolean
  /** After a notification was accepted, deliver the same transaction or refund again under a new notification `id`. Default false. */
  duplicateNewId: boolean
  /** Seconds added to `Wechatpay-Timestamp` of notifications and API answers (a skewed WeChat clock). Default 0. */
  timestampSkewSeconds: number
  /** Encrypt notification resources with an empty `associated_data` (as the doc samples show) instead of `transaction`/`refund`. Default false. */
  emptyAssociatedData: boolean
  /**
   * After `rotatePlatformKey`, the share (0–1) of notifications still signed with the previous key
   * (WeChat ramps a key switch over days, so verifiers must hold both). Default 0.
   */
  previousKeyShare: number
}

/** Options of `startWechatPayEmulator`. The merchant values are anything you like; the app under test must use the same ones. */
export interface WechatPayEmulatorOptions {
  /** The merchant id (`mchid`). */
  mchid: string
  /** The AppID bound to the merchant (`appid` of orders). */
  appid: string
  /** The APIv3 key: 32 ASCII characters. Default a random one, readable as `apiV3Key`. */
  apiV3Key?: string
  /**
   * The merchant's API public keys by merchant certificate serial (`serial_no` of `Authorization`),
   * as PEM (SPKI or PKCS#1) or a certificate PEM. When absent, the emulator generates one key pair and
   * exposes it as `merchantKey` (so a test signs with it).
   */
  merchantPublicKeys?: Record<string, string>
  /** Generate a merchant key pair (exposed as `merchantKey`) even when `merchantPublicKeys` is given. Default: only when it is not. */
  generateMerchantKey?: boolean
  /** How answers and notifications name the platform key. Default `public-key`. */
  mode?: WechatPayKeyMode
  /**
   * The payer's openid for `pay` of a Native order and the page unless given, and the viewer of the
   * JSAPI cashier (`POST /emulator/jsapi/pay`) when the request carries no `wxemu_openid` cookie.
   * Default `o_emulator_payer`.
   */
  payerOpenid?: string
  /**
   * Whether `openid` is a user of `appid` (WeChat's openids are per app). A JSAPI order whose
   * `payer.openid` does not belong to its appid is refused with 400 `PARAM_ERROR` "appid和openid不匹配".
   * Default `defaultOpenidBelongs` (exported): every non-empty openid belongs, except those starting with
   * `other-app:` (the emulator knows no real users, so a test names a stranger's openid that way).
   */
  openidBelongs?: (appid: string, openid: string) => boolean
  /**
   * Delays in milliseconds before each retry of a notification that was not accepted. Default
   * `WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS`: WeChat's 15s/15s/30s/3m/10m/20m/30m/30m/30m/60m/3h/3h/3h/6h/6h
   * divided by 1000 (seconds become milliseconds), so a full day of retries takes 86.6 s.
   */
  retrySchedule?: readonly number[]
  /** How long a notification delivery may take before it counts as unanswered. Default 5000 ms, like WeChat. */
  notifyTimeoutMs?: number
  /** Milliseconds from a refund's acceptance (PROCESSING) to SUCCESS and its notification; 0 answers SUCCESS at once. Default 1000. */
  refundDelayMs?: number
  /** The request-signature clock window, seconds either side of the emulator's clock. Default 300. */
  clockToleranceSeconds?: number
  /** Initial knobs (see {@link WechatPayKnobs}). */
  knobs?: Partial<WechatPayKnobs>
  /** Clock in epoch milliseconds (signature window, timestamps, order expiry, success_time). Default `Date.now`. */
  now?: () => number
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string
}

/** A merchant API key pair the emulator generated for tests. */
export interface WechatPayMerchantKey {
  /** The merchant certificate serial to send as `serial_no` (40 hex digits). */
  serial: string
  /** The private key (PKCS#8 PEM) the merchant signs requests with (`apiclient_key.pem`). */
  privateKeyPem: string
  /** Its public key (SPKI PEM), as the emulator registered it. */
  publicKeyPem: string
}

/** Input of `pay`: which order (by `out_trade_no`, one of its `code_url`s or `prepay_id`s) and who pays. */
export interface WechatPayPayInput {
  /** The order's `out_trade_no`. */
  outTradeNo?: string
  /** A `code_url` the emulator answered for a Native order (what the device's QR shows). */
  codeUrl?: string
  /** A `prepay_id` the emulator answered for a JSAPI order. */
  prepayId?: string
  /**
   * The payer's openid. Default: a JSAPI order's `payer.openid`, else the `payerOpenid` option. A JSAPI
   * order paid as anyone else is refused (`wrong_payer`).
   */
  openid?: string
}

/** One order as the emulator keeps it (`orders()`, `GET /emulator/orders`). */
export interface WechatPayEmulatorOrder {
  /** `out_trade_no`. */
  outTradeNo: string
  /** `trade_type`: `NATIVE` (opened at `…/native`) or `JSAPI` (opened at `…/jsapi`). */
  tradeType: 'NATIVE' | 'JSAPI'
  /** `description`. */
  description: string
  /** `amount.total` in fen. */
  total: number
  /** `notify_url` of the order. */
  notifyUrl: string
  /** `trade_state`. */
  tradeState: WechatPayTradeState
  /** Whether `pay` would succeed now (NOTPAY and not past `time_expire`). */
  payable: boolean
  /** `time_expire` as epoch milliseconds, or null. */
  expiresAt: number | null
  /** The newest `code_url` (`''` for a JSAPI order). */
  codeUrl: string
  /** Every `code_url` answered for the order (a re-entry adds one), oldest first; empty for JSAPI. */
  codeUrls: string[]
  /** The current `prepay_id` of a JSAPI order; null for a Native one. */
  prepayId: string | null
  /** A JSAPI order's `payer.openid`, or who paid a Native order; null for an unpaid Native order. */
  payer: string | null
  /** Epoch milliseconds of creation. */
  createdAt: number
  /** `transaction_id`, once paid. */
  transactionId: string | null
  /** Sum of accepted refunds in fen. */
  refunded: number
  /** The transaction object `GET /v3/pay/transactions/out-trade-no/{no}` answers now. */
  transaction: Record<string, unknown>
}

/** One refund as the emulator keeps it (`refunds()`). */
export interface WechatPayEmulatorRefund {
  /** `out_refund_no`. */
  outRefundNo: string
  /** `out_trade_no` of the refunded order. */
  outTradeNo: string
  /** `amount.refund` in fen. */
  refund: number
  /** `status`. */
  status: WechatPayRefundStatus
  /** The refund object `GET /v3/refund/domestic/refunds/{no}` answers now. */
  body: Record<string, unknown>
}

/** One delivery attempt of a notification. */
export interface WechatPayDeliveryAttempt {
  /** Epoch milliseconds the attempt started, on the emulator's clock. */
  at: number
  /** HTTP status of the answer; null when none came (timeout, refused connection). */
  status: number | null
  /** Why there was no usable answer, or null. */
  error: string | null
}

/** One notification and its deliveries (`notifications()`, `GET /emulator/notifications`). */
export interface WechatPayEmulatorNotification {
  /** The notification id (`EV-…`); duplicates under the same id share it. */
  id: string
  /** `event_type`: `TRANSACTION.SUCCESS` or `REFUND.SUCCESS`. */
  eventType: string
  /**
   * `real` (the notification), `probe` (sent with a `WECHATPAY/SIGNTEST/` signature, never retried;
   * the app should answer 4xx/5xx), `duplicate-same-id` or `duplicate-new-id` (knobs).
   */
  kind: 'real' | 'probe' | 'duplicate-same-id' | 'duplicate-new-id'
  /** Where it was sent. */
  url: string
  /** `out_trade_no` it is about. */
  outTradeNo: string
  /** `out_refund_no` for refund notifications, else null. */
  outRefundNo: string | null
  /** The platform key id (`Wechatpay-Serial`) it was signed with. */
  serial: string
  /** `pending` (being delivered or waiting for a retry), `accepted` (2xx), `refused` (a probe answered non-2xx, as it should be), `gave-up` (retries exhausted, or closed). */
  state: 'pending' | 'accepted' | 'refused' | 'gave-up'
  /** Every attempt, oldest first. */
  attempts: WechatPayDeliveryAttempt[]
  /** The exact body sent (the envelope JSON). */
  body: string
  /** The decrypted resource (what the app should find after decryption). */
  resource: Record<string, unknown>
}

/** One API request the emulator received. */
export interface WechatPayEmulatorRequest {
  /** Epoch milliseconds, on the emulator's clock. */
  at: number
  /** The HTTP method. */
  method: string
  /** The request target as sent (path and query). */
  url: string
  /** The HTTP status answered. */
  status: number
  /** The error `code` answered, when it was an error. */
  code?: string
}

/** A running WeChat Pay emulator. */
export interface WechatPayEmulator {
  /** Base URL, e.g. `http://127.0.0.1:53012`: use it instead of `https://api.mch.weixin.qq.com`. */
  readonly url: string
  /**
   * `${url}/emulator/jsapi-bridge.js`: a stand-in for WeChat's `WeixinJSBridge`. A page opened
   * outside WeChat loads it with a `<script src>` to get `getBrandWCPayRequest` (a cashier overlay
   * whose **Pay** pays the order through the emulator); inside real WeChat it does nothing.
   */
  readonly jsapiBridgeUrl: string
  /** The merchant id. */
  readonly mchid: string
  /** The AppID bound to the merchant. */
  readonly appid: string
  /** The APIv3 key notifications are encrypted with (given or generated). */
  readonly apiV3Key: string
  /** How the platform key is named (`PUB_KEY_ID_…` or a hex serial). */
  readonly mode: WechatPayKeyMode
  /** The generated merchant key pair, or null when `merchantPublicKeys` was given without `generateMerchantKey`. */
  readonly merchantKey: WechatPayMerchantKey | null
  /** The id (`Wechatpay-Serial`) of the current platform key. */
  readonly platformSerial: string
  /** Public keys (SPKI PEM) to verify answers and notifications with, by `Wechatpay-Serial`; includes kept old keys after a rotation. */
  readonly verificationKeys: Record<string, string>
  /**
   * What a WeChat Pay client needs to talk to this emulator, in the names `createWechatPayClient` of
   * `@scanauth/wechat-pay` takes: `createWechatPayClient({ ...pay.clientOptions(), notifyUrl })`.
   * It signs with the generated {@link WechatPayEmulator.merchantKey}, so it throws a
   * `WechatEmulatorError` `no_merchant_key` when there is none. The keys are those of the moment:
   * after {@link WechatPayEmulator.rotatePlatformKey}, a client built before keeps the old ones, as
   * an app that was never told of the rotation would.
   */
  clientOptions(): {
    /** The merchant id. */
    mchid: string
    /** The AppID bound to the merchant. */
    appid: string
    /** The generated merchant private key (PKCS#8 PEM) requests are signed with. */
    merchantPrivateKey: string
    /** Its serial, sent as `serial_no`. */
    merchantCertSerial: string
    /** The platform public keys answers and notifications are verified with, by `Wechatpay-Serial`. */
    verificationKeys: Record<string, string>
    /**
     * The current `PUB_KEY_ID_…` in public-key mode, where a merchant must ask for answers signed with
     * it; absent in certificate mode, where answers come signed with the platform certificate anyway.
     */
    requestSerial?: string
    /** The emulator's {@link WechatPayEmulator.url}, in place of `https://api.mch.weixin.qq.com`. */
    apiBase: string
  }
  /** Registers another merchant public key for `serial_no` (a merchant certificate renewal). Throws `invalid_argument` for a bad key. */
  addMerchantKey(serial: string, publicKeyPem: string): void
  /**
   * Pays an order as the emulated phone would: it becomes SUCCESS and a `TRANSACTION.SUCCESS`
   * notification goes to its `notify_url` (in the background; see `notifications()` and `settled()`).
   * Resolves with the transaction object. Rejects with a `WechatEmulatorError`: `unknown_order`,
   * `order_paid`, `order_closed`, `order_expired`, `code_url_expired`, `prepay_id_expired`,
   * `wrong_payer`, `invalid_argument` or `closed`.
   */
  pay(input: WechatPayPayInput): Promise<Record<string, unknown>>
  /** Every order, oldest first. */
  orders(): WechatPayEmulatorOrder[]
  /** Every refund, oldest first. */
  refunds(): WechatPayEmulatorRefund[]
  /** Every notification with its deliveries, oldest first. */
  notifications(): WechatPayEmulatorNotification[]
  /** The API requests received, oldest first. */
  requests(): WechatPayEmulatorRequest[]
  /** The current knobs. */
  knobs(): WechatPayKnobs
  /** Changes some knobs and returns them all. Throws `invalid_argument` for an unknown knob or a bad value. */
  setKnobs(knobs: Partial<WechatPayKnobs>): WechatPayKnobs
  /**
   * Switches to a newly generated platform key and resolves with its id. The old key stays in
   * `verificationKeys` (and usable through a request's `Wechatpay-Serial`) unless `retireOld` is set.
   */
  rotatePlatformKey(options?: { retireOld?: boolean }): Promise<string>
  /** Resolves once no refund is pending and no notification is being delivered or waiting for a retry. */
  settled(): Promise<void>
  /** Stops the server, cancels pending refunds and retries, and aborts deliveries in flight. */
  close(): Promise<void>
}
