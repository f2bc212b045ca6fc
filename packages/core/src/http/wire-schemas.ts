/**
 * The wire shapes of the HTTP routes as zod schemas, in one place: the request bodies and query
 * parameters the routes parse with (the route table, routes.ts, names them), the answers wire.ts
 * builds (its functions return their types), and the events of the event stream. The OpenAPI
 * document (openapi.ts) is generated from these same schemas, so it cannot drift from what the
 * routes accept and answer.
 *
 * Every refusal keeps the `detail` it had when the routes checked by hand: the messages are the
 * schemas' own (`parseInput` answers the first issue's message). Fields the service validates again
 * reuse the service's schema (validation.ts), so the document shows its limits.
 *
 * Request objects are `z.object` (unknown fields are ignored, and documented as allowed); answer
 * objects are `z.strictObject` (exactly these fields: docs/behaviour.md, wire shapes).
 *
 * @module
 */
import { z } from 'zod'
import { SCENE_STR_PATTERN } from '../service/random'
import { confirmationDecisionInput, confirmationOpenInput, consumeInput, createSceneInput } from '../service/validation'
import { phoneOrderOpenInput, phonePayOpenInput, phonePlanChoice } from '../phone/validation'

/** What the document shows of a schema: its component id (a `$ref` target), its description, a JSON Schema format. */
export interface WireMeta {
  /** Its name under `components.schemas`: the document refers to it with a `$ref`. */
  id?: string
  description?: string
  /** A JSON Schema `format` (`date-time`, `uri`). */
  format?: string
  examples?: unknown[]
}

/** The metadata of the wire schemas (component ids, descriptions). The document is generated with it alone, never with zod's global registry. */
export const wireRegistry = z.registry<WireMeta>()

/** `schema` with its metadata in {@link wireRegistry} (the same schema, not a copy). */
function wire<T extends z.ZodType>(schema: T, meta: WireMeta): T {
  wireRegistry.add(schema as z.ZodType, meta)
  return schema
}

/**
 * `schema`, but a field that is absent is refused with `message` (zod would say "must be a string").
 * Shown in the document as `schema` itself, required.
 */
function present<T extends z.ZodType>(schema: T, message: string) {
  return z.preprocess((value, ctx) => {
    if (value !== undefined) return value
    ctx.addIssue({ code: 'custom', message })
    return z.NEVER
  }, schema)
}

/** A string that must be given and not empty; `message` for both. */
const requiredString = (message: string) => z.string({ error: message }).min(1, { error: message })

// ---------------------------------------------------------------------------------------------------
// Requests

/** The longest long poll, in seconds (`wait=1` … `wait=30`). */
export const MAX_WAIT_SECONDS = 30

const WAIT_INVALID = `wait must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS}`

/** The `scene` query parameter of `status` and `events`. */
const sceneParameter = wire(requiredString('scene is required'), { description: 'The `scene_str` that `create_scene` answered.' })

/**
 * `wait`: one or two digits, 1–30 (`05` is 5). Anything else is refused with one message. Shown in
 * the document as the integer it is.
 */
const waitParameter = wire(
  z
    .preprocess(
      (value) => (typeof value === 'string' && /^\d{1,2}$/.test(value) ? Number(value) : value),
      z.int({ error: WAIT_INVALID }).min(1, { error: WAIT_INVALID }).max(MAX_WAIT_SECONDS, { error: WAIT_INVALID }),
    )
    .optional(),
  {
    description: `Makes the poll a long poll (B-wait-2): the answer comes once the scene has left \`pending\` (or \`scanned\`), or after this many whole seconds (1–${MAX_WAIT_SECONDS}) with the status then. Without it, the current status at once.`,
  },
)

/** `GET status`: its query parameters. */
export const statusQuery = z.object({ scene: sceneParameter, wait: waitParameter })

/** `GET events`: its query parameters. */
export const eventsQuery = z.object({ scene: sceneParameter })

/** `GET order`: its query parameter. */
export const orderQuery = z.object({
  id: wire(requiredString('id is required (the order_id of the purchase)'), { description: 'The `order_id` that `purchase` answered.' }),
})

/** The `X-Scanauth-Poll-Secret` header of `status` and `events`. */
export const pollSecretHeader = wire(z.string(), {
  description:
    'The `poll_secret` that `create_scene` answered, when the scene has one (`requirePollSecret`, B-secret-1): an `authorized` answer, the one that carries the session token, is given only with it (B-secret-2). Any other answer goes to anyone.',
})

