/**
 * The `payments` option of `createScanAuth`: the provider, the plan catalog, and the order window,
 * parsed once with zod (B-order-1). A catalog mistake (a yuan float, a duplicate id) fails at
 * start-up with a message naming the plan, never at the first purchase.
 *
 * @module
 */
import { z } from 'zod'
import type { PaymentProvider, Plan } from './payments'
import { DAY, SECOND } from './rules/time'

/** The pattern of a plan id: short, URL-safe, printable (it travels in JSON bodies and logs). */
export const PLAN_ID_PATTERN = /^[0-9A-Za-z_.-]{1,64}$/

/** The longest payment window: WeChat Pay's `code_url` lives two hours, so a longer order would outlive its code. */
export const MAX_ORDER_TTL_MINUTES = 120

const hasProviderMethods = (value: unknown) =>
  typeof value === 'object' &&
  value !== null &&
  ['createNativeOrder', 'queryOrder', 'closeOrder'].every((n) => typeof (value as Record<string, unknown>)[n] === 'function') &&
  typeof (value as { merchant?: { mchid?: unknown; appid?: unknown } }).merchant?.mchid === 'string' &&
  typeof (value as { merchant?: { mchid?: unknown; appid?: unknown } }).merchant?.appid === 'string'

/** Integer fen, never yuan: `19.9` is refused, not rounded (B-order-1). */
const amountFen = z
  .number({ error: 'amountFen must be a number of fen' })
  // Not zod's .int(), which also refuses unsafe integers with the same message: each mistake its own words.
  .refine(Number.isInteger, { error: 'amountFen must be a whole number of fen (1990 for ¥19.90), never yuan' })
  .refine((fen) => fen > 0, { error: 'amountFen must be positive' })
  .refine((fen) => fen <= Number.MAX_SAFE_INTEGER, { error: 'amountFen must be a safe integer' })

const planGrant = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('time'),
    days: z
      .number()
      .positive()
      .max(100 * 365.25)
      // Stores keep whole milliseconds and grants whole seconds: a length that is not one is a typo.
      .refine((days) => Number.isInteger((days * DAY) / SECOND), { error: 'days must come to a whole number of seconds' }),
  }),
  z.strictObject({ type: z.literal('points'), points: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
])

/** One plan of the catalog. */
export const planSchema = z.strictObject({
  id: z.string().regex(PLAN_ID_PATTERN, { error: 'id must be 1–64 characters of 0-9 A-Z a-z _ . -' }),
  description: z
    .string()
    .min(1, { error: 'description must not be empty' })
    // WeChat Pay's string(127) is read as bytes here, the stricter reading: 42 Chinese characters fit.
    .refine((text) => Buffer.byteLength(text, 'utf8') <= 127, { error: 'description must be at most 127 bytes of UTF-8 (WeChat Pay shows it to the payer)' }),
  amountFen,
  grant: planGrant,
})

/** The `payments` option. */
export const paymentsSchema = z.strictObject({
  provider: z.custom<PaymentProvider>(hasProviderMethods, {
    error: 'provider must have merchant { mchid, appid } and createNativeOrder(), queryOrder() and closeOrder(), e.g. createWechatPayProvider() of @scanauth/wechat-pay',
  }),
  plans: z
    .array(planSchema)
    .min(1, { error: 'plans must list at least one plan' })
    .refine((plans) => new Set(plans.map((p) => p.id)).size === plans.length, { error: 'plan ids must be unique' }),
  orderTtlMinutes: z.number().int().min(1).max(MAX_ORDER_TTL_MINUTES).default(15),
})

/** The `payments` option of `createScanAuth` (docs/payments.md). */
export interface PaymentOptions {
  /** The payment service, e.g. `createWechatPayProvider(client)` of `@scanauth/wechat-pay`. */
  provider: PaymentProvider
  /** What a device may buy, in the order `GET {base}/plans` lists them. Amounts in fen. */
  plans: Plan[]
  /** How long an order can be paid, in whole minutes, 1–120. Default 15. */
  orderTtlMinutes?: number
}

/** The `payments` option after parsing. */
export type ResolvedPayments = z.infer<typeof paymentsSchema>
