/**
 * The OpenAPI 3.1 document of the HTTP routes, generated from the route table (routes.ts) and the zod
 * schemas it names (wire-schemas.ts, with `z.toJSONSchema`: openapi-schemas.ts), so it cannot drift
 * from what the routes accept and answer. `createHttpHandler` serves it at `GET {base}/openapi.json`
 * (option `openapi`, default true); `npm run openapi` writes the same text to docs/openapi.json.
 *
 * Paths are relative to the base path (`/status`, not `/auth/status`), and the one server is `.`: a
 * URL relative to where the document is served (OpenAPI 3.1, Server Object). The document sits at
 * `{base}/openapi.json`, beside the routes, so `.` resolves to the routes' prefix however the app
 * mounts them (an Express router at `/api/auth`, a Koa middleware with `basePath`), which the handler
 * itself cannot know. The document is therefore the same for every handler and every base path.
 *
 * @module
 */
import { ERROR_STATUS, type ScanAuthErrorCode } from '../errors'
import type { Route, RouteAnswer, RouteAuth } from './route'
import { OPENAPI_CACHE_CONTROL, ROUTES } from './routes'
import type { HttpResponse } from './types'
import { codedErrorAnswer, errorAnswer } from './wire-schemas'
import { componentSchemas, headerParameter, queryParameters, ref, type Json } from './openapi-schemas'

/**
 * `info.version`: the version of the wire interface the document describes, not of a package. Raise
 * it when a route, a parameter or a wire shape changes (minor when added, major when changed or removed).
 */
export const OPENAPI_INFO_VERSION = '1.0.0'

const JSON_TYPE = 'application/json'

/** What each status of an error means, before the codes that answer it. */
const ERROR_MEANING: Record<number, string> = {
  400: 'Malformed input: the body is not JSON, not an object or over the size limit (16 KiB by default), or a field or parameter is missing or invalid; `detail` names it',
  401: 'No `Authorization: Bearer` token, or a session that is unknown or has ended',
  403: 'Refused',
  404: 'Not found',
  409: 'Conflict; nothing was changed',
  415: 'The body is not sent as `Content-Type: application/json` (B-wire-6); nothing was read or changed',
  429: 'A rate limit (B-rate-1…12); nothing was changed. Try again after `Retry-After` seconds',
  500: 'An unexpected failure (a store that failed, a bug); `detail` is `Internal error` and reveals nothing',
  502: 'A service scanauth depends on failed; `detail` says so in our words (B-wire-5), nothing chargeable was opened twice. The request may be repeated',
  503: 'Too many concurrent changes to one scene or user (B-conc-2); nothing was changed, try again',
}

/**
 * The error answers of a route: one per status of its codes (errors.ts), each `{detail}` for the
 * specification's routes and `{error, detail}` for the others (B-wire-7); 500 always.
 */
function errorAnswers(codes: readonly ScanAuthErrorCode[], specified: boolean): Record<string, Json> {
  const byStatus = new Map<number, ScanAuthErrorCode[]>()
  for (const code of [...codes, 'internal_error' as const]) {
    const status = ERROR_STATUS[code]
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const answers: Record<string, Json> = {}
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const named = (byStatus.get(status) ?? []).map((code) => `\`${code}\``).join(', ')
    const answer: Json = {
      description: `${ERROR_MEANING[status] ?? 'Refused'}. Error codes: ${named} (docs/errors.md).`,
      content: { [JSON_TYPE]: { schema: ref(specified ? errorAnswer : codedErrorAnswer) } },
    }
    if (status === 401) answer.headers = { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } }
    if (status === 429) answer.headers = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
    answers[String(status)] = answer
  }
  return answers
}

/** An HTML page of the confirm and phone routes, with the headers of B-confirm-11 and B-phone-9. */
function htmlPage(description: string): Json {
  return {
    description,
    headers: {
      'Content-Security-Policy': { $ref: '#/components/headers/Content-Security-Policy' },
      'X-Frame-Options': { $ref: '#/components/headers/X-Frame-Options' },
    },
    content: { 'text/html': { schema: { type: 'string' } } },
  }
}

