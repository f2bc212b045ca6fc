/**
 * Loading `@opentelemetry/api`, an optional peer dependency: once per process, lazily, by a dynamic
 * `import()` that works from the ESM build and from the CommonJS one (where it becomes a `require`
 * inside a promise). When the package is not installed the import fails, the failure is kept, and
 * scanauth runs without telemetry; nothing imports the package eagerly.
 *
 * @module
 */
import type * as OpenTelemetryApi from '@opentelemetry/api'

/** The parts of `@opentelemetry/api` scanauth uses. */
export type OtelApi = Pick<typeof OpenTelemetryApi, 'trace' | 'metrics' | 'context'>

/** Imports the module; a function, so that a test can hand in one that fails. */
export type ApiImporter = () => Promise<unknown>

/**
 * The default importer. The comments keep bundlers (webpack, Vite) from resolving the optional
 * package at build time: it is looked up when the application runs, where it may be missing.
 */
const importApi: ApiImporter = () => import(/* webpackIgnore: true */ /* @vite-ignore */ '@opentelemetry/api')

/** Whether a module (or its CommonJS `default`) is the OpenTelemetry API. */
function asApi(module: unknown): OtelApi | null {
  const candidates = [module, (module as { default?: unknown } | null)?.default]
  for (const candidate of candidates) {
    const api = candidate as Partial<OtelApi> | null | undefined
    if (
      typeof api?.trace?.getTracer === 'function' &&
      typeof api.metrics?.getMeterProvider === 'function' &&
      typeof api.context?.with === 'function'
    ) {
      return api as OtelApi
    }
  }
  return null
}

/** Loads the API with `importer`: the module, or null when it cannot be imported or is not the API. Never rejects. */
export function loadApi(importer: ApiImporter = importApi): Promise<OtelApi | null> {
  try {
    return importer().then(asApi, () => null)
  } catch {
    return Promise.resolve(null)
  }
}

/** The process's one load: its promise, and its result once it has settled. */
interface SharedLoad {
  promise: Promise<OtelApi | null>
  result: OtelApi | null | undefined
}

let shared: SharedLoad | undefined

/**
 * The API as this process has it: `api` when the load has settled (null without the package),
 * `undefined` with the `ready` promise while it is still loading. The first call starts the load.
 */
export function sharedApi(): { api: OtelApi | null | undefined; ready: Promise<OtelApi | null> } {
  if (shared === undefined) {
    const state: SharedLoad = { promise: loadApi(), result: undefined }
    state.promise = state.promise.then((api) => (state.result = api))
    shared = state
  }
  return { api: shared.result, ready: shared.promise }
}

/**
 * The loader core itself uses (`sharedApi`), for the other scanauth packages (`@scanauth/wechat-pay`): the same one load per
 * process, typed without `@opentelemetry/api`, so that the door it is exported from does not make
 * the optional package's types a requirement. The caller narrows it to the API's type it imports.
 */
export function sharedOpenTelemetryApi(): SharedOpenTelemetryApi {
  return sharedApi()
}

/** What {@link sharedOpenTelemetryApi} answers. */
export interface SharedOpenTelemetryApi {
  /** The module once the load has settled (null without the package); undefined while it runs. */
  api: object | null | undefined
  /** Settles with the module, or null; never rejects. */
  ready: Promise<object | null>
}
