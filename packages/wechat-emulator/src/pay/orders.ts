/**
 * The merchant's orders as WeChat Pay keeps them: creation with WeChat's re-entry rules, the
 * states NOTPAY → SUCCESS (→ REFUND) or CLOSED, `code_url`s (Native) and `prepay_id`s (JSAPI) that
 * live two hours, and the transaction object the query endpoints and notifications carry.
 *
 * Decision: past its `time_expire` an unpaid order still reads `NOTPAY` (as WeChat's does until it
 * is closed) but can no longer be paid, and a re-entry is refused; the app is expected to close it.
 *
 * A re-entry differs by kind, as WeChat documents: a Native one answers a fresh `code_url` each time,
 * a JSAPI one the order's current `prepay_id` (a new one only once the current one is 2 hours old).
 * An `out_trade_no` keeps its kind: the same number on the other endpoint is "other parameters".
 *
 * @module
 */
import { randomBytes, randomInt } from 'node:crypto'
import { WechatEmulatorError } from '../errors'
import { randomAlphanumeric } from './aead'
import { payError, type PayAnswer } from './answers'
import { wechatTime } from './time'
import type { WechatPayEmulatorOrder, WechatPayTradeState } from './types'
import type { OrderInput } from './validate'

/** A `code_url` stays scannable this long, whatever the order's `time_expire` says. */
export const CODE_URL_TTL_MS = 2 * 3600 * 1000
/** A `prepay_id` lives as long (reference wechat-pay.md §9). */
export const PREPAY_ID_TTL_MS = 2 * 3600 * 1000

/** How an order is paid: a code another phone scans, or WeChat's cashier for a known payer. */
export type TradeType = 'NATIVE' | 'JSAPI'

/** An order and everything that happened to it. */
export interface StoredOrder {
  input: OrderInput
  tradeType: TradeType
  /** The kind and the body with sorted keys: a re-entry must send the same parameters to the same endpoint. */
  canonical: string
  createdAt: number
  state: 'NOTPAY' | 'SUCCESS' | 'CLOSED'
  /** Every code_url answered, with when it was issued. */
  codeUrls: Map<string, number>
  latestCodeUrl: string
  /** Every prepay_id answered (JSAPI), with when it was issued. */
  prepayIds: Map<string, number>
  latestPrepayId: string | null
  transactionId: string | null
  successAt: number | null
  payerOpenid: string | null
  /** Sum of accepted refunds (PROCESSING or SUCCESS), fen. */
  refunded: number
}

/** JSON with object keys sorted at every level, so key order does not make two bodies differ. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** `n` random digits. */
export function randomDigits(n: number): string {
  let out = ''
  for (let i = 0; i < n; i++) out += String(randomInt(0, 10))
  return out
}

