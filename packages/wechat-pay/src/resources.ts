/**
 * The transaction and refund objects of WeChat Pay (as answered by a query, a refund call, or
 * decrypted from a notification), and their translation into core's `ProviderTransaction` and
 * `ProviderRefund`. The translation checks the fields core relies on and copies values as WeChat Pay
 * sent them: core compares them with the stored order (B-order-5), so nothing here fills in a
 * missing merchant, order or amount with what we expect.
 *
 * @module
 */
import type { ProviderRefund, ProviderTransaction } from '@scanauth/core'
import { WechatPayError } from './errors'

/** The `amount` of a transaction, in fen. */
export interface WechatPayTransactionAmount {
  /** The order total. */
  total?: number
  /** What the payer paid (after coupons). */
  payer_total?: number
  /** `CNY`. */
  currency?: string
  /** The payer's currency. */
  payer_currency?: string
}

/** The `amount` of a refund, in fen. */
export interface WechatPayRefundAmount {
  /** Refunded by this refund. */
  refund?: number
  /** The order total. */
  total?: number
  /** What the payer paid. */
  payer_total?: number
  /** What the payer gets back. */
  payer_refund?: number
  /** `CNY`. */
  currency?: string
}

/** A transaction as WeChat Pay sends it (query answer, `TRANSACTION.SUCCESS` resource); snake_case as on the wire. */
export interface WechatPayTransaction {
  /** App id the order was opened for. */
  appid: string
  /** Merchant id. */
  mchid: string
  /** Our order id. */
  out_trade_no: string
  /** WeChat Pay's transaction id; absent while unpaid. */
  transaction_id?: string
  /** `NATIVE`, `JSAPI`, … */
  trade_type?: string
  /** `SUCCESS`, `REFUND`, `NOTPAY`, `CLOSED`, `REVOKED`, `USERPAYING`, `PAYERROR`. */
  trade_state: string
  /** Human-readable state. */
  trade_state_desc?: string
  /** Bank of the payment. */
  bank_type?: string
  /** `attach` echoed back. */
  attach?: string
  /** When paid, RFC 3339. */
  success_time?: string
  /** The payer. */
  payer?: {
    /** The payer's openid under `appid`. */
    openid?: string
  }
  /** Amounts in fen. */
  amount?: WechatPayTransactionAmount
  /** Anything else WeChat Pay adds. */
  [field: string]: unknown
}

/** A refund as WeChat Pay sends it (refund answer or query, `REFUND.*` resource); snake_case as on the wire. */
export interface WechatPayRefund {
  /** Merchant id (in notifications; refund answers omit it). */
  mchid?: string
  /** WeChat Pay's refund id. */
  refund_id: string
  /** Our refund number. */
  out_refund_no: string
  /** The paid order's transaction id. */
  transaction_id: string
  /** Our order id. */
  out_trade_no: string
  /** Refund answers: `SUCCESS`, `CLOSED`, `PROCESSING`, `ABNORMAL`. */
  status?: string
  /** Refund notifications: the same states. */
  refund_status?: string
  /** Refund channel. */
  channel?: string
  /** Where the money went. */
  user_received_account?: string
  /** When it succeeded, RFC 3339. */
  success_time?: string
  /** When it was accepted, RFC 3339. */
  create_time?: string
  /** Amounts in fen. */
  amount?: WechatPayRefundAmount
  /** Anything else WeChat Pay adds. */
  [field: string]: unknown
}

/** The states of an order that WeChat Pay counts as paid. */
const PAID_STATES = new Set(['SUCCESS', 'REFUND'])

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function field(source: Record<string, unknown>, name: string, what: string): string {
  const value = source[name]
  if (typeof value !== 'string' || value === '') throw new WechatPayError('malformed_body', `the ${what} has no ${name}`)
  return value
}

function fen(value: unknown, name: string, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new WechatPayError('malformed_body', `the ${what} has no integer ${name}`)
  }
  return value
}

/**
 * Core's view of a WeChat Pay transaction. Throws `malformed_body` when a field core needs is
 * missing; for an unpaid order (`NOTPAY`, `CLOSED`, …) a missing amount reads as 0 and an empty
 * currency, which core never compares for an unpaid report.
 */
export function toProviderTransaction(transaction: unknown): ProviderTransaction {
  if (!isRecord(transaction)) throw new WechatPayError('malformed_body', 'the transaction is not a JSON object')
  const what = 'transaction'
  const tradeState = field(transaction, 'trade_state', what)
  const paid = PAID_STATES.has(tradeState)
  const amount = isRecord(transaction.amount) ? transaction.amount : {}
  const total = !paid && amount.total === undefined ? 0 : fen(amount.total, 'amount.total', what)
  const currency = typeof amount.currency === 'string' ? amount.currency : typeof amount.payer_currency === 'string' && !paid ? amount.payer_currency : ''
  if (paid && currency === '') throw new WechatPayError('malformed_body', 'the paid transaction has no amount.currency')
  const transactionId = typeof transaction.transaction_id === 'string' && transaction.transaction_id !== '' ? transaction.transaction_id : null
  if (paid && transactionId === null) throw new WechatPayError('malformed_body', 'the paid transaction has no transaction_id')
  return {
    mchid: field(transaction, 'mchid', what),
    appid: field(transaction, 'appid', what),
    outTradeNo: field(transaction, 'out_trade_no', what),
    transactionId,
    tradeState,
    amount: { total, currency },
    ...(typeof transaction.success_time === 'string' && transaction.success_time !== '' ? { successTime: transaction.success_time } : {}),
  }
}

/**
 * Core's view of a WeChat Pay refund, from a refund answer (`status`) or notification
 * (`refund_status`). `mchid` is absent from refund answers: pass the client's as `fallbackMchid`
 * (a notification always names its own, which is then what core checks).
 */
export function toProviderRefund(refund: unknown, fallbackMchid?: string): ProviderRefund {
  if (!isRecord(refund)) throw new WechatPayError('malformed_body', 'the refund is not a JSON object')
  const what = 'refund'
  const status = typeof refund.refund_status === 'string' ? refund.refund_status : refund.status
  if (typeof status !== 'string' || status === '') throw new WechatPayError('malformed_body', 'the refund has no refund_status')
  const mchid = typeof refund.mchid === 'string' && refund.mchid !== '' ? refund.mchid : fallbackMchid
  if (mchid === undefined) throw new WechatPayError('malformed_body', 'the refund has no mchid')
  const amount = isRecord(refund.amount) ? refund.amount : {}
  return {
    mchid,
    outTradeNo: field(refund, 'out_trade_no', what),
    transactionId: field(refund, 'transaction_id', what),
    outRefundNo: field(refund, 'out_refund_no', what),
    refundId: field(refund, 'refund_id', what),
    refundStatus: status,
    amount: { refund: fen(amount.refund, 'amount.refund', what), total: fen(amount.total, 'amount.total', what) },
  }
}
