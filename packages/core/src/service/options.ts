/**
 * Options of `createScanAuth`, parsed once with zod; defaults live here and nowhere else.
 *
 * @module
 */
import { remindersSchema } from '../reminders/options'
import type { ReminderOptions } from '../reminders/api'
import { z } from 'zod'
import { ScanAuthError } from '../errors'
import type { QrProvider } from './qr'
import type { Store } from '../store/contract'
import type { ScanEvent, ActivationEvent, ConfirmEvent, OrderPaidEvent, PaymentRejectedEvent } from './hooks'
import { paymentsSchema, type PaymentOptions } from '../orders/options'
import type { ConfirmationOptions, WebOAuthProvider } from './confirm-api'
import { DEFAULT_CONFIRM_TICKET_TTL_SECONDS } from '../rules/confirm'
import type { WindowLimit } from '../rules/rate-limits'
import type { TelemetryMeter, TelemetryOptions, TelemetryTracer } from '../telemetry/types'

const hasMethods = (...names: string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function')

/** A window of at most one day: longer ones would hold a refused device or address out for days. */
const windowLimit = z.strictObject({
  limit: z.number().int().positive().max(1_000_000_000),
  windowSeconds: z.number().int().positive().max(86_400),
})

/**
 * The defaults of `rateLimits` (docs/behaviour.md, B-rate-4…6, B-rate-9…11). A device needs a new code
 * once per scene lifetime or when a person asks, so 10 a minute is generous; 30 a minute leaves room
 * for a few devices behind one NAT; 90 000 a day stays under WeChat's 100 000 so that other uses of
 * the account's quota keep some; 120 polls a minute is twice what a device polling every second makes.
 * A person buying opens one order, a few more when changing plans or after a failed payment, so 10
 * purchases in 10 minutes is several honest purchases while it holds a stranger with a scene or a
 * session to one close and one create at the payment service a minute; 30 in 10 minutes per address
 * leaves room for a few buyers behind one NAT (a shop's kiosks, an office).
 */
export const DEFAULT_RATE_LIMITS = {
  perDevice: { limit: 10, windowSeconds: 60 },
  perAddress: { limit: 30, windowSeconds: 60 },
  dailyQrBudget: 90_000,
  statusPollsPerScene: { limit: 120, windowSeconds: 60 },
  purchasesPerUser: { limit: 10, windowSeconds: 600 },
  purchasesPerAddress: { limit: 30, windowSeconds: 600 },
} as const satisfies Required<RateLimitOptions>

/** `rateLimits: false`: every limit off. */
const NO_RATE_LIMITS = {
  perDevice: false,
  perAddress: false,
  dailyQrBudget: false,
  statusPollsPerScene: false,
  purchasesPerUser: false,
  purchasesPerAddress: false,
} as const satisfies Required<RateLimitOptions>

const rateLimitsSchema = z.strictObject({
  perDevice: z.union([windowLimit, z.literal(false)]).default(DEFAULT_RATE_LIMITS.perDevice),
  perAddress: z.union([windowLimit, z.literal(false)]).default(DEFAULT_RATE_LIMITS.perAddress),
  dailyQrBudget: z.union([z.number().int().positive().max(1_000_000_000), z.literal(false)]).default(DEFAULT_RATE_LIMITS.dailyQrBudget),
  statusPollsPerScene: z.union([windowLimit, z.literal(false)]).default(DEFAULT_RATE_LIMITS.statusPollsPerScene),
  purchasesPerUser: z.union([windowLimit, z.literal(false)]).default(DEFAULT_RATE_LIMITS.purchasesPerUser),
  purchasesPerAddress: z.union([windowLimit, z.literal(false)]).default(DEFAULT_RATE_LIMITS.purchasesPerAddress),
})

const optionsSchema = z.object({
  store: z.custom<Store>(hasMethods('load', 'commit', 'listLedger', 'endSessions', 'incrementCounter', 'deleteCounter', 'watchScenes'), {
    error: 'store must implement load(), commit(), listLedger(), endSessions(), incrementCounter(), deleteCounter() and watchScenes()',
  }),
  qr: z.custom<QrProvider>(hasMethods('createQr'), { error: 'qr must implement createQr()' }),
  sceneTtlSeconds: z.number().int().positive().max(2_592_000).default(300),
  // At most 100 years, so every expiry stays a valid date.
  sessionTtlHours: z.number().positive().max(100 * 365.25 * 24).default(168),
  freeTrialDays: z.number().positive().max(100 * 365.25).default(7),
  now: z.custom<() => number>((v) => typeof v === 'function', { error: 'now must be a function' }).default(() => Date.now),
  hooks: z.custom<ScanAuthHooks>((v) => typeof v === 'object' && v !== null, { error: 'hooks must be an object' }).default(() => ({})),
  // `prefault`: an absent `rateLimits` is parsed as `{}`, so each limit gets its own default;
  // `false` is every limit off, in one word (tests over HTTP, a trusted network).
  rateLimits: z.preprocess(
    (limits) => (limits === false ? NO_RATE_LIMITS : limits),
    rateLimitsSchema.prefault({}),
  ),
  payments: paymentsSchema.optional(),
  reminders: remindersSchema.optional(),
  confirm: z.enum(['scan', 'link'], { error: "confirm must be 'scan' or 'link'" }).default('scan'),
  confirmation: z
    .strictObject({
      url: z
        .union([
          z.url({ protocol: /^https?$/, error: 'confirmation.url must be an http(s) URL' }),
          z.custom<() => string>((v) => typeof v === 'function', { error: 'confirmation.url must be an http(s) URL or a function answering one' }),
        ])
        .optional(),
      oauth: z
        .custom<WebOAuthProvider>(hasMethods('authorizeUrl', 'exchangeCode'), { error: 'confirmation.oauth must implement authorizeUrl() and exchangeCode()' })
        .optional(),
      ticketTtlSeconds: z.number().int().min(30).max(600).default(DEFAULT_CONFIRM_TICKET_TTL_SECONDS),
    })
    .prefault({}),
  requirePollSecret: z.boolean().default(false),
  telemetry: z
    .union([
      z.boolean(),
      z.strictObject({
        tracer: z.custom<TelemetryTracer>(hasMethods('startSpan')).optional(),
        meter: z.custom<TelemetryMeter>(hasMethods('createCounter', 'createHistogram')).optional(),
      }),
    ], { error: 'telemetry must be true, false or { tracer?, meter? } (a tracer with startSpan(), a meter with createCounter() and createHistogram())' })
    .default(true),
})

/** Optional callbacks for logging and metrics, called after a change is committed. */
export interface ScanAuthHooks {
  /** A scan was handled (any result; `scanned` with `confirm: 'link'`). */
  onScan?(event: ScanEvent): void
  /** With `confirm: 'link'`: the scanner confirmed or denied on the phone. */
  onConfirm?(event: ConfirmEvent): void
  /** An authorization became active. */
  onActivate?(event: ActivationEvent): void
  /** A payment granted an order's plan (once per order, on the instance that applied it). */
  onOrderPaid?(event: OrderPaidEvent): void
  /**
   * An authentic payment or refund report was not applied: another merchant or app, an unknown
   * order, another amount (B-order-5). Worth an alert: it is a misconfiguration or an attempt at fraud.
   */
  onPaymentRejected?(event: PaymentRejectedEvent): void
  /** A hook threw; the operation itself has already succeeded. Without it, hook errors are ignored. */
  onHookError?(error: unknown): void
}

/** Options of `createScanAuth`. */
export interface ScanAuthOptions {
  /** Where scenes, users, authorizations and sessions live: `MemoryStore`, `SqliteStore`, `RedisStore`. */
  store: Store
  /** Creates the scannable code, e.g. `createWechatQrProvider` from `@scanauth/wechat`. */
  qr: QrProvider
  /** Scene (QR code) lifetime in seconds. Default 300. */
  sceneTtlSeconds?: number
  /** Session lifetime in hours. Default 168 (7 days). */
  sessionTtlHours?: number
  /** Length of the one free trial per user, in days. Default 7. */
  freeTrialDays?: number
  /** The clock, in epoch milliseconds. Default `Date.now`. Tests drive time through it. */
  now?: () => number
  /** Optional callbacks. */
  hooks?: ScanAuthHooks
  /**
   * Limits on the unauthenticated routes and on purchases (docs/security.md, docs/behaviour.md
   * B-rate-1…12). On by default; each one can be set or turned off with `false`, and `rateLimits: false`
   * turns every one off (a test that creates many scenes over HTTP; never a server facing the internet).
   */
  rateLimits?: RateLimitOptions | false
  /**
   * Selling access (docs/payments.md): the payment provider, the plan catalog and the order window.
   * Without it, `need_purchase` is where the journey ends and the purchase routes answer 404. The
   * store must have the order methods (every scanauth store does).
   */
  payments?: PaymentOptions
  /**
   * Reminders before access ends (docs/reminders.md): `auth.sendReminders()` tells each person once
   * per lead before their time ends (and once when their points run low), through the notifier
   * (`createWechatReminderNotifier` of `@scanauth/wechat`). The store must have
   * `listActiveAuthorizations` (every scanauth store does).
   */
  reminders?: ReminderOptions
  /**
   * What a scan means (docs/security.md, "QR phishing"). `'scan'` (default): the scan is the consent and
   * signs the device in at once, as docs/behaviour.md describes. `'link'`: a scan moves the scene to
   * `scanned`, the reply links the scanner to a confirm page that names the device, and only the
   * scanner's Confirm signs it in (B-confirm-1…12); polls then also answer `scanned` and `denied`.
   */
  confirm?: 'scan' | 'link'
  /** Confirm on the phone: the page's public address, WeChat web OAuth, the ticket's life. Used with `confirm: 'link'`. */
  confirmation?: ConfirmationOptions
  /**
   * Issue a poll secret with every scene (`CreateSceneResult.pollSecret`) and give the session
   * token only to a poll that presents it (B-secret-1…4): a scene_str seen in a log or over a
   * shoulder is then worth nothing. Default false.
   */
  requirePollSecret?: boolean
  /**
   * OpenTelemetry spans and metrics (docs/operations.md, "Traces and metrics"). By default (`true`)
   * they go to the global tracer and meter providers when `@opentelemetry/api` is installed (an
   * optional peer dependency, loaded on first use: without it nothing is recorded and nothing
   * fails). `false` turns them off and never loads it; `{ tracer, meter }` sends them to a tracer
   * and a meter of your own (one left out is taken from the global API).
   */
  telemetry?: boolean | TelemetryOptions
}

/**
 * The rate limits of `createScanAuth` (docs/behaviour.md, B-rate-1…12). Scene creation and purchases
 * count in the store, so every instance over one store shares the counts; the poll ceiling counts in
 * each instance's memory, so a pending poll stays one store read.
 */
export interface RateLimitOptions {
  /** Scenes per `deviceId`. Default 10 per 60 s; `false` turns it off. */
  perDevice?: WindowLimit | false
  /**
   * Scenes per client address (`createScene`'s `clientAddress`; an IPv6 address counts as its /64).
   * Default 30 per 60 s; `false` turns it off. A call without an address is not counted here.
   */
  perAddress?: WindowLimit | false
  /**
   * QR codes the account may create per UTC day, across every instance. Default 90 000 (WeChat
   * allows 100 000 temporary codes a day per account); `false` turns it off.
   */
  dailyQrBudget?: number | false
  /** Polls (`getStatus`) per scene, counted per instance. Default 120 per 60 s; `false` turns it off. */
  statusPollsPerScene?: WindowLimit | false
  /**
   * Purchases (`purchase`, by scene or by session) per buyer, counted in the store (B-rate-10). Each
   * one may cost a close and a create at the payment service and an order row. Default 10 per
   * 600 s; `false` turns it off.
   */
  purchasesPerUser?: WindowLimit | false
  /**
   * Purchases per client address (`purchase`'s `clientAddress`, which the HTTP handlers pass; an
   * IPv6 address counts as its /64), counted in the store (B-rate-11). Default 30 per 600 s; `false`
   * turns it off. A call without an address is not counted here.
   */
  purchasesPerAddress?: WindowLimit | false
}

/** Options after parsing: every default filled in. */
export type ResolvedOptions = z.infer<typeof optionsSchema>

/** Parses and completes the options, or throws a `ScanAuthError` `invalid_options` naming the bad one. */
export function resolveOptions(options: ScanAuthOptions): ResolvedOptions {
  const result = optionsSchema.safeParse(options)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  throw new ScanAuthError('invalid_options', `createScanAuth: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid options'}`)
}
