/**
 * Input validation at the boundary (zod). Every public operation parses its input here first; a
 * failure becomes `ScanAuthError` `invalid_request` (400) naming the field, and nothing is touched.
 *
 * @module
 */
import { z } from 'zod'
import { ScanAuthError } from '../errors'

/** No C0/C1 control characters (docs/behaviour.md, D-identifiers: 1–128 characters, no control characters). */
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/

/**
 * `String.prototype.isWellFormed` (Node 20+). Our `lib` is ES2023, which does not declare it yet.
 */
const isWellFormed = (value: string): boolean => (value as string & { isWellFormed(): boolean }).isWellFormed()

/**
 * A string of well-formed Unicode: no lone UTF-16 surrogate (docs/behaviour.md, D-well-formed). A
 * lone surrogate cannot be encoded as UTF-8, so each backend would store something else (Redis
 * writes U+FFFD): two different inputs would become one record, and what is read back would differ
 * from what was sent. Refused up front, it never reaches a store.
 */
export function wellFormedString(field: string) {
  return z
    .string({ error: `${field} must be a string` })
    .refine(isWellFormed, { error: `${field} must be well-formed Unicode (no lone surrogates)` })
}

/**
 * A device or platform identifier (docs/behaviour.md, D-identifiers): 1–128 characters (code points,
 * as zod counts them: 128 emoji pass, at 256 UTF-16 units), no control characters, well-formed
 * (D-well-formed).
 */
export function identifier(field: string) {
  return z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} must not be empty` })
    .max(128, { error: `${field} must be at most 128 characters` })
    .regex(NO_CONTROL, { error: `${field} must not contain control characters` })
    .refine(isWellFormed, { error: `${field} must be well-formed Unicode (no lone surrogates)` })
}

const positiveInt = (field: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number({ error: `${field} must be a number` })
    .int({ error: `${field} must be an integer` })
    .positive({ error: `${field} must be positive` })
    .max(max, { error: `${field} must be at most ${max}` })

/** The longest time authorization: 100 years, so every end time stays a valid date. */
export const MAX_DURATION_SECONDS = 100 * 365.25 * 24 * 3600

// The client address is supplied by the framework (Express `req.ip`, Koa `ctx.ip`), not by the client,
// but behind a trusted proxy it comes from a header: the same limits as an identifier (B-rate-5).
export const createSceneInput = z.object({ deviceId: identifier('device_id'), clientAddress: identifier('clientAddress').optional() })

export const scanInput = z.object({
  // Any string: one that cannot be a scene_str (over-long or ill-formed ones too) is an `invalid`
  // scan, not an error (docs/behaviour.md, D-scan-string); it never reaches a store.
  sceneStr: z.string({ error: 'scene_str must be a string' }),
  openid: identifier('openid'),
})

// The free trial comes only from a first scan (docs/behaviour.md, B-free-4, D-grant-free).
const source = identifier('source')
  .refine((value) => value !== 'free', { error: "source 'free' is reserved for the free trial of a first scan" })
  .optional()
const idempotencyKey = identifier('idempotencyKey').optional()
const timeGrant = z.object({ type: z.literal('time'), durationSeconds: positiveInt('durationSeconds', MAX_DURATION_SECONDS), source })
const pointsGrant = z.object({ type: z.literal('points'), points: positiveInt('points'), source })
const target = z.union([
  z.object({ userId: positiveInt('userId'), openid: z.undefined().optional() }),
  z.object({ openid: identifier('openid'), userId: z.undefined().optional() }),
], { error: 'grant needs exactly one of userId or openid' })
export const grantInput = z.intersection(
  z.intersection(target, z.object({ idempotencyKey })),
  z.discriminatedUnion('type', [timeGrant, pointsGrant], { error: "type must be 'time' or 'points'" }),
)

export const consumeInput = z.object({
  // No token we issue is ill-formed; refused like every other input (D-well-formed) rather than looked up.
  sessionToken: wellFormedString('sessionToken'),
  points: positiveInt('points').default(1),
  idempotencyKey,
})

/** A route guard's consumption: always keyed, and bound to the route it guards (B-guard-5). */
export const requestConsumeInput = z.object({
  sessionToken: wellFormedString('sessionToken'),
  points: positiveInt('points').default(1),
  idempotencyKey: idempotencyKey.unwrap(),
  scope: z.string({ error: 'scope must be a string' }).max(1024, { error: 'scope must be at most 1024 characters' }),
})

/** A user by id or by openid, for the read and sign-out operations. */
export const userSelector = z.union([
  z.object({ userId: positiveInt('userId'), openid: z.undefined().optional() }),
  z.object({ openid: identifier('openid'), userId: z.undefined().optional() }),
], { error: 'give exactly one of userId or openid' })

/** The largest page `listLedger` returns. */
export const MAX_LEDGER_PAGE = 1000

export const ledgerPage = z.object({
  afterId: z.number({ error: 'afterId must be a number' }).int({ error: 'afterId must be an integer' }).min(0, { error: 'afterId must not be negative' }).default(0),
  limit: positiveInt('limit', MAX_LEDGER_PAGE).default(100),
})

export const revokeInput = z.object({
  authorizationId: positiveInt('authorizationId'),
  reason: wellFormedString('reason').min(1, { error: 'reason must not be empty' }).max(500, { error: 'reason must be at most 500 characters' }).optional(),
})

/** Parses `value` with `schema`, or throws `invalid_request` with the first problem as its message. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  throw new ScanAuthError('invalid_request', issue ? issue.message : 'Invalid request')
}

/** A query or form value of the confirm page: a string of at most 512 characters (tickets and tokens are 43). */
const confirmField = (field: string) =>
  wellFormedString(field).min(1, { error: `${field} is required` }).max(512, { error: `${field} is too long` })

/** The confirm page's query (B-confirm-6). */
export const confirmationOpenInput = z.object({
  ticket: confirmField('ticket'),
  code: confirmField('code').optional(),
  state: confirmField('state').optional(),
})

/** The confirm page's form (B-confirm-7). */
export const confirmationDecisionInput = z.object({
  ticket: confirmField('ticket'),
  csrf: z.string({ error: 'the form has no CSRF token: open the link again' }).max(512, { error: 'csrf is too long' }),
  decision: z.enum(['confirm', 'deny'], { error: "decision must be 'confirm' or 'deny'" }),
})
