/**
 * One instance's telemetry: where its spans and metrics go, and the few ways it records them. The
 * tracer and meter come from the `telemetry` option, or from the global OpenTelemetry API once
 * {@link sharedApi} has loaded it; without either, every method returns at its first check.
 *
 * Costs are kept off the pending poll: outside a recorded trace (an HTTP server span, say) a poll
 * reads no clock, and one answered `pending` (or `scanned`) makes no span and allocates nothing; the
 * one check is whether the active context holds a recorded span. No span is ever made active on the
 * poll.
 *
 * @module
 */
import type { Span } from '@opentelemetry/api'
import { ScanAuthError } from '../errors'
import { refusedLimitOf } from '../service/rate-limiter'
import type { UserAggregate } from '../store/records'
import { sharedApi, type OtelApi } from './load'
import { ATTR, METRIC, SCOPE, SPAN, STATUS_ERROR } from './names'
import type { TelemetryAttributes, TelemetryMeter, TelemetryOptions, TelemetrySpan, TelemetryTracer } from './types'

/** How many scenes an instance remembers as measured by `scanauth.scan_to_device` (about 100 bytes each). */
export const MEASURED_SCENES = 4096

/** Bucket boundaries suggested for `scanauth.scan_to_device`, in ms: a push answers in tens of ms, a poll within its interval. */
const SCAN_TO_DEVICE_BUCKETS = [5, 10, 25, 50, 100, 250, 500, 750, 1000, 1500, 2000, 3000, 5000, 10_000, 30_000]

/** The metric instruments of one meter. */
interface Instruments {
  scans: ReturnType<TelemetryMeter['createCounter']>
  logins: ReturnType<TelemetryMeter['createCounter']>
  confirmations: ReturnType<TelemetryMeter['createCounter']>
  rateLimited: ReturnType<TelemetryMeter['createCounter']>
  reminders: ReturnType<TelemetryMeter['createCounter']>
  scanToDevice: ReturnType<TelemetryMeter['createHistogram']>
}

function instrumentsOf(meter: TelemetryMeter): Instruments {
  return {
    scans: meter.createCounter(METRIC.scans, { description: 'Scans handled, by result' }),
    logins: meter.createCounter(METRIC.logins, { description: 'Scans and confirmations that signed a device in with access (result authorized)' }),
    confirmations: meter.createCounter(METRIC.confirmations, { description: "Scanners' decisions on the confirm page, by result" }),
    rateLimited: meter.createCounter(METRIC.rateLimited, { description: 'Calls refused by a rate limit, by limit' }),
    reminders: meter.createCounter(METRIC.reminders, { description: 'Reminders handed to the notifier, by channel and outcome' }),
    scanToDevice: meter.createHistogram(METRIC.scanToDevice, {
      description: "From a scene's scan (or confirmation) to this instance's first answer giving its device authorized",
      unit: 'ms',
      advice: { explicitBucketBoundaries: SCAN_TO_DEVICE_BUCKETS },
    }),
  }
}

/** {@link Telemetry.pollStarted} outside a recorded trace: no clock reading. */
const OUTSIDE_TRACE = -2

/** A metric instrument's name in {@link Instruments} whose kind is a counter. */
export type CounterName = Exclude<keyof Instruments, 'scanToDevice'>

/** A `performance.now()` reading as OpenTelemetry's `HrTime` since the epoch (seconds, nanoseconds), precise to the microsecond. */
function hrTimeOf(performanceNow: number): [number, number] {
  const origin = performance.timeOrigin
  const seconds = Math.floor(origin / 1000) + Math.floor(performanceNow / 1000)
  let nanos = Math.round(((origin % 1000) + (performanceNow % 1000)) * 1e6)
  if (nanos >= 1e9) return [seconds + 1, nanos - 1e9]
  if (nanos < 0) nanos = 0
  return [seconds, nanos]
}

/** A failure's `error.type`: its `ScanAuthError` code, or its class name (never its message, which may quote stored values). */
export function errorTypeOf(error: unknown): string {
  if (error instanceof ScanAuthError) return error.code
  const name = error instanceof Error ? error.name : ''
  return typeof name === 'string' && /^[\w.$-]{1,64}$/.test(name) ? name : '_OTHER'
}

/**
 * Whether a failure is unexpected (span status ERROR): anything but a `ScanAuthError` of a 4xx
 * status or an abort. A 4xx is the caller's outcome (a refused limit, an unknown scene), not a fault.
 */