/** The HTML refusals of the confirm and phone routes (B-confirm-12, B-phone-10): a page saying why, with the status of its code. */
function htmlRefusals(codes: readonly ScanAuthErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ScanAuthErrorCode[]>()
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code])
  const answers: Record<string, Json> = {}
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const named = (byStatus.get(status) ?? []).map((code) => `\`${code}\``).join(', ')
    answers[String(status)] = htmlPage(`A page saying why the request was refused; nothing changed. Error codes: ${named}.`)
  }
  answers['500'] = htmlPage('A page that reveals nothing: an unexpected failure.')
  return answers
}

/** The `security` of each kind of route: none, the Bearer scheme, or either (an empty requirement first). */
const SECURITY: Record<RouteAuth, Json[] | undefined> = {
  none: undefined,
  bearer: [{ bearer: [] }],
  'optional-bearer': [{}, { bearer: [] }],
}

/** A successful answer of a route, as the document shows it. */
function answerOf({ description, body, stream, location }: RouteAnswer): Json {
  if (body === 'html') return htmlPage(description)
  if (body === 'json-object') return { description, content: { [JSON_TYPE]: { schema: { type: 'object' } } } }
  if (body !== undefined) return { description, content: { [JSON_TYPE]: { schema: ref(body) } } }
  if (stream !== undefined) {
    const events = Object.fromEntries(
      Object.entries(stream.events).map(([name, event]) => [name, { description: event.description, ...(event.id === undefined ? {} : { id: event.id }), data: ref(event.data) }]),
    )
    return { description, content: { 'text/event-stream': { schema: { type: 'string', description: stream.description }, 'x-scanauth-events': events } } }
  }
  if (location !== undefined) return { description, headers: { Location: { required: true, description: location, schema: { type: 'string' } } } }
  return { description }
}

/** The operation of one route: who may call it, its parameters and body, its answers and refusals. */
function operationOf(route: Route): Json {
  const { request } = route
  const operation: Json = { operationId: route.operationId, tags: [...route.tags], summary: route.summary }
  if (route.description !== undefined) operation.description = route.description
  const security = SECURITY[route.auth]
  if (security !== undefined) operation.security = security
  const parameters = [
    ...(request?.query === undefined ? [] : queryParameters(request.query)),
    ...(route.pollSecret === undefined ? [] : [headerParameter('X-Scanauth-Poll-Secret', route.pollSecret)]),
    ...Object.entries(request?.headers ?? {}).map(([name, schema]) => headerParameter(name, schema)),
  ]
  if (parameters.length > 0) operation.parameters = parameters
  if (request?.body !== undefined) {
    const { schema, required = true, contentType = JSON_TYPE, examples } = request.body
    operation.requestBody = { required, content: { [contentType]: { schema: ref(schema), ...(examples === undefined ? {} : { examples: structuredClone(examples) }) } } }
  }
  const responses: Record<string, Json> = {}
  for (const [status, answer] of Object.entries(route.answers)) responses[status] = answerOf(answer)
  // The refusals take the form of the answer: pages for an HTML route, `{detail}` or `{error, detail}` for the others.
  const refusals = route.errors === undefined ? {} : route.answers[200]?.body === 'html' ? htmlRefusals(route.errors) : errorAnswers(route.errors, route.specified === true)
  operation.responses = { ...responses, ...refusals }
  return operation
}

/** The operations of the route table, path by path (relative to the base path), in the table's order. */
function paths(): Record<string, Json> {
  const items: Record<string, Json> = {}
  for (const route of ROUTES) {
    const item = (items[route.path] ??= {})
    item[route.method.toLowerCase()] = operationOf(route)
  }
  return items
}

