/**
 * The framework-neutral request and response of `createHttpHandler`.
 *
 * @module
 */

/** An HTTP request as any Node framework can describe it. */
export interface HttpRequest {
  /** `GET`, `POST`, ... (any case). */
  method: string
  /** The path, e.g. `/auth/status`. A query string after `?` is read too. */
  path: string
  /**
   * Query parameters, as a framework parsed them (first value of an array wins; anything that is not a
   * string is ignored) or as `URLSearchParams`.
   */
  query?: Record<string, unknown> | URLSearchParams
  /** Request headers; names in any case. */
  headers?: Record<string, string | string[] | undefined>
  /**
   * The body: raw (`string`, `Buffer`, `Uint8Array`) or already parsed by a body parser (a plain
   * object). `undefined` when there is none.
   */
  body?: unknown
  /**
   * Aborted when the client goes away. Needed for the long poll (`status?wait=N`) and the event
   * stream (`events`): without it a departed client's wait runs to its end.
   */
  signal?: AbortSignal
  /**
   * The client's address, as the framework determined it (Express `req.ip`, Koa `ctx.ip`, which
   * follow `X-Forwarded-For` only when the app trusts its proxy). `create_scene` and `purchase` are
   * limited per address (docs/behaviour.md, B-rate-5, B-rate-11); absent or empty, only the other
   * limits apply.
   */
  clientAddress?: string
}

/** The response to send. `body` is a JSON value; send it with `JSON.stringify`. */
export interface HttpResponse {
  /** HTTP status. */
  status: number
  /**
   * Response headers (lower-case names): content type, `cache-control: no-store` (the OpenAPI
   * document: `public, max-age=300`), `allow`, `www-authenticate`, `retry-after` (on a 429).
   */
  headers?: Record<string, string>
  /**
   * The JSON body: the wire shape of docs/behaviour.md, or `{detail}` for errors. Absent for a 204, an
   * event stream and the confirm page; the OpenAPI document has both `body` and `text`.
   */
  body?: unknown
  /**
   * A text body to send as it is, instead of `body` (the confirm page's HTML, B-confirm-11); its
   * content type is in `headers`. Send {@link responseText}, which covers both.
   */
  text?: string
  /**
   * An event stream (`GET {base}/events`): send the headers at once, then write each chunk as it
   * comes and flush it, and end the response when the iteration ends. Absent for every other answer
   * (and for a `HEAD` of the stream, which gets the headers only).
   */
  events?: AsyncIterable<string>
}

/** The bytes to send for a response: its `text`, else its JSON `body`; undefined when it has neither. */
export function responseText(response: HttpResponse): string | undefined {
  if (response.text !== undefined) return response.text
  return response.body === undefined ? undefined : JSON.stringify(response.body)
}

/** The default `maxBodyBytes` of the routes (`HttpHandlerOptions`), whichever adapter serves them: 16 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024

/** Options of `createHttpHandler`. */
export interface HttpHandlerOptions {
  /** Where the routes live. Default `/auth`; `''` serves them at the root (for a router mounted at a prefix). */
  basePath?: string
  /** Time between heartbeat comments of an event stream, in milliseconds. Default 15,000. */
  heartbeatMs?: number
  /** Largest raw body accepted, in bytes. Default 16 KiB. */
  maxBodyBytes?: number
  /**
   * Whether to serve the OpenAPI 3.1 document of the routes at `GET {basePath}/openapi.json`
   * (docs/frameworks.md, "The OpenAPI document"). Default true. With `false` that path is not ours:
   * the request falls through to the app (`owns` answers false).
   */
  openapi?: boolean
  /**
   * Called with every unexpected error (a store failure, a bug) before the handler answers 500
   * `{detail: 'Internal error'}`, so the app can log it, and with every failure of a service scanauth
   * calls (`qr_creation_failed`, `payment_provider_failed`: 502), whose own text (it may name the
   * server's address) goes only here, never into the answer. Other `ScanAuthError`s are answers, not reported.
   */
  onError?(error: unknown, request: HttpRequest): void
  /**
   * Where a person buys time or points, e.g. `https://shop.example.com/scanauth`. When set, every
   * answer whose `status` is `need_purchase` (the poll's and the consumption's) carries it as
   * `purchase_url`, so a device can show the way out of the dead end. Off by default: without it the
   * bodies are exactly those of docs/behaviour.md (wire shapes). Sent as given; a relative path works
   * for a device that knows its server.
   */
  purchaseUrl?: string
}

/** Answers requests for our routes; resolves `undefined` for every other path, so a framework can fall through. */
export interface HttpHandler {
  (request: HttpRequest): Promise<HttpResponse | undefined>
  /**
   * Whether `path` is one of the handler's routes (whatever the method), without running anything:
   * a middleware reads the request body only when it is.
   */
  owns(path: string): boolean
}
