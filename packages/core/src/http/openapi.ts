/**
 * The OpenAPI 3.1 document of the HTTP routes, generated from the zod schemas the routes parse their
 * input with and type their answers by (wire-schemas.ts, with `z.toJSONSchema`), so it cannot drift
 * from them. `createHttpHandler` serves it at `GET {base}/openapi.json` (option `openapi`, default
 * true); `npm run openapi` writes the same text to docs/openapi.json.
 *
 * Paths are relative to the base path (`/status`, not `/auth/status`), and the one server is `.`: a
 * URL relative to where the document is served (OpenAPI 3.1, Server Object). The document sits at
 * `{base}/openapi.json`, beside the routes, so `.` resolves to the routes' prefix however the app
 * mounts them (an Express router at `/api/auth`, a Koa middleware with `basePath`), which the handler
 * itself cannot know. The document is therefore the same for every handler and every base path.
 *
 * @module
 */
import { z } from 'zod'
import { ERROR_STATUS, type ScanAuthErrorCode } from '../errors'
import { DEFAULT_HEARTBEAT_MS, RECONNECT_DELAY_MS } from './events'
import type { HttpResponse } from './types'
import {
  confirmForm,
  confirmQuery,
  consumeAnswer,
  consumeRequest,
  createSceneAnswer,
  createSceneRequest,
  errorAnswer,
  eventsQuery,
  lastEventIdHeader,
  orderAnswer,
  orderQuery,
  plansAnswer,
  pollSecretHeader,
  purchaseAnswer,
  purchasePollSecretHeader,
  purchaseRequest,
  sessionAnswer,
  statusAnswer,
  statusQuery,
  wireRegistry,
} from './wire-schemas'

/** Where the document is served, under the base path. */
export const OPENAPI_PATH = '/openapi.json'

/**
 * The `cache-control` of the document: it is the same for the whole life of the process (it changes
 * only with a new version of scanauth), so clients and proxies may keep it five minutes.
 */
export const OPENAPI_CACHE_CONTROL = 'public, max-age=300'

/**
 * `info.version`: the version of the wire interface the document describes, not of a package. Raise
 * it when a route, a parameter or a wire shape changes (minor when added, major when changed or removed).
 */
export const OPENAPI_INFO_VERSION = '1.0.0'

/** A JSON object of the document. */
type Json = { [key: string]: unknown }

const SCHEMAS = '#/components/schemas/'

/** A `$ref` to the component of a wire schema (one with an `id`). */
function ref(schema: z.ZodType): Json {
  const id = wireRegistry.get(schema)?.id
  if (id === undefined) throw new Error('openapi: a schema the document refers to has no id in wireRegistry')
  return { $ref: `${SCHEMAS}${id}` }
}

/** A schema without an id as JSON Schema, in place (a query parameter's, a header's). */
function inline(schema: z.ZodType): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', metadata: wireRegistry }) as Json
  return json
}

/**
 * `components.schemas`: every wire schema with an id, the request bodies in their input form (a
 * default makes a field optional), with the `discriminator` of each union whose every member is a
 * component (for client generators; JSON Schema validation ignores it).
 */
function componentSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(wireRegistry, { target: 'draft-2020-12', io: 'input', metadata: wireRegistry, uri: (id) => `${SCHEMAS}${id}` })
  const components: Record<string, Json> = {}
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...json } = schema as Json
    components[id] = json
  }
  for (const union of DISCRIMINATED) {
    const id = wireRegistry.get(union)?.id
    const discriminator = discriminatorOf(union)
    if (id !== undefined && discriminator !== undefined) components[id] = { ...components[id], discriminator }
  }
  return components
}

/** The unions of the answers that carry a `discriminator`. */
const DISCRIMINATED = [statusAnswer, consumeAnswer]

/** `{propertyName, mapping}` of a discriminated union whose members are all components; undefined otherwise. */
function discriminatorOf(union: z.ZodDiscriminatedUnion): Json | undefined {
  const propertyName = union.def.discriminator
  const mapping: Record<string, string> = {}
  for (const option of union.options) {
    const id = wireRegistry.get(option as z.ZodType)?.id
    const key = (option as z.ZodObject).shape[propertyName]
    if (id === undefined || key === undefined) return undefined
    const values = key instanceof z.ZodLiteral ? [...key.values] : key instanceof z.ZodEnum ? key.options : []
    for (const value of values) mapping[String(value)] = `${SCHEMAS}${id}`
  }
  return { propertyName, mapping }
}