/** The orders of the emulated merchant. */
export class OrderBook {
  readonly #orders = new Map<string, StoredOrder>()
  readonly #byCodeUrl = new Map<string, StoredOrder>()
  readonly #byPrepayId = new Map<string, StoredOrder>()
  readonly #byTransactionId = new Map<string, StoredOrder>()
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /**
   * `POST /v3/pay/transactions/native` or `…/jsapi` after the checks of the body, mchid, appid (and
   * payer): a new order or a re-entry. Answers `{code_url}` or `{prepay_id}`.
   */
  create(input: OrderInput, tradeType: TradeType): PayAnswer {
    const now = this.#now()
    const canonical = `${tradeType} ${canonicalJson(input.raw)}`
    const existing = this.#orders.get(input.outTradeNo)
    if (existing !== undefined) {
      if (existing.state === 'SUCCESS') return payError(403, 'ORDERPAID', 'the order is already paid')
      if (existing.state === 'CLOSED') return payError(400, 'ORDER_CLOSED', 'the order is closed; use a new out_trade_no')
      if (existing.canonical !== canonical) {
        return payError(403, 'OUT_TRADE_NO_USED', 'out_trade_no is already used with other parameters')
      }
      if (!this.#payableInTime(existing, now)) {
        return payError(400, 'INVALID_REQUEST', 'the order is past its time_expire; close it and use a new out_trade_no')
      }
      // "参数重入": same parameters while open → the same order's code (Native: a fresh code_url).
      return { status: 200, body: this.#issueCode(existing, now) }
    }
    if (input.timeExpire !== null && input.timeExpire <= now) {
      return payError(400, 'PARAM_ERROR', 'time_expire must be in the future', { field: '#/properties/time_expire', value: input.raw.time_expire, location: 'body' })
    }
    const order: StoredOrder = {
      input,
      tradeType,
      canonical,
      createdAt: now,
      state: 'NOTPAY',
      codeUrls: new Map(),
      latestCodeUrl: '',
      prepayIds: new Map(),
      latestPrepayId: null,
      transactionId: null,
      successAt: null,
      payerOpenid: null,
      refunded: 0,
    }
    this.#orders.set(input.outTradeNo, order)
    return { status: 200, body: this.#issueCode(order, now) }
  }

  /** A JSAPI order by one of its `prepay_id`s. */
  byPrepayId(prepayId: string): StoredOrder | undefined {
    return this.#byPrepayId.get(prepayId)
  }

  /** Whether the order can be paid now: NOTPAY and not past its `time_expire`. */
  payable(order: StoredOrder): boolean {
    return order.state === 'NOTPAY' && this.#payableInTime(order, this.#now())
  }

  /** An order by `out_trade_no`. */
  get(outTradeNo: string): StoredOrder | undefined {
    return this.#orders.get(outTradeNo)
  }

  /** An order by `transaction_id`. */
  byTransactionId(transactionId: string): StoredOrder | undefined {
    return this.#byTransactionId.get(transactionId)
  }

  /** `POST …/out-trade-no/{no}/close`: 204, also for an order already closed; ORDERPAID once paid. */
  close(outTradeNo: string): PayAnswer {
    const order = this.#orders.get(outTradeNo)
    if (order === undefined) return payError(404, 'ORDER_NOT_EXIST', 'the order does not exist')
    if (order.state === 'SUCCESS') return payError(403, 'ORDERPAID', 'the order is already paid')
    order.state = 'CLOSED'
    return { status: 204 }
  }

  /**
   * Pays an order (by `out_trade_no`, `code_url` or `prepay_id`) as `openid`: by default the JSAPI
   * order's payer, else `defaultOpenid`. Throws a `WechatEmulatorError` naming why the phone would
   * refuse; a JSAPI order is only ever paid by its payer (WeChat's cashier is bound to `payer.openid`).
   */
  pay(target: { outTradeNo?: string | undefined; codeUrl?: string | undefined; prepayId?: string | undefined }, openid: string | undefined, defaultOpenid: string): StoredOrder {
    const now = this.#now()
    const order = this.#target(target)
    const no = order.input.outTradeNo
    if (order.state === 'SUCCESS') throw new WechatEmulatorError('order_paid', `pay: order ${no} is already paid`)
    if (order.state === 'CLOSED') throw new WechatEmulatorError('order_closed', `pay: order ${no} is closed`)
    if (!this.#payableInTime(order, now)) throw new WechatEmulatorError('order_expired', `pay: order ${no} is past its time_expire`)
    if (target.codeUrl !== undefined && now >= order.codeUrls.get(target.codeUrl)! + CODE_URL_TTL_MS) {
      throw new WechatEmulatorError('code_url_expired', 'pay: the code_url is older than 2 hours; the app must ask for a new one')
    }
    if (target.prepayId !== undefined && now >= order.prepayIds.get(target.prepayId)! + PREPAY_ID_TTL_MS) {
      throw new WechatEmulatorError('prepay_id_expired', 'pay: the prepay_id is older than 2 hours; the app must place the order again for a new one')
    }
    const payer = order.input.payerOpenid
    if (payer !== null && openid !== undefined && openid !== payer) {
      throw new WechatEmulatorError('wrong_payer', `pay: order ${no} is for payer ${payer}, not ${openid}`)
    }
    order.state = 'SUCCESS'
    order.successAt = now
    order.payerOpenid = payer ?? openid ?? defaultOpenid
    // 28 digits starting 4200, like WeChat's transaction ids.
    order.transactionId = `4200${randomDigits(24)}`
    this.#byTransactionId.set(order.transactionId, order)
    return order
  }

  /** The order `pay` names, or `unknown_order` / `invalid_argument`. */
  #target(target: { outTradeNo?: string | undefined; codeUrl?: string | undefined; prepayId?: string | undefined }): StoredOrder {
    const [kind, value, order] =
      target.codeUrl !== undefined
        ? ['code_url', target.codeUrl, this.#byCodeUrl.get(target.codeUrl)]
        : target.prepayId !== undefined
          ? ['prepay_id', target.prepayId, this.#byPrepayId.get(target.prepayId)]
          : target.outTradeNo !== undefined
            ? ['out_trade_no', target.outTradeNo, this.#orders.get(target.outTradeNo)]
            : [null, '', undefined]
    if (kind === null) throw new WechatEmulatorError('invalid_argument', 'pay: outTradeNo, codeUrl or prepayId is required')
    if (order === undefined) throw new WechatEmulatorError('unknown_order', `pay: unknown ${kind} ${value}`)
    return order
  }

  /** `trade_state` now: REFUND once any refund was accepted. */
  tradeState(order: StoredOrder): WechatPayTradeState {
    return order.state === 'SUCCESS' && order.refunded > 0 ? 'REFUND' : order.state
  }

  /** The transaction object of the query endpoints and the payment notification. */
  transaction(order: StoredOrder): Record<string, unknown> {
    const { input } = order
    const state = this.tradeState(order)
    const amount: Record<string, unknown> = { total: input.total, currency: 'CNY', payer_currency: 'CNY' }
    const out: Record<string, unknown> = { appid: input.appid, mchid: input.mchid, out_trade_no: input.outTradeNo }
    if (order.transactionId !== null) {
      amount.payer_total = input.total
      out.transaction_id = order.transactionId
      out.trade_type = order.tradeType
      out.bank_type = 'OTHERS'
      out.success_time = wechatTime(order.successAt!)
      out.payer = { openid: order.payerOpenid }
    }
    out.trade_state = state
    out.trade_state_desc = { NOTPAY: '订单未支付', SUCCESS: '支付成功', CLOSED: '订单已关闭', REFUND: '转入退款' }[state]
    out.attach = input.attach ?? ''
    out.amount = amount
    out.promotion_detail = []
    return out
  }

  /** Every order, oldest first, as `orders()` shows them. */
  views(): WechatPayEmulatorOrder[] {
    const now = this.#now()
    return [...this.#orders.values()].map((order) => ({
      outTradeNo: order.input.outTradeNo,
      tradeType: order.tradeType,
      description: order.input.description,
      total: order.input.total,
      notifyUrl: order.input.notifyUrl,
      tradeState: this.tradeState(order),
      payable: order.state === 'NOTPAY' && this.#payableInTime(order, now),
      expiresAt: order.input.timeExpire,
      codeUrl: order.latestCodeUrl,
      codeUrls: [...order.codeUrls.keys()],
      prepayId: order.latestPrepayId,
      payer: order.input.payerOpenid ?? order.payerOpenid,
      createdAt: order.createdAt,
      transactionId: order.transactionId,
      refunded: order.refunded,
      transaction: this.transaction(order),
    }))
  }

  #payableInTime(order: StoredOrder, now: number): boolean {
    return order.input.timeExpire === null || now < order.input.timeExpire
  }

  /** What an order's creation or re-entry answers: a fresh `code_url`, or the current (or, once that is 2 hours old, a new) `prepay_id`. */
  #issueCode(order: StoredOrder, now: number): { code_url: string } | { prepay_id: string } {
    if (order.tradeType === 'JSAPI') {
      const current = order.latestPrepayId
      if (current !== null && now < order.prepayIds.get(current)! + PREPAY_ID_TTL_MS) return { prepay_id: current }
      // WeChat's shape: wx, the Beijing time to the second, then random hex (36 characters in all).
      const prepayId = `wx${wechatTime(now).replace(/\D/g, '').slice(0, 14)}${randomBytes(11).toString('hex')}`
      order.prepayIds.set(prepayId, now)
      order.latestPrepayId = prepayId
      this.#byPrepayId.set(prepayId, order)
      return { prepay_id: prepayId }
    }
    const codeUrl = `weixin://wxpay/bizpayurl?pr=${randomAlphanumeric(9)}`
    order.codeUrls.set(codeUrl, now)
    order.latestCodeUrl = codeUrl
    this.#byCodeUrl.set(codeUrl, order)
    return { code_url: codeUrl }
  }
}
