/**
 * The `telemetry` option of `createScanAuth`, typed without `@opentelemetry/api`: the package is an
 * optional peer dependency, so these types describe the few methods scanauth calls. An
 * OpenTelemetry `Tracer` and `Meter` fit them as they are.
 *
 * @module
 */

/** An attribute value scanauth records: always a plain string, number or boolean. */
export type TelemetryAttributeValue = string | number | boolean

/** Attributes as scanauth records them. */
export type TelemetryAttributes = Record<string, TelemetryAttributeValue>

/** The part of an OpenTelemetry `Span` scanauth uses. */
export interface TelemetrySpan {
  /** Sets one attribute. */
  setAttribute(key: string, value: TelemetryAttributeValue): unknown
  /** Sets the status: scanauth sets only `ERROR` (code 2), for unexpected failures. */
  setStatus(status: { code: number; message?: string }): unknown
  /** Ends the span (`endTime` as OpenTelemetry's `HrTime`, `[seconds, nanoseconds]`). */
  end(endTime?: [number, number]): void
  /** Whether the span is recorded (sampled in). */
  isRecording(): boolean
}

/** The part of an OpenTelemetry `Tracer` scanauth uses. */
export interface TelemetryTracer {
  /** Starts a span (`startTime` as OpenTelemetry's `HrTime`). */
  startSpan(name: string, options?: { startTime?: [number, number] }, context?: unknown): TelemetrySpan
}

/** The part of an OpenTelemetry `Counter` scanauth uses. */
export interface TelemetryCounter {
  /** Adds `value` (at least 0) to the count of `attributes`. */
  add(value: number, attributes?: TelemetryAttributes): void
}

/** The part of an OpenTelemetry `Histogram` scanauth uses. */
export interface TelemetryHistogram {
  /** Records one measurement with `attributes`. */
  record(value: number, attributes?: TelemetryAttributes): void
}

/** The part of an OpenTelemetry `Meter` scanauth uses. */
export interface TelemetryMeter {
  /** A monotonic counter. */
  createCounter(name: string, options?: { description?: string; unit?: string }): TelemetryCounter
  /** A histogram; `advice.explicitBucketBoundaries` suggests its buckets. */
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): TelemetryHistogram
}

/**
 * Where scanauth's spans and metrics go (docs/operations.md, "Traces and metrics"). Each one left
 * out is taken from the global OpenTelemetry API when `@opentelemetry/api` is installed: the
 * tracer and meter providers an SDK registered (`NodeSDK.start()`, `trace.setGlobalTracerProvider`,
 * `metrics.setGlobalMeterProvider`).
 */
export interface TelemetryOptions {
  /** The tracer for scanauth's spans, e.g. `trace.getTracer('@scanauth/core')` of a provider of your own. */
  tracer?: TelemetryTracer
  /** The meter for scanauth's metrics, e.g. `metrics.getMeter('@scanauth/core')` of a provider of your own. */
  meter?: TelemetryMeter
}
