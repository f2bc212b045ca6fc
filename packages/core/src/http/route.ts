/**
 * What one route of the HTTP handler is: the shape of a declaration in the route table (routes.ts)
 * and what a route's code returns. A declaration says everything about its route, once: the handler
 * dispatches from it (handler.ts), parses the route's input with its schemas, and the OpenAPI
 * document is generated from it (openapi.ts).
 *
 * @module
 */
import type { z } from 'zod'
import type { ScanAuth } from '../service/api'
import type { ScanAuthErrorCode } from '../errors'
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from './types'

/** What a route returns to answer 204 No Content. */
export const NO_CONTENT: unique symbol = Symbol('no content')

/** What a route returns to answer with a response it built itself (the confirm page's HTML, its redirect). */
export class Prepared {
  constructor(readonly response: HttpResponse) {}
}

/** What a route returns to answer with an event stream (no events: a `HEAD`, the headers only). */
export class EventStream {
  constructor(readonly events: AsyncIterable<string> | undefined) {}
}

/** What every route may need besides the request: the handler's options. */
export interface RouteContext {
  auth: ScanAuth
  maxBodyBytes: number
  /** `purchase_url` of the `need_purchase` answers, when configured. */
  purchaseUrl: string | undefined
  heartbeatMs: number
  onError: HttpHandlerOptions['onError']
}

/**
 * The route's input, parsed with the schemas of its declaration (`request.query`, `request.body`):
 * `invalid_request` (400) with the schema's message when it does not fit; a JSON body whose content
 * type is not JSON is `unsupported_media_type` (415). The route calls them in the order its checks
 * go (the Bearer token before the body, or after).
 */
export interface RouteInput<Q extends z.ZodObject = never, B extends z.ZodType = never> {
  query(request: HttpRequest): z.output<Q>
  body(request: HttpRequest): z.output<B>
}

/**
 * A route's code. It returns the JSON body of a 200 (the handler sends it), or {@link NO_CONTENT},
 * a {@link Prepared} response or an {@link EventStream}; it throws a `ScanAuthError` to refuse.
 */
export type RouteRun<Q extends z.ZodObject = never, B extends z.ZodType = never> = (
  request: HttpRequest,
  context: RouteContext,
  input: RouteInput<Q, B>,
) => Promise<unknown>

/**
 * Who may call a route: anyone (`none`), the holder of a live session's Bearer token (`bearer`,
 * else 401), or either (`optional-bearer`: `purchase`, whose body may name a scene instead).
 */
export type RouteAuth = 'none' | 'bearer' | 'optional-bearer'

/** A request body. */
export interface RouteBody<B extends z.ZodType> {
  /** Its wire schema (a component of the document). */
  schema: B
  /** Whether a body must be sent. Default true; `consume` takes an empty one as `{}`. */
  required?: boolean
  /**
   * Default `application/json`: the handler parses it with `schema` (`RouteInput.body`). A form
   * (`application/x-www-form-urlencoded`, the confirm page's) is read by its route, and the service
   * parses it with the same schema.
   */
  contentType?: 'application/json' | 'application/x-www-form-urlencoded'
  /** Named examples, shown in the document (each must fit `schema`: a test checks it). */
  examples?: Readonly<Record<string, { summary: string; value: unknown }>>
}

/** One event of an event stream, as the document describes it (`x-scanauth-events`). */
export interface StreamEvent {
  description: string
  /** What its `id:` field carries, when it has one. */
  id?: string
  /** The wire schema of its `data:`. */
  data: z.ZodType
}

/** A successful answer of a route (its refusals come from `errors`). */
export interface RouteAnswer {
  description: string
  /**
   * Its body: a wire schema (JSON), `'html'` (a page of the confirm routes, with their security
   * headers, B-confirm-11) or `'json-object'` (a JSON object described no further: the OpenAPI
   * document). Absent: no body, or an event stream (`stream`).
   */
  body?: z.ZodType | 'html' | 'json-object'
  /** A `text/event-stream` body: what the stream carries, and its events. */
  stream?: { description: string; events: Readonly<Record<string, StreamEvent>> }
  /** A redirect: the description of its `Location` header. */
  location?: string
}

/** Everything about a route but its code. */
export interface RouteShape<Q extends z.ZodObject = never, B extends z.ZodType = never> {
  method: 'GET' | 'POST'
  /** Relative to the base path, e.g. `/status`. */
  path: string
  operationId: string
  /** One of the document's tags (openapi.ts). */
  tags: readonly string[]
  summary: string
  description?: string
  auth: RouteAuth
  /**
   * The route reads the scene's poll secret from `X-Scanauth-Poll-Secret` (B-secret-2, B-order-13):
   * the schema that documents the header for this route.
   */
  pollSecret?: z.ZodType
  /**
   * Served only in this mode of the service: `confirm`, with `confirm: 'link'`; `phone`, with
   * `payments.phone`; `subscribe`, with reminders that offer a one-time subscription. Otherwise the
   * path is not ours and falls through to the app.
   */
  mode?: 'confirm' | 'phone' | 'subscribe'
  request?: {
    /** The query parameters, parsed with this schema (`RouteInput.query`). */
    query?: Q
    body?: RouteBody<B>
    /** Header parameters other than the poll secret's, by name: the schema that documents each one. */
    headers?: Readonly<Record<string, z.ZodType>>
  }
  /** The successful answers, by status. */
  answers: Readonly<Record<number, RouteAnswer>>
  /**
   * The codes the route refuses with (errors.ts; one answer per status, `{detail}`, or a page for an
   * HTML route), in the order the document names them; a 500 is added to each. Absent: the route
   * cannot fail, and answers no error at all (the document, built once).
   */
  errors?: readonly ScanAuthErrorCode[]
  /**
   * One of the specification's own routes (`create_scene`, `status`): its error answers are exactly
   * `{detail}` (B-wire-2). Every other JSON route's also carry the code as `error` (B-wire-7), so a
   * device can branch on `scene_not_scanned` without reading the text.
   */
  specified?: true
}

/**
 * A route declaration: its shape and its code (`run`), or `document: true` for the route that
 * answers the OpenAPI document itself, which the handler serves unless `openapi: false`.
 */
export type RouteDeclaration<Q extends z.ZodObject = never, B extends z.ZodType = never> = RouteShape<Q, B> &
  ({ run: RouteRun<Q, B>; document?: undefined } | { document: true; run?: undefined })

/** A declaration in the table, its schema types erased. */
export type Route = RouteDeclaration<z.ZodObject, z.ZodType>

/**
 * Declares a route. It type-checks that `run` reads the query and body that `request` declares,
 * then erases the types so that the table holds every route alike.
 */
export function route<Q extends z.ZodObject = never, B extends z.ZodType = never>(declaration: RouteDeclaration<Q, B>): Route {
  return declaration as unknown as Route
}
