/**
 * The route table: every route of `createHttpHandler`, declared once (the shape of a declaration:
 * route.ts). The handler dispatches from it and parses each route's input with the schemas it names
 * (handler.ts), the OpenAPI document is generated from it (openapi.ts), and the route tests iterate
 * it. Paths are relative to the base path (`/auth` by default). The code of each route lives with
 * its group: device-routes.ts, payment-routes.ts, confirm-routes.ts; the wire shapes in
 * wire-schemas.ts.
 *
 * Every route but the pages for the phone (confirm, `m/*`) answers JSON: on a refusal, the status of its error code with
 * `{detail}` on the specification's routes (`specified`, B-wire-2) and `{error, detail}` on the others
 * (B-wire-7); 405 with `Allow` for a method the path does not have; `HEAD` served as `GET`.
 *
 * @module
 */
import { DEFAULT_HEARTBEAT_MS, RECONNECT_DELAY_MS } from './events'
import { createScene, consume, getSession, getStatus, logout, streamEvents } from './device-routes'
import { getOrder, listPlans, purchase } from './payment-routes'
import { confirmDecisionRoute, confirmPageRoute } from './confirm-routes'
import { phoneOrderPageRoute, phonePayPageRoute, phonePlanRoute, subscribedRoute } from './phone-routes'
import { route, type Route } from './route'
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
  phoneOrderQuery,
  phonePayQuery,
  phonePlanForm,
  plansAnswer,
  subscribedQuery,
  pollSecretHeader,
  purchaseAnswer,
  purchasePollSecretHeader,
  purchaseRequest,
  sessionAnswer,
  statusAnswer,
  statusQuery,
} from './wire-schemas'

/**
 * The `cache-control` of the OpenAPI document: it is the same for the whole life of the process (it
 * changes only with a new version of scanauth), so clients and proxies may keep it five minutes.
 */
export const OPENAPI_CACHE_CONTROL = 'public, max-age=300'

