/**
 * The `payments` option of `createScanAuth`: the provider, the plan catalog, and the order window,
 * parsed once with zod (B-order-1). A catalog mistake (a yuan float, a duplicate id) fails at
 * start-up with a message naming the plan, never at the first purchase.
 *
 * @module
 */
import { z } from 'zod'
import type { PaymentProvider, Plan } from './provider'
import type { PhonePayOptions } from '../phone/api'
import type { WebOAuthProvider } from '../service/confirm-api'
import { DAY, SECOND } from '../rules/time'
import { DEFAULT_PHONE_TICKET_TTL_MINUTES } from '../rules/phone'

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

/** The longest plan description: WeChat Pay's `string(127)`, read as UTF-8 bytes (the stricter reading). */
export const MAX_PLAN_DESCRIPTION_BYTES = 127

/** The longest time grant of a plan, in days: 100 years, so every end time stays a valid date. */
export const MAX_PLAN_DAYS = 100 * 365.25

/** Whether a price is whole fen, positive and safe (B-order-1): never yuan, never rounded. */
export function isPlanAmountFen(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/** Whether a plan description is 1 to {@link MAX_PLAN_DESCRIPTION_BYTES} bytes of UTF-8 (B-order-1). */
export function isPlanDescription(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && Buffer.byteLength(value, 'utf8') <= MAX_PLAN_DESCRIPTION_BYTES
}

/**
 * Whether a time grant's length is above 0, at most {@link MAX_PLAN_DAYS}, and whole seconds (B-order-1):
 * stores keep whole milliseconds and grants whole seconds, so any other length is a typo.
 */
export function isPlanDays(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= MAX_PLAN_DAYS && Number.isInteger((value * DAY) / SECOND)
}

/** Whether a points grant is a positive safe whole number (B-order-1). */
export function isPlanPoints(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/** Integer fen, never yuan: `19.9` is refused, not rounded (B-order-1). Each mistake its own words. */
const amountFen = z
  .number({ error: 'amountFen must be a number of fen' })
  .refine(Number.isInteger, { error: 'amountFen must be a whole number of fen (1990 for ¥19.90), never yuan' })
  .refine((fen) => fen > 0, { error: 'amountFen must be positive' })
  .refine((fen) => fen <= Number.MAX_SAFE_INTEGER, { error: 'amountFen must be a safe integer' })

const planGrant = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('time'),
    days: z.number().refine(isPlanDays, { error: `days must be above 0, at most ${MAX_PLAN_DAYS}, and come to a whole number of seconds` }),
  }),
  z.strictObject({ type: z.literal('points'), points: z.number().refine(isPlanPoints, { error: 'points must be a positive whole number' }) }),
])

/** One plan of the catalog. */
export const planSchema = z.strictObject({
  id: z.string().regex(PLAN_ID_PATTERN, { error: 'id must be 1–64 characters of 0-9 A-Z a-z _ . -' }),
  description: z
    .string()
    .min(1, { error: 'description must not be empty' })
    // WeChat Pay's string(127) is read as bytes here, the stricter reading: 42 Chinese characters fit.
    .refine(isPlanDescription, { error: `description must be at most ${MAX_PLAN_DESCRIPTION_BYTES} bytes of UTF-8 (WeChat Pay shows it to the payer)` }),
  amountFen,
  grant: planGrant,
})

const hasOAuthMethods = (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as WebOAuthProvider).authorizeUrl === 'function' && typeof (value as WebOAuthProvider).exchangeCode === 'function'

/** An absolute http(s) address (a string option; a function is asked when needed). */
const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

/** The `payments.phone` option (B-phone-1…10). */
export const phoneSchema = z.strictObject({
  url: z.union([
    z.string().refine(isHttpUrl, { error: 'phone.url must be the absolute http(s) address of the phone pages ({base}/m/)' }),
    z.custom<() => string>((value) => typeof value === 'function'),
  ]),
  oauth: z.custom<WebOAuthProvider>(hasOAuthMethods, { error: 'phone.oauth must have authorizeUrl() and exchangeCode(), e.g. createWechatWebOAuth() of @scanauth/wechat' }),
  ticketTtlMinutes: z.number().int().min(1).max(1440).default(DEFAULT_PHONE_TICKET_TTL_MINUTES),
  emulatorBridgeUrl: z.string().refine(isHttpUrl, { error: 'phone.emulatorBridgeUrl must be an absolute http(s) address' }).optional(),
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
  phone: phoneSchema.optional(),
}).refine((payments) => payments.phone === undefined || typeof payments.provider.createJsapiOrder === 'function', {
  error: 'payments.phone needs a provider with createJsapiOrder() (WeChat Pay JSAPI), e.g. createWechatPayProvider() of @scanauth/wechat-pay',
  path: ['phone'],
})

/** The `payments` option of `createScanAuth` (docs/payments.md). */
export interface PaymentOptions {
  /** The payment service, e.g. `createWechatPayProvider(client)` of `@scanauth/wechat-pay`. */
  provider: PaymentProvider
  /** What a device may buy, in the order `GET {base}/plans` lists them. Amounts in fen. */
  plans: Plan[]
  /** How long an order can be paid, in whole minutes, 1–120. Default 15. */
  orderTtlMinutes?: number
  /**
   * Selling on the phone that scanned, with WeChat Pay JSAPI inside WeChat (docs/payments.md): the
   * pages under `{base}/m/`, and the link a `need_purchase` scan's reply carries. Off when absent.
   */
  phone?: PhonePayOptions
}

/** The `payments` option after parsing. */
export type ResolvedPayments = z.infer<typeof paymentsSchema>

/** The `payments.phone` option after parsing. */
export type ResolvedPhone = z.infer<typeof phoneSchema>
