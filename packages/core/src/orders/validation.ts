/**
 * Input validation of the order operations (zod): a failure is `invalid_request` (400) naming the
 * field, before any read and before the payment service is asked anything (B-order-2).
 *
 * @module
 */
import { z } from 'zod'
import { PLAN_ID_PATTERN } from './options'
import { identifier, wellFormedString } from '../service/validation'

const planId = z.string({ error: 'plan must be a string' }).min(1, { error: 'plan is required' }).max(64, { error: 'plan must be at most 64 characters' })
// The address is checked as scene creation's is (B-rate-5); the poll secret is only compared with the scene's digest.
const clientAddress = identifier('clientAddress').optional()
const pollSecret = z.string({ error: 'pollSecret must be a string' }).max(512, { error: 'pollSecret is too long' }).optional()

export const purchaseInput = z.union(
  [
    z.object({ sceneStr: wellFormedString('scene').min(1, { error: 'scene is required' }), pollSecret, sessionToken: z.undefined().optional(), plan: planId, clientAddress }),
    z.object({ sessionToken: wellFormedString('sessionToken').min(1, { error: 'sessionToken is required' }), sceneStr: z.undefined().optional(), pollSecret: z.undefined().optional(), plan: planId, clientAddress }),
  ],
  { error: 'purchase needs a plan and exactly one of scene or a session' },
)

/** Whether a plan id could name a plan at all (a longer or odd one is `plan_not_found`, not a lookup). */
export const isPlanId = (value: string): boolean => PLAN_ID_PATTERN.test(value)

const text = (field: string, max = 128) => z.string({ error: `${field} must be a string` }).max(max, { error: `${field} must be at most ${max} characters` })
const fen = (field: string) => z.number({ error: `${field} must be a number` }).int({ error: `${field} must be whole fen` }).min(0).max(Number.MAX_SAFE_INTEGER)

export const providerTransaction = z.object({
  mchid: text('mchid', 32),
  appid: text('appid', 32),
  outTradeNo: text('outTradeNo', 32).min(1),
  transactionId: text('transactionId', 64).nullable(),
  tradeState: text('tradeState', 32),
  amount: z.object({ total: fen('amount.total'), currency: text('amount.currency', 16) }),
  successTime: text('successTime', 64).optional(),
})

export const providerRefund = z.object({
  mchid: text('mchid', 32),
  outTradeNo: text('outTradeNo', 32).min(1),
  transactionId: text('transactionId', 64),
  outRefundNo: text('outRefundNo', 64).min(1),
  refundId: text('refundId', 64),
  refundStatus: text('refundStatus', 32),
  amount: z.object({ refund: fen('amount.refund'), total: fen('amount.total') }),
})

export const reconcileOptions = z.object({
  now: z.number().int().min(0).optional(),
  minAgeSeconds: z.number().int().min(0).max(86_400).default(60),
  limit: z.number().int().min(1).max(10_000).default(500),
})