/** The `X-Scanauth-Poll-Secret` header of `purchase` by scene (B-order-13). */
export const purchasePollSecretHeader = wire(z.string(), {
  description:
    'With `{scene, plan}`: the `poll_secret` that `create_scene` answered for that scene, when it has one (`requirePollSecret`). A purchase through such a scene is made only with it (B-order-13); without it, 403.',
})

/** The `Last-Event-ID` header of `events`: the status a reconnecting client last saw. */
export const lastEventIdHeader = wire(z.string(), {
  description:
    'Sent by a reconnecting `EventSource`: the `id` of the last event it received, which is that event\'s status (B-wait-5). When the scene has ended with that status, the answer is 204 and the client stops.',
})

/** `POST create_scene`: its body. */
export const createSceneRequest = wire(
  z.object({
    device_id: wire(present(createSceneInput.shape.deviceId, 'device_id is required'), {
      description: 'The device\'s label, 1–128 characters without control characters (D-identifiers); scenes are limited per device (B-rate-1).',
    }),
  }),
  { id: 'CreateSceneRequest', description: 'A device asks for a QR code to sign in with.' },
)

/** `POST consume`: its body (an empty body is `{}`: one point). */
export const consumeRequest = wire(
  z.object({
    points: wire(consumeInput.shape.points, { description: 'Points to spend from a points authorization (default 1); a time authorization ignores it.' }),
  }),
  { id: 'ConsumeRequest', description: 'Uses the current authorization of the session\'s user. The body may be empty.' },
)

const PLAN_REQUIRED = 'plan is required (a plan id from GET plans)'

/** `POST purchase`: its body, both forms (by scene, or by session with the Bearer token). */
export const purchaseRequest = wire(
  z.object({
    plan: wire(requiredString(PLAN_REQUIRED), { description: 'The `id` of a plan from `GET plans`.' }),
    scene: wire(requiredString('scene must be a scene_str').optional(), {
      description:
        'The `scene_str` of a scene a scan bound to a user (its poll answered `need_purchase`): that user buys, and the device learns of the payment on the same poll or stream. Only while the scene answers `need_purchase` or within 10 minutes of its scan (B-order-12). Without it, the request must carry the Bearer token of a live session, whose user buys.',
    }),
  }),
  {
    id: 'PurchaseRequest',
    description:
      'Two forms: `{scene, plan}` for the device whose poll answered `need_purchase` (it holds no usable session), or `{plan}` with `Authorization: Bearer <session_token>`.',
  },
)

/** `GET confirm`: its query parameters, the service's own schema (B-confirm-6). */
export const confirmQuery = confirmationOpenInput
wire(confirmQuery.shape.ticket, { description: 'The ticket of the confirm link sent to the scanner.' })
wire(confirmQuery.shape.code, { description: 'Added by WeChat web OAuth when it sends the browser back.' })
wire(confirmQuery.shape.state, { description: 'Added by WeChat web OAuth when it sends the browser back: must be the state scanauth sent.' })

/** `POST confirm`: the form of the confirm page, the service's own schema (B-confirm-7). */
export const confirmForm = wire(confirmationDecisionInput, {
  id: 'ConfirmForm',
  description: 'One of the two forms of the confirm page (`application/x-www-form-urlencoded`), sent by the scanner\'s browser.',
})

/** `GET m/pay`'s query (B-phone-4): the service's own schema, without the user agent it reads from the header. */
export const phonePayQuery = phonePayOpenInput.pick({ ticket: true, code: true, state: true })
wire(phonePayQuery.shape.ticket, { description: 'The one-time ticket of a `need_purchase` scan\'s link: the purchase is for that scene\'s device. Absent: a page for the person\'s own account.' })
wire(phonePayQuery.shape.code, { description: 'Added by WeChat web OAuth when it sends the browser back.' })
wire(phonePayQuery.shape.state, { description: 'Added by WeChat web OAuth when it sends the browser back: must be the state scanauth sent.' })

/** `POST m/pay`: a plans page's form (B-phone-5). */
export const phonePlanForm = wire(phonePlanChoice.pick({ csrf: true, plan: true }), {
  id: 'PhonePlanForm',
  description: 'A plans page\'s form (`application/x-www-form-urlencoded`): the page\'s CSRF token, and the plan of the button pressed (`name="plan"`); without a plan, the plans again.',
})

