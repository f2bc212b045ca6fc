/**
 * The checks WeChat Pay makes of request bodies before any business rule: a Native or JSAPI order
 * (`POST /v3/pay/transactions/native`, `…/jsapi`) and a refund (`POST /v3/refund/domestic/refunds`).
 * Each answers the first problem as a 400 `PARAM_ERROR` naming the field, as WeChat's schema check does.
 *
 * @module
 */
import { paramError, type PayAnswer } from './answers'
import { parseRfc3339 } from './time'

/** A Native or JSAPI order body that passed the checks. */
export interface OrderInput {
  appid: string
  mchid: string
  description: string
  outTradeNo: string
  timeExpire: number | null
  attach: string | null
  notifyUrl: string
  total: number
  /** `payer.openid` of a JSAPI order; null for a Native one (which has no payer until it is paid). */
  payerOpenid: string | null
  /** The body as received, for the "same parameters" comparison of a re-entry. */
  raw: Record<string, unknown>
}

/** A refund body that passed the checks. */
export interface RefundInput {
  outTradeNo: string | null
  transactionId: string | null
  outRefundNo: string
  reason: string | null
  notifyUrl: string | null
  refund: number
  total: number
}

/** `out_trade_no`: 6–32 characters of digits, letters, `_`, `-`, `*`. */
const OUT_TRADE_NO = /^[0-9A-Za-z_\-*]{6,32}$/
/** `out_refund_no`: up to 64 characters of digits, letters, `_ - | * @`. */
const OUT_REFUND_NO = /^[0-9A-Za-z_\-|*@]{1,64}$/

/** A JSON object body, or null when the body is not one. */
export function jsonObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/**
 * Length as WeChat's `string(n)` limits count it. The emulator counts UTF-8 bytes, the stricter of
 * the two readings, so a description it accepts is never too long for WeChat.
 */
function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/** A required string field of at most `max` bytes, or the error. */
function requiredString(body: Record<string, unknown>, field: string, max: number): string | PayAnswer {
  const value = body[field]
  if (value === undefined || value === null || value === '') return paramError(field, 'is required')
  if (typeof value !== 'string') return paramError(field, 'must be a string', value)
  if (byteLength(value) > max) return paramError(field, `must be at most ${max} bytes`, value)
  return value
}

/** An optional string field of at most `max` bytes: null when absent. */
function optionalString(body: Record<string, unknown>, field: string, max: number): string | null | PayAnswer {
  if (body[field] === undefined || body[field] === null) return null
  return requiredString(body, field, max)
}

/** Checks a notify URL the way WeChat does, except that plain http (and a port) is allowed for local callbacks. */
function notifyUrlProblem(value: string): string | null {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute URL'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL'
  if (url.search !== '' || value.includes('?')) return 'must not carry a query string'
  return null
}

/** The `amount` object with a positive integer `field` (fen) and currency CNY, or the error. */
function amountField(body: Record<string, unknown>, field: string): number | PayAnswer {
  const amount = body.amount
  if (typeof amount !== 'object' || amount === null || Array.isArray(amount)) return paramError('amount', 'is required')
  const value = (amount as Record<string, unknown>)[field]
  // Amounts are integer fen; 19.9 (yuan) or "1990" are the classic mistakes, so both are refused.
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) return paramError(`amount.${field}`, 'must be a positive integer (fen)', value)
  const currency = (amount as Record<string, unknown>).currency
  if (currency !== undefined && currency !== 'CNY') return paramError('amount.currency', 'must be CNY', currency)
  return value
}

const isAnswer = (value: unknown): value is PayAnswer => typeof value === 'object' && value !== null && 'status' in value

