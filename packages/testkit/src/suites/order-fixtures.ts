/**
 * The orders the Store contract's order suites write straight into a store (store-api-orders,
 * store-api-order-purge, store-api-order-listing): one builder, so that every suite's order has the
 * shape core writes.
 */
import type { OrderRecord } from '@scanauth/core'

/** The suites' start of time. */
export const T0 = Date.parse('2026-01-01T00:00:00.000Z')
/** One minute, in milliseconds. */
export const MINUTE = 60_000

/** An `outTradeNo` of the real shape: `SA` + 26 characters. */
export const tradeNo = (n: number | string) => `SA${String(n).padStart(26, '0')}`

/** A fresh open order, as core opens one at T0 with a 15-minute window; `over` replaces any field. */
export function openOrderAt(outTradeNo: string, over: Partial<OrderRecord> = {}): OrderRecord {
  return {
    outTradeNo,
    userId: 1,
    planId: 'month',
    description: '月卡',
    amountFen: 1500,
    grant: { type: 'time', days: 30 },
    sceneStr: 'scene-1',
    channel: 'native',
    status: 'open',
    createdAt: T0,
    expiresAt: T0 + 15 * MINUTE,
    updatedAt: T0,
    paidAt: null,
    transactionId: null,
    authorizationId: null,
    refundedFen: 0,
    refunds: [],
    version: 1,
    ...over,
  }
}