/** The query parameters of a route, from the schema it parses them with. */
function queryParameters(schema: z.ZodObject): Json[] {
  const json = inline(schema) as { properties: Record<string, Json>; required?: string[] }
  return Object.entries(json.properties).map(([name, property]) => {
    const { description, ...rest } = property
    return { name, in: 'query', required: json.required?.includes(name) ?? false, description, schema: rest }
  })
}

/** A header parameter. */
function headerParameter(name: string, schema: z.ZodType): Json {
  const { description, ...rest } = inline(schema)
  return { name, in: 'header', required: false, description, schema: rest }
}

const JSON_TYPE = 'application/json'

/** A 2xx JSON answer. */
function jsonAnswer(description: string, schema: z.ZodType): Json {
  return { description, content: { [JSON_TYPE]: { schema: ref(schema) } } }
}

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

/** The error answers of a route: one per status of its codes (errors.ts), each `{detail}`; 500 always. */
function errorAnswers(codes: readonly ScanAuthErrorCode[]): Record<string, Json> {
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
      content: { [JSON_TYPE]: { schema: ref(errorAnswer) } },
    }
    if (status === 401) answer.headers = { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } }
    if (status === 429) answer.headers = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
    answers[String(status)] = answer
  }
  return answers
}

/** An HTML page of the confirm routes, with the headers of B-confirm-11. */
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

/** The HTML refusals of the confirm routes (B-confirm-12): a page saying why, with the status of its code. */
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

const BEARER = [{ bearer: [] }]

/** The `status` and `error` events of `GET events`, described for people and tools (`x-scanauth-events`). */
const EVENTS_EXTENSION = {
  status: {
    description:
      'Sent on connect and on each change; `id:` is the status itself, so a reconnecting `EventSource` sends the last one back as `Last-Event-ID`. The first event also carries `retry: ' +
      String(RECONNECT_DELAY_MS) +
      '`.',
    id: 'The `status` field of the data.',
    data: ref(statusAnswer),
  },
  error: {
    description:
      'The last event of a stream that cannot go on: `{detail: "Internal error"}` after a failure, or the `poll_secret_required` refusal when the scene turned `authorized` and the request presented no poll secret (B-secret-2).',
    data: ref(errorAnswer),
  },
}

