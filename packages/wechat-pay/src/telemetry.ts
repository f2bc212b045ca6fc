/**
 * The notification handler's OpenTelemetry: a `scanauth.notification` span per notification and the
 * `scanauth.notifications` counter by outcome. `@opentelemetry/api` is an optional peer dependency,
 * loaded once per process by a dynamic `import()` (a `require` inside a promise in the CommonJS
 * build); without it, or with `telemetry: false`, nothing is recorded. The load is core's own
 * (`sharedOpenTelemetryApi` of `@scanauth/core/node`): one per process for every scanauth package.
 *
 * @module
 */
import type * as OpenTelemetryApi from '@opentelemetry/api'
import type { TelemetryMeter, TelemetryOptions, TelemetrySpan, TelemetryTracer } from '@scanauth/core'
import { sharedOpenTelemetryApi } from '@scanauth/core/node'
import { WechatPayError } from './errors'

type OtelApi = Pick<typeof OpenTelemetryApi, 'trace' | 'metrics' | 'context'>

/** The span of a notification. */
export const NOTIFICATION_SPAN = 'scanauth.notification'
/** The counter of notifications by outcome. */
export const NOTIFICATIONS_METRIC = 'scanauth.notifications'
const SCOPE = '@scanauth/wechat-pay'
/** OpenTelemetry's `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2

/** What a notification is about: `unknown` until it is verified. */
export type NotificationKind = 'payment' | 'refund' | 'other' | 'unknown'

/**
 * What became of a notification: core's result for a payment (`granted`, `already_applied`,
 * `not_paid`, `rejected`) or a refund (`refunded`, `partially_refunded`, `already_applied`,
 * `not_refunded`, `rejected`); `ignored` for another authentic event; `unauthenticated` (401),
 * `malformed` (400) or `failed` (500) when it was refused.
 */
export type NotificationOutcome = string

/** A notification as the handler dealt with it, for the span and the counter. */
export interface HandledNotification<A> {
  /** The answer for WeChat Pay. */
  answer: A & { status: number }
  kind: NotificationKind
  outcome: NotificationOutcome
  /** The verified `event_type` (`TRANSACTION.SUCCESS`, `REFUND.SUCCESS`, …). */
  eventType?: string
  /** Why core rejected an authentic report (`amount_mismatch`, …). */
  rejection?: string
  /** Why it was refused or failed. */
  error?: unknown
}

/**
 * The API, loaded once per process by core's loader (the load core's own telemetry shares); `api` is
 * undefined while the load is under way. Core checks the module is the API before handing it out.
 */
function sharedApi(): { api: OtelApi | null | undefined; ready: Promise<OtelApi | null> } {
  return sharedOpenTelemetryApi() as { api: OtelApi | null | undefined; ready: Promise<OtelApi | null> }
}

/** A failure's `error.type`: its `WechatPayError` code, else its class name; never its message. */
function errorTypeOf(error: unknown): string {
  if (error instanceof WechatPayError) return error.code
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^[a-z_]{1,64}$/.test(code)) return code
  const name = error instanceof Error ? error.name : ''
  return /^[\w.$-]{1,64}$/.test(name) ? name : '_OTHER'
}

/** The handler's telemetry; see the module comment. */
export class NotificationTelemetry {
  private loading: Promise<unknown> | null = null
  private api: OtelApi | null = null
  private tracer: TelemetryTracer | null = null
  private readonly explicitMeter: TelemetryMeter | undefined
  private counter: ReturnType<TelemetryMeter['createCounter']> | null = null
  private meterProvider: unknown = undefined
  private readonly off: boolean

  constructor(options: boolean | TelemetryOptions | undefined) {
    this.off = options === false
    if (options !== undefined && typeof options !== 'boolean' && (typeof options !== 'object' || options === null)) {
      throw new WechatPayError('invalid_options', 'createWechatPayNotificationHandler: telemetry must be true, false or { tracer?, meter? }')
    }
    if (typeof options === 'object' && options.tracer !== undefined && typeof options.tracer?.startSpan !== 'function') {
      throw new WechatPayError('invalid_options', 'createWechatPayNotificationHandler: telemetry.tracer must implement startSpan()')
    }
    if (typeof options === 'object' && options.meter !== undefined && typeof options.meter?.createCounter !== 'function') {
      throw new WechatPayError('invalid_options', 'createWechatPayNotificationHandler: telemetry.meter must implement createCounter()')
    }
    this.explicitMeter = typeof options === 'object' ? options.meter : undefined
    if (this.off) return
    if (typeof options === 'object' && options.tracer !== undefined) this.tracer = options.tracer
    if (this.explicitMeter !== undefined) this.counter = this.explicitMeter.createCounter(NOTIFICATIONS_METRIC, { description: 'WeChat Pay notifications, by outcome' })
    const { api, ready } = sharedApi()
    if (api !== undefined) this.useApi(api)
    else this.loading = ready.then((loaded) => this.useApi(loaded))
  }

  private useApi(api: OtelApi | null): void {
    this.loading = null
    this.api = api
    if (api !== null) this.tracer ??= api.trace.getTracer(SCOPE)
  }

  private count(attributes: { outcome: string; kind: string }): void {
    if (this.explicitMeter === undefined && this.api !== null) {
      const provider = this.api.metrics.getMeterProvider()
      if (provider !== this.meterProvider) {
        this.meterProvider = provider
        this.counter = provider.getMeter(SCOPE).createCounter(NOTIFICATIONS_METRIC, { description: 'WeChat Pay notifications, by outcome' })
      }
    }
    this.counter?.add(1, attributes)
  }

  /** Handles one notification in a `scanauth.notification` span, active while core applies it, and counts its outcome. */
  async record<A>(handle: () => Promise<HandledNotification<A>>): Promise<A & { status: number }> {
    if (this.off) return (await handle()).answer
    if (this.loading !== null) await this.loading
    let span: TelemetrySpan | null = null
    try {
      span = this.tracer?.startSpan(NOTIFICATION_SPAN) ?? null
    } catch {
      span = null
    }
    try {
      const api = this.api
      const active = span !== null && api !== null && typeof (span as Partial<OpenTelemetryApi.Span>).spanContext === 'function'
      const handled = active ? await api.context.with(api.trace.setSpan(api.context.active(), span as unknown as OpenTelemetryApi.Span), handle) : await handle()
      this.describe(span, handled)
      return handled.answer
    } finally {
      try {
        span?.end()
      } catch {
        // A broken tracer costs its own data only.
      }
    }
  }

  private describe(span: TelemetrySpan | null, handled: HandledNotification<unknown>): void {
    try {
      this.count({ outcome: handled.outcome, kind: handled.kind })
      if (span === null) return
      span.setAttribute('scanauth.notification.kind', handled.kind)
      span.setAttribute('scanauth.notification.outcome', handled.outcome)
      span.setAttribute('http.response.status_code', handled.answer.status)
      if (handled.eventType !== undefined) span.setAttribute('scanauth.notification.event', handled.eventType.slice(0, 64))
      if (handled.rejection !== undefined) span.setAttribute('scanauth.rejection', handled.rejection)
      if (handled.error !== undefined) span.setAttribute('error.type', errorTypeOf(handled.error))
      // Only our own failures are errors: a forged or malformed notification is the sender's.
      if (handled.answer.status >= 500) span.setStatus({ code: STATUS_ERROR, message: errorTypeOf(handled.error) })
    } catch {
      // Telemetry never changes what WeChat Pay is told.
    }
  }
}