/** Every route, in the order of the document; the methods of one path in the order `Allow` names them. */
export const ROUTES: readonly Route[] = [
  route({
    method: 'POST',
    path: '/create_scene',
    operationId: 'createScene',
    tags: ['device'],
    summary: 'Create a scene: a QR code for the device to show',
    description:
      'A new `scene_str` and a QR code from the messaging platform, valid for the scene lifetime (B-create-1…5). Limited per device, per client address and by a daily QR code budget (B-rate-1…9).',
    auth: 'none',
    request: { body: { schema: createSceneRequest } },
    answers: { 200: { description: 'The scene and its code.', body: createSceneAnswer } },
    errors: ['invalid_request', 'unsupported_media_type', 'rate_limited', 'qr_creation_failed', 'conflict'],
    specified: true,
    run: createScene,
  }),
  route({
    method: 'GET',
    path: '/status',
    operationId: 'getStatus',
    tags: ['device'],
    summary: 'Poll a scene, or long-poll it with `wait`',
    description:
      'Where the scene stands (B-poll-1…5). With `wait`, the answer comes as soon as the scene leaves `pending` (or `scanned`), or after `wait` seconds (B-wait-2). An `authorized` answer carries the session token: for a scene created with a poll secret, only to a request that presents it (B-secret-2). Polls of one scene are limited (B-rate-9).',
    auth: 'none',
    pollSecret: pollSecretHeader,
    request: { query: statusQuery },
    answers: { 200: { description: 'The status.', body: statusAnswer } },
    errors: ['invalid_request', 'poll_secret_required', 'scene_not_found', 'rate_limited', 'conflict'],
    specified: true,
    run: getStatus,
  }),
  route({
    method: 'GET',
    path: '/events',
    operationId: 'streamEvents',
    tags: ['device'],
    summary: 'Follow a scene as Server-Sent Events',
    description: `A \`text/event-stream\` (B-wait-3, B-wait-5): an \`event: status\` whose data is the \`Status\` answer, on connect and on each change; a \`: heartbeat\` comment every ${DEFAULT_HEARTBEAT_MS / 1000} s by default (option \`heartbeatMs\`) while nothing changes; the end of the stream after a final status. The events are described in \`x-scanauth-events\` of the media type. An unknown scene is a plain 404 before the stream starts.`,
    auth: 'none',
    pollSecret: pollSecretHeader,
    request: { query: eventsQuery, headers: { 'Last-Event-ID': lastEventIdHeader } },
    answers: {
      200: {
        description: 'The event stream.',
        stream: {
          description: 'Server-Sent Events: `event: status` (data: `Status`), at most one final `event: error` (data: `Error`), heartbeat comments.',
          events: {
            status: {
              description: `Sent on connect and on each change; \`id:\` is the status itself, so a reconnecting \`EventSource\` sends the last one back as \`Last-Event-ID\`. The first event also carries \`retry: ${RECONNECT_DELAY_MS}\`.`,
              id: 'The `status` field of the data.',
              data: statusAnswer,
            },
            error: {
              description:
                'The last event of a stream that cannot go on: `{detail: "Internal error"}` after a failure, or the `poll_secret_required` refusal when the scene turned `authorized` and the request presented no poll secret (B-secret-2).',
              data: errorAnswer,
            },
          },
        },
      },
      204: { description: 'A reconnect (`Last-Event-ID`) to a scene that has ended with that status: no body, and `EventSource` stops (B-wait-5).' },
    },
    errors: ['invalid_request', 'poll_secret_required', 'scene_not_found', 'rate_limited', 'conflict'],
    run: streamEvents,
  }),
  route({
    method: 'GET',
    path: '/session',
    operationId: 'getSession',
    tags: ['device'],
    summary: 'The session of the Bearer token',
    description: 'Who the session belongs to and the user\'s current authorization (D-session).',
    auth: 'bearer',
    answers: { 200: { description: 'The live session.', body: sessionAnswer } },
    errors: ['unauthorized', 'conflict'],
    run: getSession,
  }),
  route({
    method: 'POST',
    path: '/consume',
    operationId: 'consume',
    tags: ['device'],
    summary: 'Use the current authorization',
    description: 'A time authorization is used as it is; a points authorization gives `points` (B-consume-1…5).',
    auth: 'bearer',
    request: { body: { schema: consumeRequest, required: false } },
    answers: { 200: { description: 'What the use did: `ok`, `need_purchase` or `insufficient_points`.', body: consumeAnswer } },
    errors: ['invalid_request', 'unsupported_media_type', 'unauthorized', 'conflict'],
    run: consume,
  }),
  route({
    method: 'POST',
    path: '/logout',
    operationId: 'logout',
    tags: ['device'],
    summary: 'End the session of the Bearer token',
    description: 'Ends the presented session only; the user\'s other devices stay signed in (B-revoke-4).',
    auth: 'bearer',
    answers: { 204: { description: 'The session has ended. No body.' } },
    errors: ['unauthorized'],
    run: logout,
  }),
  route({
    method: 'GET',
    path: '/plans',
    operationId: 'listPlans',
    tags: ['payments'],
    summary: 'The catalog of plans',
    auth: 'none',
    answers: { 200: { description: 'The plans, in the catalog\'s order; empty without payments (B-order-1).', body: plansAnswer } },
    errors: [],
    run: listPlans,
  }),
  route({
    method: 'POST',
    path: '/purchase',
    operationId: 'purchase',
    tags: ['payments'],
    summary: 'Open an order and get the code to pay with',
    description:
      'Two bodies (B-order-2): `{scene, plan}` for the device whose poll answered `need_purchase` (no Bearer token; the user the scan bound buys, and the device learns of the payment on its poll or stream; while the scene answers `need_purchase` or within 10 minutes of its scan, B-order-12, and with its poll secret when it has one, B-order-13), or `{plan}` with the Bearer token of a live session, whose user buys. A purchase replaces only the open orders of the same scene, or of the user\'s sessions (B-order-4). Purchases are limited per user and per client address (B-rate-10…12).',
    auth: 'optional-bearer',
    pollSecret: purchasePollSecretHeader,
    request: {
      body: {
        schema: purchaseRequest,
        examples: {
          by_scene: { summary: 'The need_purchase device names its scene', value: { scene: `pc_${'0123456789abcdef'.repeat(2)}`, plan: 'days-30' } },
          by_session: { summary: 'A signed-in device, with its Bearer token', value: { plan: 'days-30' } },
        },
      },
    },
    answers: { 200: { description: 'The order and the code to pay with.', body: purchaseAnswer } },
    errors: [
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
    ],
    run: purchase,
  }),
  route({
    method: 'GET',
    path: '/order',
    operationId: 'getOrder',
    tags: ['payments'],
    summary: 'Where the buyer\'s order stands',
    description: 'The buyer\'s own order only: another user\'s is answered like an unknown one (B-order-11).',
    auth: 'bearer',
    request: { query: orderQuery },
    answers: { 200: { description: 'The order.', body: orderAnswer } },
    errors: ['invalid_request', 'unauthorized', 'payments_not_configured', 'order_not_found', 'conflict'],
    run: getOrder,
  }),
  route({
    method: 'GET',
    path: '/confirm',
    operationId: 'openConfirmPage',
    tags: ['confirm'],
    summary: 'The confirm page, for the scanner\'s phone (confirm: \'link\')',
    description:
      'Opened from the link sent to the scanner. Without `code`, a redirect to WeChat web OAuth; WeChat sends the browser back with `code` and `state`, and the answer is the page with its two forms (B-confirm-6, B-confirm-11). Every answer is HTML, refusals included (B-confirm-12).',
    auth: 'none',
    mode: 'confirm',
    // The route reads the raw values; the service parses them with this same schema.
    request: { query: confirmQuery },
    answers: {
      200: { description: 'The confirm page: the device, where and when it asked, and two forms (deny, confirm) that post here.', body: 'html' },
      302: { description: 'First visit: to WeChat web OAuth (`scope=snsapi_base`), which comes back here with `code` and `state`.', location: 'The WeChat OAuth URL.' },
    },
    errors: [
      'invalid_request',
      'confirm_oauth_refused',
      'confirm_wrong_user',
      'confirm_not_configured',
      'confirm_ticket_invalid',
      'confirm_ticket_used',
      'confirm_ticket_expired',
      'confirm_oauth_failed',
    ],
    run: confirmPageRoute,
  }),
  route({
    method: 'POST',
    path: '/confirm',
    operationId: 'decideOnConfirmPage',
    tags: ['confirm'],
    summary: 'The scanner\'s decision, from the confirm page\'s form',
    description: '`decision=confirm` signs the device in (or answers `need_purchase` to it); `deny` refuses it (B-confirm-7, B-confirm-8).',
    auth: 'none',
    mode: 'confirm',
    request: { body: { schema: confirmForm, contentType: 'application/x-www-form-urlencoded' } },
    answers: { 200: { description: 'The result page: confirmed or denied.', body: 'html' } },
    errors: ['invalid_request', 'confirm_csrf_invalid', 'confirm_not_configured', 'confirm_ticket_invalid', 'confirm_ticket_used', 'confirm_ticket_expired'],
    run: confirmDecisionRoute,
  }),
  route({
    method: 'GET',
    path: '/m/pay',
    operationId: 'openPhonePayPage',
    tags: ['phone'],
    summary: 'The plans page, on the phone that scanned (payments.phone)',
    description:
      'Opened from the link of a `need_purchase` scan (`?ticket=`, once, by the scanner only) or as the person\'s own page. Outside WeChat\'s browser, a page that says to open the link in WeChat; without `code`, a redirect to WeChat web OAuth; then the person\'s access and the plans, each a form that posts here with the page\'s CSRF token (B-phone-3…5). Every answer is HTML, refusals included.',
    auth: 'none',
    mode: 'phone',
    request: { query: phonePayQuery },
    answers: {
      200: { description: 'The plans page (or, outside WeChat, the page that says to open the link in WeChat).', body: 'html' },
      302: { description: 'First visit: to WeChat web OAuth (`scope=snsapi_base`), which comes back here with `code` and `state`.', location: 'The WeChat OAuth URL.' },
    },
    errors: ['invalid_request', 'phone_oauth_refused', 'phone_wrong_user', 'phone_not_configured', 'phone_ticket_invalid', 'user_not_found', 'phone_ticket_used', 'phone_ticket_expired', 'phone_oauth_failed'],
    run: phonePayPageRoute,
  }),
  route({
    method: 'POST',
    path: '/m/pay',
    operationId: 'choosePhonePlan',
    tags: ['phone'],
    summary: 'A plan chosen on the plans page: the cashier',
    description:
      'Opens or reuses the person\'s JSAPI order (for the ticket\'s device while it may buy) and answers the cashier page: the six `getBrandWCPayRequest` parameters in `<script type="application/json" id="wechatpay-jsapi">` and the page\'s own script, which calls WeChat\'s cashier and goes to `m/order?id=…` on `ok` (B-phone-5, B-phone-6). Without `plan`, the plans page again.',
    auth: 'none',
    mode: 'phone',
    request: { body: { schema: phonePlanForm, contentType: 'application/x-www-form-urlencoded' } },
    answers: { 200: { description: 'The cashier page (or, without a plan, the plans page).', body: 'html' } },
    errors: ['invalid_request', 'phone_csrf_invalid', 'phone_not_configured', 'plan_not_found', 'user_not_found', 'purchase_in_progress', 'rate_limited', 'payment_provider_failed'],
    run: phonePlanRoute,
  }),
  route({
    method: 'GET',
    path: '/m/order',
    operationId: 'openPhoneOrderPage',
    tags: ['phone'],
    summary: 'Where the cashier goes on `ok`: the order, as WeChat Pay reports it',
    description:
      'After WeChat web OAuth, the person\'s own order. One with no payment applied yet is asked of WeChat Pay and, if paid, granted through the same idempotent path as the notification; an unpaid one is refused with 409 and nothing is granted (B-phone-7).',
    auth: 'none',
    mode: 'phone',
    request: { query: phoneOrderQuery },
    answers: {
      200: { description: 'The paid order, and what the person has now.', body: 'html' },
      302: { description: 'First visit: to WeChat web OAuth (`scope=snsapi_base`), which comes back here with `code` and `state`.', location: 'The WeChat OAuth URL.' },
    },
    errors: ['invalid_request', 'phone_oauth_refused', 'phone_wrong_user', 'phone_not_configured', 'order_not_found', 'order_not_paid', 'phone_oauth_failed', 'payment_provider_failed'],
    run: phoneOrderPageRoute,
  }),
  route({
    method: 'GET',
    path: '/m/subscribed',
    operationId: 'acceptReminderSubscription',
    tags: ['phone'],
    summary: 'WeChat\'s redirect back from the one-time subscription page (reminders)',
    description:
      'WeChat sends the phone here after the person confirms or cancels the "remind me before it ends" subscription. A confirmation from a link issued to that person (its `reserved`), for the template and scene offered, stores one message\'s worth of consent, once; a cancel, a replay or a forgery stores nothing (B-remind-7).',
    auth: 'none',
    mode: 'subscribe',
    request: { query: subscribedQuery },
    answers: { 200: { description: 'A page saying whether a reminder will come.', body: 'html' } },
    errors: ['invalid_request', 'subscription_invalid', 'subscription_state_invalid', 'subscription_not_configured'],
    run: subscribedRoute,
  }),
  route({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['document'],
    summary: 'This document',
    description: `OpenAPI 3.1, the same for every base path. \`cache-control: ${OPENAPI_CACHE_CONTROL}\`. Turned off with the handler option \`openapi: false\` (the path then falls through to the app).`,
    auth: 'none',
    answers: { 200: { description: 'The OpenAPI document.', body: 'json-object' } },
    document: true,
  }),
]