export function isUnexpected(error: unknown): boolean {
  if (error instanceof ScanAuthError) return error.status >= 500
  return !(error instanceof Error && error.name === 'AbortError')
}

/** What one operation records once it has its result: span attributes and metrics. */
export type Describe<R> = (result: R, span: TelemetrySpan | null, telemetry: Telemetry) => void

/** The telemetry of one scanauth instance; see the module comment. */
export class Telemetry {
  /** The load of the API while it is under way; operations wait for it once, then it is null. */
  loading: Promise<unknown> | null = null
  private api: OtelApi | null = null
  /** `api.trace`, held as a plain object: reading it through the module namespace on every poll costs more than the check itself. */
  private traceApi: OtelApi['trace'] | null = null
  private tracer: TelemetryTracer | null = null
  private readonly explicitMeter: TelemetryMeter | undefined
  private instruments: Instruments | null = null
  /** The global meter provider the instruments were made from, to follow a provider registered later. */
  private meterProvider: unknown = undefined
  /** The scenes `scanauth.scan_to_device` measured (oldest first), so each is measured once. */
  private readonly measured = new Set<string>()

  /** Telemetry that records nothing: `telemetry: false`. */
  static readonly off = new Telemetry(false)

  constructor(options: TelemetryOptions | boolean | undefined) {
    this.explicitMeter = typeof options === 'object' ? options.meter : undefined
    if (options === false) return
    if (typeof options === 'object' && options.tracer !== undefined) this.tracer = options.tracer
    if (this.explicitMeter !== undefined) {
      try {
        this.instruments = instrumentsOf(this.explicitMeter)
      } catch {
        // A meter that cannot make instruments records nothing; the instance works without.
      }
    }
    const { api, ready } = sharedApi()
    if (api !== undefined) this.useApi(api)
    else this.loading = ready.then((loaded) => this.useApi(loaded))
  }

  /** Whether this instance records anything at all (false with `telemetry: false`, or with neither an API nor options). */
  get enabled(): boolean {
    return this.loading !== null || this.tracer !== null || this.instruments !== null || this.api !== null
  }

  private useApi(api: OtelApi | null): void {
    this.loading = null
    this.api = api
    if (api === null) return
    this.traceApi = api.trace
    this.tracer ??= api.trace.getTracer(SCOPE)
  }

  /** The instruments, made again when a different global meter provider has been registered since. */
  private metrics(): Instruments | null {
    if (this.explicitMeter !== undefined || this.api === null) return this.instruments
    const provider = this.api.metrics.getMeterProvider()
    if (provider !== this.meterProvider) {
      this.meterProvider = provider
      this.instruments = instrumentsOf(provider.getMeter(SCOPE))
    }
    return this.instruments
  }

  /** Adds one to a counter. */
  count(counter: CounterName, attributes: TelemetryAttributes): void {
    try {
      this.metrics()?.[counter].add(1, attributes)
    } catch {
      // A broken meter costs its own data, not the caller's answer.
    }
  }

  /**
   * Runs an operation in a span made active for its duration (so that the store's and the
   * platform's spans nest under it), then lets `describe` record what it came to.
   */
  async operation<R>(name: string, call: () => Promise<R>, describe: Describe<R> | null): Promise<R> {
    if (this.loading !== null) await this.loading
    const span = this.startSpan(name)
    try {
      const api = this.api
      const result = span === null || api === null || !isApiSpan(span) ? await call() : await api.context.with(api.trace.setSpan(api.context.active(), span), call)
      if (describe !== null) this.safely(() => describe(result, span, this))
      return result
    } catch (error) {
      throw this.failed(span, error)
    } finally {
      if (span !== null) this.safely(() => span.end())
    }
  }

  /** Like {@link operation}, but the span is not made active (a wait: what it subscribes to outlives it). */
  async detached<R>(name: string, call: () => Promise<R>, describe: Describe<R> | null): Promise<R> {
    if (this.loading !== null) await this.loading
    const span = this.startSpan(name)
    try {
      const result = await call()
      if (describe !== null) this.safely(() => describe(result, span, this))
      return result
    } catch (error) {
      throw this.failed(span, error)
    } finally {
      if (span !== null) this.safely(() => span.end())
    }
  }

  /**
   * The start of a poll: inside a recorded trace, a clock reading; outside one {@link OUTSIDE_TRACE}
   * (the clock is not read: most polls answer `pending` and make no span); -1 without a tracer.
   */
  pollStarted(): number {
    if (this.tracer === null) return -1
    return this.inRecordedTrace() ? performance.now() : OUTSIDE_TRACE
  }

