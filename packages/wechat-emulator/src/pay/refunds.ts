/**
 * Refunds as WeChat Pay handles them: idempotent by `out_refund_no` (a retried request refunds
 * once), never more than the order's total in sum, accepted as PROCESSING and turning SUCCESS a
 * moment later (or at once), which sends a `REFUND.SUCCESS` notification.
 *
 * Not emulated: the 50-refunds-per-order cap, the one-minute spacing between refunds of an order
 * and the one-year limit (tests would only trip over them).
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { payError, type PayAnswer } from './answers'
import type { BackgroundWork } from './background'
import { randomDigits, type OrderBook, type StoredOrder } from './orders'
import { wechatTime } from './time'
import type { WechatPayEmulatorRefund, WechatPayRefundStatus } from './types'
import type { RefundInput } from './validate'

/** A refund and its progress. */
interface StoredRefund {
  input: RefundInput
  order: StoredOrder
  refundId: string
  createdAt: number
  status: WechatPayRefundStatus
  successAt: number | null
}

/** What the refund book needs from the emulator. */
export interface RefundSettings {
  orders: OrderBook
  mchid: string
  now: () => number
  /** Milliseconds from PROCESSING to SUCCESS; 0 answers SUCCESS at once. */
  delayMs: number
  work: BackgroundWork
  closed: AbortSignal
  /** Called when a refund becomes SUCCESS, with the notification's target and plaintext. */
  succeeded(notification: { url: string; outTradeNo: string; outRefundNo: string; resource: Record<string, unknown> }): void
}

/** The refunds of the emulated merchant, by `out_refund_no`. */
export class RefundBook {
  readonly #refunds = new Map<string, StoredRefund>()
  readonly #settings: RefundSettings

  constructor(settings: RefundSettings) {
    this.#settings = settings
  }

  /** `POST /v3/refund/domestic/refunds` after the checks of the body. */
  create(input: RefundInput): PayAnswer {
    const { orders, now } = this.#settings
    const existing = this.#refunds.get(input.outRefundNo)
    if (existing !== undefined) {
      // The documented retry: same out_refund_no, same refund → the same refund, money moved once.
      const sameOrder =
        (input.outTradeNo === null || input.outTradeNo === existing.order.input.outTradeNo) &&
        (input.transactionId === null || input.transactionId === existing.order.transactionId)
      if (sameOrder && input.refund === existing.input.refund) return { status: 200, body: this.#body(existing) }
      return payError(400, 'INVALID_REQUEST', 'out_refund_no is already used for another refund')
    }
    const order = input.transactionId !== null ? orders.byTransactionId(input.transactionId) : orders.get(input.outTradeNo!)
    if (order === undefined || (input.outTradeNo !== null && order.input.outTradeNo !== input.outTradeNo)) {
      return payError(404, 'RESOURCE_NOT_EXISTS', 'the order does not exist')
    }
    if (order.state !== 'SUCCESS') return payError(400, 'INVALID_REQUEST', 'the order is not paid, nothing to refund')
    if (input.total !== order.input.total) return payError(400, 'INVALID_REQUEST', `amount.total must be the order's total (${order.input.total})`)
    if (order.refunded + input.refund > order.input.total) {
      return payError(400, 'INVALID_REQUEST', `the refund exceeds the refundable amount (${order.input.total - order.refunded} fen left)`)
    }
    order.refunded += input.refund
    const refund: StoredRefund = { input, order, refundId: `50${randomDigits(27)}`, createdAt: now(), status: 'PROCESSING', successAt: null }
    this.#refunds.set(input.outRefundNo, refund)
    if (this.#settings.delayMs <= 0) this.#succeed(refund)
    else {
      this.#settings.work.run(async () => {
        await sleep(this.#settings.delayMs, undefined, { signal: this.#settings.closed })
        this.#succeed(refund)
      })
    }
    return { status: 200, body: this.#body(refund) }
  }

  /** `GET /v3/refund/domestic/refunds/{out_refund_no}`. */
  query(outRefundNo: string): PayAnswer {
    const refund = this.#refunds.get(outRefundNo)
    if (refund === undefined) return payError(404, 'RESOURCE_NOT_EXISTS', 'the refund does not exist')
    return { status: 200, body: this.#body(refund) }
  }

  /** Every refund, oldest first. */
  views(): WechatPayEmulatorRefund[] {
    return [...this.#refunds.values()].map((refund) => ({
      outRefundNo: refund.input.outRefundNo,
      outTradeNo: refund.order.input.outTradeNo,
      refund: refund.input.refund,
      status: refund.status,
      body: this.#body(refund),
    }))
  }

  #succeed(refund: StoredRefund): void {
    refund.status = 'SUCCESS'
    refund.successAt = this.#settings.now()
    const { order } = refund
    this.#settings.succeeded({
      url: refund.input.notifyUrl ?? order.input.notifyUrl,
      outTradeNo: order.input.outTradeNo,
      outRefundNo: refund.input.outRefundNo,
      resource: {
        mchid: this.#settings.mchid,
        transaction_id: order.transactionId,
        out_trade_no: order.input.outTradeNo,
        refund_id: refund.refundId,
        out_refund_no: refund.input.outRefundNo,
        refund_status: 'SUCCESS',
        success_time: wechatTime(refund.successAt),
        user_received_account: '支付用户零钱',
        amount: { total: order.input.total, refund: refund.input.refund, payer_total: order.input.total, payer_refund: refund.input.refund },
      },
    })
  }

  /** The refund object of the refund endpoints. */
  #body(refund: StoredRefund): Record<string, unknown> {
    const { order, input } = refund
    const out: Record<string, unknown> = {
      refund_id: refund.refundId,
      out_refund_no: input.outRefundNo,
      transaction_id: order.transactionId,
      out_trade_no: order.input.outTradeNo,
      channel: 'ORIGINAL',
      user_received_account: '支付用户零钱',
      create_time: wechatTime(refund.createdAt),
      status: refund.status,
      funds_account: 'AVAILABLE',
      amount: {
        total: order.input.total,
        refund: input.refund,
        from: [],
        payer_total: order.input.total,
        payer_refund: input.refund,
        settlement_refund: input.refund,
        settlement_total: order.input.total,
        discount_refund: 0,
        currency: 'CNY',
      },
      promotion_detail: [],
    }
    if (refund.successAt !== null) out.success_time = wechatTime(refund.successAt)
    return out
  }
}
