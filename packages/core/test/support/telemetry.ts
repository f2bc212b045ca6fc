/**
 * An OpenTelemetry SDK in memory, registered globally as an application would (so that scanauth
 * picks it up without being told): spans into an `InMemorySpanExporter`, metrics read on demand,
 * and a context manager on `AsyncLocalStorage` so that active spans nest as under NodeSDK. Also used
 * by `@scanauth/wechat-pay`'s tests, by a relative import.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import Module, { createRequire } from 'node:module'
import { context, metrics, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api'
import type * as SdkMetrics from '@opentelemetry/sdk-metrics'
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics'
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'

/**
 * Test workers run Node with `--conditions module` (vitest.shared.ts). `@opentelemetry/api` maps that
 * condition to an ES build with extensionless imports, which Node cannot load, so the SDK's CommonJS
 * `require('@opentelemetry/api')` would fail. Here that one package resolves to its CommonJS build
 * (`main`), as it does in an application; every other request resolves as before.
 */
const moduleInternals = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string }
const resolveFilename = moduleInternals._resolveFilename
moduleInternals._resolveFilename = function (request: string, ...rest: unknown[]): string {
  const resolved = resolveFilename.call(this, request, ...rest)
  return request === '@opentelemetry/api' || request.startsWith('@opentelemetry/api/') ? resolved.replace(/[\\/]build[\\/]esm[\\/]/, '/build/src/') : resolved
}
const require = createRequire(import.meta.url)
const { DataPointType, MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics') as typeof SdkMetrics
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase
type BasicTracerProvider = SdkTraceBase.BasicTracerProvider
type InMemorySpanExporter = SdkTraceBase.InMemorySpanExporter
type MeterProvider = SdkMetrics.MeterProvider

/** The context manager NodeSDK registers, in a few lines: the active context follows async calls. */
class AsyncContextManager implements ContextManager {
  private storage = new AsyncLocalStorage<Context>()
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args))
  }
  bind<T>(_ctx: Context, target: T): T {
    return target
  }
  enable(): this {
    return this
  }
  disable(): this {
    this.storage.disable()
    return this
  }
}

/** A metric reader the test collects from when it wants. */
class CollectingReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** A metric point as the tests compare it: its attributes, and its value (a sum) or its count and sum (a histogram). */
export interface Point {
  attributes: Record<string, unknown>
  value: number
  count?: number
}

/** The in-memory SDK, as {@link registerInMemorySdk} returns it. */
export interface InMemorySdk {
  exporter: InMemorySpanExporter
  tracerProvider: BasicTracerProvider
  meterProvider: MeterProvider
  /** Spans ended so far. */
  spans(): ReadableSpan[]
  /** Spans ended so far with this name. */
  spansNamed(name: string): ReadableSpan[]
  /** The points of a metric now (cumulative since registration); empty when it has none. */
  points(name: string): Promise<Point[]>
  /** Every metric name with at least one point, and every point's attributes. */
  allPoints(): Promise<Array<{ name: string; attributes: Record<string, unknown> }>>
  /** Unregisters everything (the global API is left empty). */
  unregister(): Promise<void>
}

/** Providers not registered anywhere: for the explicit `telemetry: { tracer, meter }` option. */
export function inMemoryProviders(): Omit<InMemorySdk, 'unregister'> {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new CollectingReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const collect = async () => {
    const { resourceMetrics } = await reader.collect()
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
  }
  return {
    exporter,
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    spansNamed: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    async points(name) {
      const found = (await collect()).filter((m) => m.descriptor.name === name)
      return found.flatMap((m) =>
        (m.dataPoints as DataPoint<number | Histogram>[]).map((p) =>
          m.dataPointType === DataPointType.HISTOGRAM
            ? { attributes: { ...p.attributes }, value: (p.value as Histogram).sum ?? 0, count: (p.value as Histogram).count }
            : { attributes: { ...p.attributes }, value: p.value as number },
        ),
      )
    },
    async allPoints() {
      return (await collect()).flatMap((m) => m.dataPoints.map((p) => ({ name: m.descriptor.name, attributes: { ...p.attributes } })))
    },
  }
}

/** Registers a fresh in-memory SDK as the global tracer provider, meter provider and context manager. */
export function registerInMemorySdk(): InMemorySdk {
  trace.disable()
  metrics.disable()
  context.disable()
  const providers = inMemoryProviders()
  context.setGlobalContextManager(new AsyncContextManager())
  trace.setGlobalTracerProvider(providers.tracerProvider)
  metrics.setGlobalMeterProvider(providers.meterProvider)
  return {
    ...providers,
    async unregister() {
      trace.disable()
      metrics.disable()
      context.disable()
      await providers.tracerProvider.shutdown()
      await providers.meterProvider.shutdown()
    },
  }
}

/** Every attribute value of every span (and of its events), as text: for "no secret in telemetry". */
export function spanAttributeText(spans: readonly ReadableSpan[]): string[] {
  return spans.flatMap((span) => [
    span.name,
    span.status.message ?? '',
    ...Object.entries(span.attributes).map(([key, value]) => `${key}=${String(value)}`),
    ...span.events.flatMap((event) => Object.entries(event.attributes ?? {}).map(([key, value]) => `${key}=${String(value)}`)),
  ])
}