  /**
   * A poll's answer, passed through. Inside a recorded trace (a request's server span) every poll
   * gets a `scanauth.status` span from `started`. Outside one, a `pending` or `scanned` answer gets
   * none (a device asks that every second or two, and a root span would cost more than the poll),
   * and any other answer gets a span at the moment it is known, without a duration.
   */
  polled<A extends { status: string }>(started: number, answer: A): A {
    if (started === -1) return answer
    const { status } = answer
    if (started === OUTSIDE_TRACE && (status === 'pending' || status === 'scanned')) return answer
    const span = this.startSpan(SPAN.status, started === OUTSIDE_TRACE ? undefined : started)
    if (span !== null) {
      this.safely(() => {
        span.setAttribute(ATTR.status, status)
        this.endPoll(span, started)
      })
    }
    return answer
  }

  /** A poll's failure, recorded (a span, the refusing limit); returned for the caller to throw. */
  pollFailed(started: number, error: unknown): unknown {
    const span = started === -1 ? null : this.startSpan(SPAN.status, started === OUTSIDE_TRACE ? undefined : started)
    this.failed(span, error)
    if (span !== null) this.safely(() => this.endPoll(span, started))
    return error
  }

  /**
   * A read found `sceneStr` authorized with access for its device: the first such read of each
   * scene on this instance records `scanauth.scan_to_device`, from the scan (or confirmation) at
   * `authorizedAt` to `now`. A scene whose user was granted anything since the scan (a purchase
   * after `need_purchase`) is left out: its time is the payer's, not the answer's.
   */
  sceneAuthorized(sceneStr: string, authorizedAt: number | null, user: UserAggregate | null, now: number): void {
    if (authorizedAt === null || this.measured.has(sceneStr)) return
    this.safely(() => {
      const metrics = this.metrics()
      if (metrics === null) return
      if (this.measured.size >= MEASURED_SCENES) this.measured.delete(this.measured.values().next().value as string)
      this.measured.add(sceneStr)
      // The free trial is created by the scan itself; anything else created since came after it.
      if (user?.authorizations.some((a) => a.source !== 'free' && a.createdAt >= authorizedAt)) return
      metrics.scanToDevice.record(Math.max(0, now - authorizedAt))
    })
  }

  /**
   * Records a failure on `span` (`error.type`, `scanauth.limit`, status ERROR when unexpected) and
   * counts a rate limit's refusal; returns the error for the caller to throw.
   */
  failed(span: TelemetrySpan | null, error: unknown): unknown {
    this.safely(() => {
      const limit = refusedLimitOf(error)
      if (limit !== undefined) this.count('rateLimited', { limit })
      if (span === null) return
      const type = errorTypeOf(error)
      span.setAttribute(ATTR.errorType, type)
      if (limit !== undefined) span.setAttribute(ATTR.limit, limit)
      if (isUnexpected(error)) span.setStatus({ code: STATUS_ERROR, message: type })
    })
    return error
  }

  /** Ends a poll's span: on our clock when it started on it, else on the tracer's. */
  private endPoll(span: TelemetrySpan, started: number): void {
    if (started === OUTSIDE_TRACE) span.end()
    else span.end(hrTimeOf(performance.now()))
  }

  /** A span started now, or at the clock reading `startedAt`; null without a tracer (or when it throws). */
  private startSpan(name: string, startedAt?: number): TelemetrySpan | null {
    if (this.tracer === null) return null
    try {
      return startedAt === undefined ? this.tracer.startSpan(name) : this.tracer.startSpan(name, { startTime: hrTimeOf(startedAt) })
    } catch {
      return null
    }
  }

  /** Whether the active context holds a recorded span (a request's server span, say). */
  private inRecordedTrace(): boolean {
    try {
      return this.traceApi?.getActiveSpan()?.isRecording() === true
    } catch {
      return false
    }
  }

  /** Telemetry never fails the operation it describes. */
  private safely(record: () => void): void {
    try {
      record()
    } catch {
      // A broken tracer or meter costs its own data, not the caller's answer.
    }
  }
}

/** Whether a span can be put in an OpenTelemetry context (a tracer of the application's own may make other spans). */
function isApiSpan(span: TelemetrySpan): span is TelemetrySpan & Span {
  return typeof (span as Partial<Span>).spanContext === 'function'
}
