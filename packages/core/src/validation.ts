/**
 * Input validation at the boundary (zod). Every public operation parses its input here first; a
 * failure becomes `ScanAuthError` `invalid_request` (400) naming the field, and nothing is touched.
 *
 * @module
 */
import { z } from 'zod'
import { ScanAuthError } from './errors'

/** No C0/C1 control characters (docs/behaviour.md, D-identifiers: 1–128 characters, no control characters). */
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/

/** A device or platform identifier: 1–128 characters, no control characters. */
export function identifier(field: string) {
  return z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} must not be empty` })
    .max(128, { error: `${field} must be at most 128 characters` })
    .regex(NO_CONTROL, { error: `${field} must not contain control characters` })
}

const positiveInt = (field: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number({ error: `${field} must be a number` })
    .int({ error: `${field} must be an integer` })
    .positive({ error: `${field} must be positive` })
    .max(max, { error: `${field} must be at most ${max}` })

/** The longest time authorization: 100 years, so every end time stays a valid date. */
export const MAX_DURATION_SECONDS = 100 * 365.25 * 24 * 3600

export const createSceneInput = z.object({ deviceId: identifier('device_id') })

export const scanInput = z.object({
  sceneStr: z.string({ error: 'scene_str must be a string' }).max(1024, { error: 'scene_str is too long' }),
  openid: identifier('openid'),
})

const source = identifier('source').optional()
const timeGrant = z.object({ type: z.literal('time'), durationSeconds: positiveInt('durationSeconds', MAX_DURATION_SECONDS), source })
const pointsGrant = z.object({ type: z.literal('points'), points: positiveInt('points'), source })
const target = z.union([
  z.object({ userId: positiveInt('userId'), openid: z.undefined().optional() }),
  z.object({ openid: identifier('openid'), userId: z.undefined().optional() }),
], { error: 'grant needs exactly one of userId or openid' })
export const grantInput = z.intersection(target, z.discriminatedUnion('type', [timeGrant, pointsGrant], { error: "type must be 'time' or 'points'" }))

export const consumeInput = z.object({
  sessionToken: z.string({ error: 'sessionToken must be a string' }),
  points: positiveInt('points').default(1),
})

/** Parses `value` with `schema`, or throws `invalid_request` with the first problem as its message. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  throw new ScanAuthError('invalid_request', issue ? issue.message : 'Invalid request')
}