/** `GET m/order`'s query (B-phone-7). */
export const phoneOrderQuery = z.object({
  id: wire(phoneOrderOpenInput.shape.orderId, { description: 'The order\'s id (`out_trade_no`).' }),
  code: wire(z.string().optional(), { description: 'Added by WeChat web OAuth when it sends the browser back.' }),
  state: wire(z.string().optional(), { description: 'Added by WeChat web OAuth when it sends the browser back: must be the state scanauth sent.' }),
})

/** `GET m/subscribed`'s query, as WeChat's subscription redirect sends it (B-remind-7). */
export const subscribedQuery = z.object({
  openid: wire(z.string().optional(), { description: 'The person who confirmed (only on `action=confirm`).' }),
  template_id: wire(z.string().optional(), { description: 'The one-time subscription template confirmed.' }),
  action: wire(z.enum(['confirm', 'cancel']).optional(), { description: '`confirm` or `cancel`.' }),
  scene: wire(z.string().optional(), { description: 'The subscription scene confirmed.' }),
  reserved: wire(z.string().optional(), { description: 'The state of the link scanauth issued to that person.' }),
})

// ---------------------------------------------------------------------------------------------------
// Answers

const timestamp = (description: string) => wire(z.string(), { description, format: 'date-time' })

/** The authorization summary (B-wire-1). */
export const authorizationSummary = wire(
  z.strictObject({
    type: z.enum(['time', 'points']),
    end_at: wire(z.string().nullable(), { description: 'ISO 8601 end of a time authorization; null for points.', format: 'date-time' }),
    remaining_points: wire(z.int().min(0), { description: 'Points left; 0 for a time authorization.' }),
  }),
  { id: 'AuthorizationSummary', description: 'The user\'s current authorization (B-wire-1).' },
)

/** `POST create_scene`, 200. */
export const createSceneAnswer = wire(
  z.strictObject({
    scene_str: wire(z.string().regex(SCENE_STR_PATTERN), { description: 'The scene: poll `status` or open `events` with it.' }),
    qr_url: wire(z.string(), { description: 'Address of the scannable code, as the messaging platform returned it.' }),
    expires_in: wire(z.int().positive(), { description: 'Lifetime of the scene, in seconds.' }),
    qr_content: wire(z.string().optional(), { description: 'The text the code encodes, when the QR provider gave it: draw the code from it (B-create-5).' }),
    poll_secret: wire(z.string().optional(), {
      description: 'With `requirePollSecret` only: present it as `X-Scanauth-Poll-Secret` to read the `authorized` answer (B-secret-1). Shown once.',
    }),
  }),
  { id: 'CreateSceneAnswer' },
)

/** A status that carries nothing else. */
export const statusWaiting = wire(
  z.strictObject({ status: z.enum(['pending', 'scanned', 'expired', 'denied']) }),
  {
    id: 'StatusPlain',
    description:
      '`pending`: waiting for a scan. `expired`: the scene (or its session) has expired. With confirm on the phone (`confirm: \'link\'`) also `scanned` (waiting for the scanner\'s decision, not final) and `denied` (the scanner refused, final).',
  },
)

/** `need_purchase`, of a poll or of `consume`. */
export const needPurchase = wire(
  z.strictObject({
    status: z.literal('need_purchase'),
    purchase_url: wire(z.string().optional(), { description: 'Where to buy, with the handler\'s `purchaseUrl` option only.' }),
  }),
  { id: 'NeedPurchase', description: 'The user has no current authorization (or it ran out): buy a plan (`POST purchase`).' },
)

/** `authorized`: the session token and the summary. */
export const statusAuthorized = wire(
  z.strictObject({
    status: z.literal('authorized'),
    session_token: wire(z.string(), { description: 'Present it as `Authorization: Bearer <session_token>`.' }),
    authorization: authorizationSummary,
  }),
  { id: 'StatusAuthorized', description: 'Scanned, and the user has a current authorization: the device is signed in.' },
)

/** `GET status`, 200, and the data of each `status` event. */
export const statusAnswer = wire(z.discriminatedUnion('status', [statusWaiting, needPurchase, statusAuthorized]), {
  id: 'Status',
  description: 'Where the scene stands (B-poll-1…5).',
})

/** `GET session`, 200. */
export const sessionAnswer = wire(
  z.strictObject({
    user_id: z.int().positive(),
    device_id: z.string(),
    expires_at: timestamp('When the session ends, ISO 8601.'),
    authorization: wire(authorizationSummary.nullable(), { description: 'The user\'s current authorization, or null.' }),
  }),
  { id: 'Session' },
)

