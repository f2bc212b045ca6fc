/**
 * What the parent and the worker processes of the payment tests ({@link describePaymentProcesses},
 * {@link servePaymentWorker}) say to each other, and the parts of `@scanauth/wechat-pay` and
 * `@scanauth/wechat-emulator` they need, described by shape. The testkit does not depend on those
 * packages (a published testkit would otherwise pull a payment client and an emulator into every
 * store's tests); the test files that use these helpers pass the real functions in.
 *
 * @module
 */
import type { PaymentOutcome, PaymentProvider, ReconcileResult, ScanAuth } from '@scanauth/core'

/**
 * The merchant settings of a WeChat Pay client against the emulator: exactly what
 * `createWechatPayClient` of `@scanauth/wechat-pay` takes, so a test passes them straight on.
 * Plain strings only, since they travel to the workers as JSON.
 */
export interface PaymentClientSettings {
  /** Merchant id. */
  mchid: string
  /** App id bound to the merchant. */
  appid: string
  /** The merchant's private key, PKCS#8 PEM. */
  merchantPrivateKey: string
  /** The serial of the merchant's certificate. */
  merchantCertSerial: string
  /** The emulator's verification keys by `Wechatpay-Serial`. */
  verificationKeys: Record<string, string>
  /** The platform key the answers are to be signed with (public-key mode). */
  requestSerial: string
  /** The emulator's URL. */
  apiBase: string
  /** Where the emulator posts notifications: the test's capturing server. */
  notifyUrl: string
}

/** What every worker is given (as JSON in `SCANAUTH_PAYMENT_SETTINGS`): the client's settings and the APIv3 key. */
export interface PaymentWorkerSettings {
  /** The WeChat Pay client's settings. */
  client: PaymentClientSettings
  /** The key notifications are encrypted with. */
  apiV3Key: string
}

/** A notification exactly as it reached `notify_url`: its raw body and every header. */
export interface CapturedNotification {
  /** The notification id (`id` of the envelope). */
  id: string
  /** The raw body, base64, so that the very same bytes reach every worker. */
  bodyBase64: string
  /** The request headers as Node received them (lower-case names). */
  headers: Record<string, string | string[] | undefined>
}

/**
 * Where a worker stops, as if killed there, with the notification verified and decrypted:
 * `grant`, when the grant's commit (the one carrying the key `order:<outTradeNo>`) is about to be
 * sent; `order`, after the grant committed, when the order's write as paid is about to be sent.
 */
export type StallPoint = 'grant' | 'order'

/** Parent → worker. */
export type PaymentCommand =
  | {
      /** Hand every notification to the handler at once; report each status and what core answered. */
      kind: 'deliver'
      /** The notifications, delivered concurrently. */
      notifications: CapturedNotification[]
    }
  | {
      /** Hand the notification to the handler, and report (then hang) once it reaches `stallAt`. */
      kind: 'deliver-and-stall'
      /** The notification. */
      notification: CapturedNotification
      /** Where to stop. */
      stallAt: StallPoint
    }
  | {
      /** `auth.reconcileOrders({ now })` with the service's default `minAgeSeconds`. */
      kind: 'reconcile'
      /** The time to reconcile at, epoch milliseconds. */
      now: number
    }
  | {
      /** Close the store and exit with code 0. */
      kind: 'exit'
    }

/** Worker → parent: what one command did. */
export interface PaymentReport {
  /** The status the handler answered for each notification, in the order given. */
  statuses: number[]
  /** What `auth.applyPayment` answered, in the order the answers came. */
  outcomes: PaymentOutcome[]
  /** Where the worker stalled (`deliver-and-stall`); null when it did not. */
  stalled: StallPoint | null
  /** The reconciler's answer (`reconcile`), else null. */
  reconciled: ReconcileResult | null
  /** Commits the worker's store sent during the command, and how many of them lost a race. */
  commits: number
  /** Of {@link PaymentReport.commits}, those answered with a conflict (then planned again). */
  conflicts: number
}

/** `createWechatPayNotificationHandler` of `@scanauth/wechat-pay`, as the workers use it. */
export type NotificationHandlerFactory = (options: {
  auth: Pick<ScanAuth, 'applyPayment' | 'applyRefund'>
  verificationKeys: Record<string, string>
  apiV3Key: string
}) => (request: { headers: Record<string, string | string[] | undefined>; body: Uint8Array }) => Promise<NotificationAnswer>

/** The part of a notification handler's answer the workers report. */
export interface NotificationAnswer {
  /** The HTTP status for WeChat Pay: 204 applied, 4xx/5xx not. */
  status: number
}

/** Builds core's payment provider from the client settings: `createWechatPayProvider(createWechatPayClient(settings))`. */
export type PaymentProviderFactory = (settings: PaymentClientSettings) => PaymentProvider

/** One notification in the emulator's log, as the payment tests read it. */
export interface EmulatedNotification {
  /** The notification id. */
  id: string
  /** `real`, `probe`, `duplicate-same-id` or `duplicate-new-id`. */
  kind: string
  /** The order it is about. */
  outTradeNo: string
  /** The exact body sent. */
  body: string
}

/** The running WeChat Pay emulator (`startWechatPayEmulator` of `@scanauth/wechat-emulator`), as the payment tests use it. */
export interface PaymentEmulator {
  /** Its base URL. */
  readonly url: string
  /** Merchant id. */
  readonly mchid: string
  /** App id. */
  readonly appid: string
  /** The APIv3 key. */
  readonly apiV3Key: string
  /** The current platform key's id. */
  readonly platformSerial: string
  /** Verification keys by serial. */
  readonly verificationKeys: Record<string, string>
  /** The merchant key pair it generated. */
  readonly merchantKey: {
    /** The merchant certificate serial (`serial_no`). */
    serial: string
    /** The merchant's private key, PKCS#8 PEM. */
    privateKeyPem: string
  } | null
  /** Pays an order as the payer's phone would; resolves with the transaction (its `transaction_id`). */
  pay(input: { outTradeNo: string }): Promise<Record<string, unknown>>
  /** The notification log. */
  notifications(): EmulatedNotification[]
  /** Resolves once no notification is being delivered. */
  settled(): Promise<void>
  /** Stops it. */
  close(): Promise<void>
}

/** `startWechatPayEmulator`, as the payment tests call it. */
export type PaymentEmulatorFactory = (options: { mchid: string; appid: string; knobs: { duplicateNewId: boolean } }) => Promise<PaymentEmulator>