/** The operations, path by path (relative to the base path). */
function paths(): Record<string, Json> {
  return {
    '/create_scene': {
      post: {
        operationId: 'createScene',
        tags: ['device'],
        summary: 'Create a scene: a QR code for the device to show',
        description:
          'A new `scene_str` and a QR code from the messaging platform, valid for the scene lifetime (B-create-1…5). Limited per device, per client address and by a daily QR code budget (B-rate-1…9).',
        requestBody: { required: true, content: { [JSON_TYPE]: { schema: ref(createSceneRequest) } } },
        responses: {
          '200': jsonAnswer('The scene and its code.', createSceneAnswer),
          ...errorAnswers(['invalid_request', 'unsupported_media_type', 'rate_limited', 'qr_creation_failed', 'conflict']),
        },
      },
    },
    '/status': {
      get: {
        operationId: 'getStatus',
        tags: ['device'],
        summary: 'Poll a scene, or long-poll it with `wait`',
        description:
          'Where the scene stands (B-poll-1…5). With `wait`, the answer comes as soon as the scene leaves `pending` (or `scanned`), or after `wait` seconds (B-wait-2). An `authorized` answer carries the session token: for a scene created with a poll secret, only to a request that presents it (B-secret-2). Polls of one scene are limited (B-rate-9).',
        parameters: [...queryParameters(statusQuery), headerParameter('X-Scanauth-Poll-Secret', pollSecretHeader)],
        responses: {
          '200': jsonAnswer('The status.', statusAnswer),
          ...errorAnswers(['invalid_request', 'poll_secret_required', 'scene_not_found', 'rate_limited', 'conflict']),
        },
      },
    },
    '/events': {
      get: {
        operationId: 'streamEvents',
        tags: ['device'],
        summary: 'Follow a scene as Server-Sent Events',
        description:
          'A `text/event-stream` (B-wait-3, B-wait-5): an `event: status` whose data is the `Status` answer, on connect and on each change; a `: heartbeat` comment every ' +
          String(DEFAULT_HEARTBEAT_MS / 1000) +
          ' s by default (option `heartbeatMs`) while nothing changes; the end of the stream after a final status. The events are described in `x-scanauth-events` of the media type. An unknown scene is a plain 404 before the stream starts.',
        parameters: [
          ...queryParameters(eventsQuery),
          headerParameter('X-Scanauth-Poll-Secret', pollSecretHeader),
          headerParameter('Last-Event-ID', lastEventIdHeader),
        ],
        responses: {
          '200': {
            description: 'The event stream.',
            content: {
              'text/event-stream': {
                schema: { type: 'string', description: 'Server-Sent Events: `event: status` (data: `Status`), at most one final `event: error` (data: `Error`), heartbeat comments.' },
                'x-scanauth-events': EVENTS_EXTENSION,
              },
            },
          },
          '204': { description: 'A reconnect (`Last-Event-ID`) to a scene that has ended with that status: no body, and `EventSource` stops (B-wait-5).' },
          ...errorAnswers(['invalid_request', 'poll_secret_required', 'scene_not_found', 'rate_limited', 'conflict']),
        },
      },
    },
    '/session': {
      get: {
        operationId: 'getSession',
        tags: ['device'],
        summary: 'The session of the Bearer token',
        description: 'Who the session belongs to and the user\'s current authorization (D-session).',
        security: BEARER,
        responses: {
          '200': jsonAnswer('The live session.', sessionAnswer),
          ...errorAnswers(['unauthorized', 'conflict']),
        },
      },
    },
    '/consume': {
      post: {
        operationId: 'consume',
        tags: ['device'],
        summary: 'Use the current authorization',
        description: 'A time authorization is used as it is; a points authorization gives `points` (B-consume-1…5).',
        security: BEARER,
        requestBody: { required: false, content: { [JSON_TYPE]: { schema: ref(consumeRequest) } } },
        responses: {
          '200': jsonAnswer('What the use did: `ok`, `need_purchase` or `insufficient_points`.', consumeAnswer),
          ...errorAnswers(['invalid_request', 'unsupported_media_type', 'unauthorized', 'conflict']),
        },
      },
    },
    '/logout': {
      post: {
        operationId: 'logout',
        tags: ['device'],
        summary: 'End the session of the Bearer token',
        description: 'Ends the presented session only; the user\'s other devices stay signed in (B-revoke-4).',
        security: BEARER,
        responses: {
          '204': { description: 'The session has ended. No body.' },
          ...errorAnswers(['unauthorized']),
        },
      },
    },
    '/plans': {
      get: {
        operationId: 'listPlans',
        tags: ['payments'],
        summary: 'The catalog of plans',
        responses: {
          '200': jsonAnswer('The plans, in the catalog\'s order; empty without payments (B-order-1).', plansAnswer),
          ...errorAnswers([]),
        },
      },
    },
    '/purchase': {
      post: {
        operationId: 'purchase',
        tags: ['payments'],
        summary: 'Open an order and get the code to pay with',
        description:
          'Two bodies (B-order-2): `{scene, plan}` for the device whose poll answered `need_purchase` (no Bearer token; the user the scan bound buys, and the device learns of the payment on its poll or stream; while the scene answers `need_purchase` or within 10 minutes of its scan, B-order-12, and with its poll secret when it has one, B-order-13), or `{plan}` with the Bearer token of a live session, whose user buys. A purchase replaces only the open orders of the same scene, or of the user\'s sessions (B-order-4). Purchases are limited per user and per client address (B-rate-10…12).',
        security: [{}, ...BEARER],
        parameters: [headerParameter('X-Scanauth-Poll-Secret', purchasePollSecretHeader)],
        requestBody: {
          required: true,
          content: {
            [JSON_TYPE]: {
              schema: ref(purchaseRequest),
              examples: {
                by_scene: { summary: 'The need_purchase device names its scene', value: { scene: `pc_${'0123456789abcdef'.repeat(2)}`, plan: 'days-30' } },
                by_session: { summary: 'A signed-in device, with its Bearer token', value: { plan: 'days-30' } },
              },
            },
          },
        },
        responses: {
          '200': jsonAnswer('The order and the code to pay with.', purchaseAnswer),
          ...errorAnswers([
            'invalid_request',
            'unsupported_media_type',
            'unauthorized',
            'payments_not_configured',
            'plan_not_found',
            'poll_secret_required',
            'scene_not_found',
            'scene_not_scanned',
            'scene_not_purchasable',
            'purchase_in_progress',
            'rate_limited',
            'payment_provider_failed',
            'conflict',
          ]),
        },
      },
    },
    '/order': {
      get: {
        operationId: 'getOrder',
        tags: ['payments'],
        summary: 'Where the buyer\'s order stands',
        description: 'The buyer\'s own order only: another user\'s is answered like an unknown one (B-order-11).',
        security: BEARER,
        parameters: queryParameters(orderQuery),
        responses: {
          '200': jsonAnswer('The order.', orderAnswer),
          ...errorAnswers(['invalid_request', 'unauthorized', 'payments_not_configured', 'order_not_found', 'conflict']),
        },
      },
    },
    '/confirm': {
      get: {
        operationId: 'openConfirmPage',
        tags: ['confirm'],
        summary: 'The confirm page, for the scanner\'s phone (confirm: \'link\')',
        description:
          'Opened from the link sent to the scanner. Without `code`, a redirect to WeChat web OAuth; WeChat sends the browser back with `code` and `state`, and the answer is the page with its two forms (B-confirm-6, B-confirm-11). Every answer is HTML, refusals included (B-confirm-12).',
        parameters: queryParameters(confirmQuery),
        responses: {
          '200': htmlPage('The confirm page: the device, where and when it asked, and two forms (deny, confirm) that post here.'),
          '302': {
            description: 'First visit: to WeChat web OAuth (`scope=snsapi_base`), which comes back here with `code` and `state`.',
            headers: { Location: { required: true, description: 'The WeChat OAuth URL.', schema: { type: 'string' } } },
          },
          ...htmlRefusals([
            'invalid_request',
            'confirm_oauth_refused',
            'confirm_wrong_user',
            'confirm_not_configured',
            'confirm_ticket_invalid',
            'confirm_ticket_used',
            'confirm_ticket_expired',
            'confirm_oauth_failed',
          ]),
        },
      },
      post: {
        operationId: 'decideOnConfirmPage',
        tags: ['confirm'],
        summary: 'The scanner\'s decision, from the confirm page\'s form',
        description: '`decision=confirm` signs the device in (or answers `need_purchase` to it); `deny` refuses it (B-confirm-7, B-confirm-8).',
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref(confirmForm) } } },
        responses: {
          '200': htmlPage('The result page: confirmed or denied.'),
          ...htmlRefusals(['invalid_request', 'confirm_csrf_invalid', 'confirm_not_configured', 'confirm_ticket_invalid', 'confirm_ticket_used', 'confirm_ticket_expired']),
        },
      },
    },
    [OPENAPI_PATH]: {
      get: {
        operationId: 'getOpenApiDocument',
        tags: ['document'],
        summary: 'This document',
        description: `OpenAPI 3.1, the same for every base path. \`cache-control: ${OPENAPI_CACHE_CONTROL}\`. Turned off with the handler option \`openapi: false\` (the path then falls through to the app).`,
        responses: {
          '200': { description: 'The OpenAPI document.', content: { [JSON_TYPE]: { schema: { type: 'object' } } } },
        },
      },
    },
  }
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
        'Content-Security-Policy': { description: 'No script, no framing (B-confirm-11).', required: true, schema: { type: 'string' } },
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
 * The OpenAPI 3.1 document of the HTTP routes (`GET {base}/openapi.json`), generated from the zod
 * schemas of the routes. Built once per process and frozen: copy it (`structuredClone`) to add the
 * app's own routes.
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