/** `POST consume`, 200: the authorization was used. */
export const consumeOk = wire(
  z.strictObject({ status: z.literal('ok'), authorization: authorizationSummary }),
  { id: 'ConsumeOk', description: 'Used: the authorization after the use (points already taken).' },
)

/** `POST consume`, 200: fewer points left than asked. */
export const consumeInsufficient = wire(
  z.strictObject({ status: z.literal('insufficient_points') }),
  { id: 'ConsumeInsufficientPoints', description: 'Fewer points left than asked; nothing was spent.' },
)

/** `POST consume`, 200. */
export const consumeAnswer = wire(z.discriminatedUnion('status', [consumeOk, needPurchase, consumeInsufficient]), { id: 'Consume' })

/** What a plan grants. */
export const planGrant = wire(
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('time'), days: wire(z.number().positive(), { description: 'Length in days (fractions allowed).' }) }),
    z.strictObject({ type: z.literal('points'), points: z.int().positive() }),
  ]),
  { id: 'PlanGrant' },
)

/** One plan of the catalog. */
export const planAnswer = wire(
  z.strictObject({
    id: wire(z.string(), { description: 'The id a purchase names.' }),
    description: z.string(),
    amount_fen: wire(z.int().positive(), { description: 'The price in fen.' }),
    grant: planGrant,
  }),
  { id: 'Plan' },
)

/** `GET plans`, 200. */
export const plansAnswer = wire(z.array(planAnswer), { id: 'Plans', description: 'The catalog in its order (B-order-1); empty without payments.' })

/** `POST purchase`, 200. */
export const purchaseAnswer = wire(
  z.strictObject({
    order_id: z.string(),
    code_url: wire(z.string(), { description: 'What the pay code encodes (WeChat Pay: `weixin://wxpay/bizpayurl?pr=…`): show it as a QR code.' }),
    amount_fen: z.int().positive(),
    expires_at: timestamp('The payment deadline, ISO 8601.'),
    phone_link: wire(z.literal(true).optional(), {
      description: 'Present (true) when the person who scanned got a link to buy on their phone (`payments.phone`, B-phone-2): the device may say so beside the code.',
    }),
  }),
  { id: 'Purchase', description: 'The order and the code to pay with (B-order-2).' },
)

/** `GET order`, 200. */
export const orderAnswer = wire(
  z.strictObject({
    order_id: z.string(),
    status: z.enum(['open', 'paid', 'closed', 'refunded']),
    plan: wire(z.string(), { description: 'The id of the plan bought.' }),
    amount_fen: z.int().positive(),
    expires_at: timestamp('The payment deadline, ISO 8601.'),
    paid_at: wire(z.string().nullable(), { description: 'ISO 8601, once paid; else null.', format: 'date-time' }),
  }),
  { id: 'Order', description: 'Where the buyer\'s order stands (B-order-11).' },
)

/** The errors of the specification's own routes: `{detail}`. */
export const errorAnswer = wire(z.strictObject({ detail: z.string() }), {
  id: 'Error',
  description: 'An error of `create_scene` and `status`, as the specification writes it (B-wire-2). The status tells the kind; `detail` is for people and may change.',
})

/** The errors of every other route: `{error, detail}`. */
export const codedErrorAnswer = wire(
  z.strictObject({
    error: wire(z.string(), { description: 'A stable code for programs (docs/errors.md), e.g. `scene_not_scanned`.' }),
    detail: z.string(),
  }),
  {
    id: 'CodedError',
    description: 'An error of the routes the specification does not define (B-wire-7): the code to branch on, and `detail` for people (it may change).',
  },
)

/** The answer types, for wire.ts. */
export type CreateSceneAnswer = z.output<typeof createSceneAnswer>
export type StatusAnswer = z.output<typeof statusAnswer>
export type SessionAnswer = z.output<typeof sessionAnswer>
export type ConsumeAnswer = z.output<typeof consumeAnswer>
export type NeedPurchaseAnswer = z.output<typeof needPurchase>
export type AuthorizationSummaryAnswer = z.output<typeof authorizationSummary>
export type PlanAnswer = z.output<typeof planAnswer>
export type PurchaseAnswer = z.output<typeof purchaseAnswer>
export type OrderAnswer = z.output<typeof orderAnswer>
export type ErrorAnswer = z.output<typeof errorAnswer>
export type CodedErrorAnswer = z.output<typeof codedErrorAnswer>
