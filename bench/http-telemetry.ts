/**
 * The OpenTelemetry side of `bench/http-server.ts` (issue 21), loaded only by the server processes of
 * the telemetry rows: an SDK registered globally as an application registers one, before it creates
 * its scanauth instance, and the Express app that runs every request inside an HTTP server span, as
 * `@opentelemetry/instrumentation-http` would.
 *
 * The SDK is the one NodeSDK sets up, without its exporters' network: a `BasicTracerProvider` with a
 * `BatchSpanProcessor` (the defaults: batches of 512, a 5 s delay) over an exporter that counts the
 * spans and drops them (so memory does not grow over a run), set with `trace.setGlobalTracerProvider`,
 * and a `MeterProvider` with a `PeriodicExportingMetricReader` (every 60 s, as docs/operations.md
 * wires it) over an exporter that drops what it is given, set with `metrics.setGlobalMeterProvider`.
 * With `context: true` also an `AsyncLocalStorageContextManager`, set with
 * `context.setGlobalContextManager`, which NodeSDK always registers.
 *
 * Module resolution: the server processes run under tsx with `--conditions=@scanauth/source` only,
 * not with vitest's `module` condition (which maps `@opentelemetry/api` to an ES build Node cannot
 * load; see packages/core/test/support/telemetry.ts), so here `@opentelemetry/api` resolves to its
 * CommonJS build (`main`) for this file, for the SDK's `require` and for core's `import()` alike: one
 * copy, no workaround needed.
 *
 * @module
 */
import { context, metrics, SpanKind, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import type express from 'express'

/** Which SDK a server process registers: none (the API alone, as core finds it installed), the SDK, or the SDK with NodeSDK's context manager. */
export type HttpTelemetry = 'none' | 'sdk' | 'sdk+context'

/** OpenTelemetry's `ExportResultCode.SUCCESS` (of `@opentelemetry/core`, not a dependency of the root). */
const SUCCESS = 0

/** What a registered SDK lets the process report: the spans exported so far, and a flush of the batch. */
export interface RegisteredSdk {
  exportedSpans: () => number
  /** Exports what the batch processor holds now. */
  flush: () => Promise<void>
}

/** Registers the SDK described in the module comment, globally; call it before `createScanAuth`. */
export function registerSdk({ context: withContext }: { context: boolean }): RegisteredSdk {
  let exported = 0
  const spanExporter: SpanExporter = {
    export(spans, done) {
      exported += spans.length
      done({ code: SUCCESS })
    },
    async shutdown() {},
  }
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] })
  if (!trace.setGlobalTracerProvider(tracerProvider)) throw new Error('bench/http-telemetry.ts: a tracer provider was already registered')
  const metricExporter: PushMetricExporter = {
    export(_metrics, done) {
      done({ code: SUCCESS })
    },
    async forceFlush() {},
    async shutdown() {},
  }
  const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 })] })
  if (!metrics.setGlobalMeterProvider(meterProvider)) throw new Error('bench/http-telemetry.ts: a meter provider was already registered')
  if (withContext && !context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())) {
    throw new Error('bench/http-telemetry.ts: a context manager was already registered')
  }
  return { exportedSpans: () => exported, flush: () => tracerProvider.forceFlush() }
}

/**
 * Express middleware that runs the rest of the request inside an active HTTP server span ended when
 * the response is finished, as `@opentelemetry/instrumentation-http` does (with fewer attributes).
 * With no SDK registered the tracer is the API's no-op one: the same calls, a non-recording span.
 */
export function serverSpans(): express.RequestHandler {
  const tracer = trace.getTracer('bench-http-server')
  return (req, res, next) =>
    tracer.startActiveSpan(
      `${req.method} ${req.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } },
      (span) => {
        res.once('finish', () => {
          span.setAttribute('http.response.status_code', res.statusCode)
          span.end()
        })
        next()
      },
    )
}