/** Checks a Native order body. */
export function validateNativeOrder(body: Record<string, unknown>): OrderInput | PayAnswer {
  const appid = requiredString(body, 'appid', 32)
  if (isAnswer(appid)) return appid
  const mchid = requiredString(body, 'mchid', 32)
  if (isAnswer(mchid)) return mchid
  const description = requiredString(body, 'description', 127)
  if (isAnswer(description)) return description
  const outTradeNo = requiredString(body, 'out_trade_no', 32)
  if (isAnswer(outTradeNo)) return outTradeNo
  if (!OUT_TRADE_NO.test(outTradeNo)) return paramError('out_trade_no', 'must be 6-32 characters of 0-9 A-Z a-z _ - *', outTradeNo)
  const timeExpireText = optionalString(body, 'time_expire', 64)
  if (isAnswer(timeExpireText)) return timeExpireText
  let timeExpire: number | null = null
  if (timeExpireText !== null) {
    timeExpire = parseRfc3339(timeExpireText)
    if (timeExpire === null) return paramError('time_expire', 'must be an RFC 3339 date-time with offset, e.g. 2018-06-08T10:34:56+08:00', timeExpireText)
  }
  const attach = optionalString(body, 'attach', 128)
  if (isAnswer(attach)) return attach
  const notifyUrl = requiredString(body, 'notify_url', 255)
  if (isAnswer(notifyUrl)) return notifyUrl
  const problem = notifyUrlProblem(notifyUrl)
  if (problem !== null) return paramError('notify_url', problem, notifyUrl)
  const total = amountField(body, 'total')
  if (isAnswer(total)) return total
  return { appid, mchid, description, outTradeNo, timeExpire, attach, notifyUrl, total, payerOpenid: null, raw: body }
}

/** Checks a JSAPI order body: a Native order's fields, then the required `payer.openid` (string(128)). */
export function validateJsapiOrder(body: Record<string, unknown>): OrderInput | PayAnswer {
  const input = validateNativeOrder(body)
  if (isAnswer(input)) return input
  const payer = body.payer
  if (payer === undefined || payer === null) return paramError('payer', 'is required')
  if (typeof payer !== 'object' || Array.isArray(payer)) return paramError('payer', 'must be an object', payer)
  const openid = requiredString(payer as Record<string, unknown>, 'openid', 128)
  // requiredString names the field as it sees it; WeChat's pointer is into payer.
  if (isAnswer(openid)) return paramError('payer.openid', (openid.body as { detail: { issue: string } }).detail.issue, (payer as Record<string, unknown>).openid)
  return { ...input, payerOpenid: openid }
}

/** Checks a refund body. */
export function validateRefund(body: Record<string, unknown>): RefundInput | PayAnswer {
  const outTradeNo = optionalString(body, 'out_trade_no', 32)
  if (isAnswer(outTradeNo)) return outTradeNo
  const transactionId = optionalString(body, 'transaction_id', 32)
  if (isAnswer(transactionId)) return transactionId
  if (outTradeNo === null && transactionId === null) return paramError('out_trade_no', 'out_trade_no or transaction_id is required')
  const outRefundNo = requiredString(body, 'out_refund_no', 64)
  if (isAnswer(outRefundNo)) return outRefundNo
  if (!OUT_REFUND_NO.test(outRefundNo)) return paramError('out_refund_no', 'must be at most 64 characters of 0-9 A-Z a-z _ - | * @', outRefundNo)
  const reason = optionalString(body, 'reason', 80)
  if (isAnswer(reason)) return reason
  const notifyUrl = optionalString(body, 'notify_url', 256)
  if (isAnswer(notifyUrl)) return notifyUrl
  if (notifyUrl !== null) {
    const problem = notifyUrlProblem(notifyUrl)
    if (problem !== null) return paramError('notify_url', problem, notifyUrl)
  }
  const refund = amountField(body, 'refund')
  if (isAnswer(refund)) return refund
  const total = amountField(body, 'total')
  if (isAnswer(total)) return total
  return { outTradeNo, transactionId, outRefundNo, reason, notifyUrl, refund, total }
}