const DESCRIPTION = `The HTTP routes of scanauth (\`createHttpHandler\` of \`@scanauth/core\`, served by the Express, Koa and Fetch adapters): a device shows a QR code, a person scans it in WeChat, and the device is signed in. Rules: docs/behaviour.md.

**Where.** The paths are relative to the handler's base path (\`/auth\` by default). The server URL \`.\` is relative to this document, which is served at \`{base}/openapi.json\`: it resolves to the base path wherever the app mounts the routes. A client generated from a copy of the document takes its base URL at run time (e.g. \`https://example.com/auth\`).

**Wire.** JSON bodies in snake_case, timestamps in ISO 8601 (UTC). Every JSON answer carries \`cache-control: no-store\` (this document excepted). \`HEAD\` is served like \`GET\`, without the body; any other method on one of these paths is 405 with \`Allow\`.

**Errors.** Every error is \`{detail}\` with the status of its code (B-wire-2, docs/errors.md); a rate limit is 429 with \`Retry-After\`. \`detail\` is text for people: branch on the status.

**Sessions.** \`status\` answers \`authorized\` with a \`session_token\`; present it as \`Authorization: Bearer <session_token>\`.`

/** Builds the document (once per process: see {@link openApiDocument}). */
function buildDocument(): Json {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'scanauth',
      version: OPENAPI_INFO_VERSION,
      summary: 'Scan a QR code in WeChat to authorize a device.',
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '.', description: 'The base path of the routes: where this document is served, without `/openapi.json`.' }],
    tags: [
      { name: 'device', description: 'Signing a device in and using its session.' },
      { name: 'payments', description: 'Buying time or points (with the `payments` option).' },
      { name: 'confirm', description: 'The confirm page on the scanner\'s phone (`confirm: \'link\'`): HTML, not for devices.' },
      { name: 'phone', description: 'Paying on the phone that scanned (`payments.phone`): HTML pages under `m/`, for WeChat\'s browser, not for devices.' },
      { name: 'document', description: 'This document.' },
    ],
    paths: paths(),
    components: {
      schemas: componentSchemas(),
      headers: {
        'Retry-After': {
          description: 'Whole seconds, at least 1, until the limit that refused the request lets one through again (B-rate-8).',
          required: true,
          schema: { type: 'integer', minimum: 1 },
        },
        'WWW-Authenticate': { description: 'The scheme to authenticate with.', required: true, schema: { type: 'string', const: 'Bearer' } },
        'Content-Security-Policy': { description: 'No framing, and no script but the cashier page\'s own, by nonce (B-confirm-11, B-phone-9).', required: true, schema: { type: 'string' } },
        'X-Frame-Options': { description: 'The page is never framed (B-confirm-11).', required: true, schema: { type: 'string', const: 'DENY' } },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'The `session_token` of an `authorized` status answer (D-session).',
        },
      },
    },
  }
}

/** Freezes a JSON value and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

let built: { document: Readonly<Json>; text: string } | undefined

function documentAndText(): { document: Readonly<Json>; text: string } {
  if (built === undefined) {
    const document = deepFreeze(buildDocument())
    built = { document, text: `${JSON.stringify(document, null, 2)}\n` }
  }
  return built
}

/**
 * The OpenAPI 3.1 document of the HTTP routes (`GET {base}/openapi.json`), generated from the route
 * table and the zod schemas of the routes. Built once per process and frozen: copy it
 * (`structuredClone`) to add the app's own routes.
 */
export function openApiDocument(): Readonly<Record<string, unknown>> {
  return documentAndText().document
}

/** The document as the handler serves it and docs/openapi.json holds it: JSON indented by two spaces, with a final newline. */
export function openApiJson(): string {
  return documentAndText().text
}

/** The answer of `GET {base}/openapi.json`: the document as `body`, and as `text`, which the adapters send. */
export function openApiResponse(): HttpResponse {
  const { document, text } = documentAndText()
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': OPENAPI_CACHE_CONTROL }, body: document, text }
}
