/**
 * Input validation of the phone pages (zod): a failure is `invalid_request` (400) naming the field,
 * before any read and before WeChat or WeChat Pay is asked anything (B-phone-10).
 *
 * @module
 */
import { z } from 'zod'
import { identifier, wellFormedString } from '../service/validation'

/** A query or form value of a phone page: at most 512 characters (tickets are 43, page tokens about 150). */
const field = (name: string) => wellFormedString(name).min(1, { error: `${name} is required` }).max(512, { error: `${name} is too long` })

/** A `User-Agent` as the page read it: only searched, so any string (cut to a length worth searching). */
const userAgent = z.string().optional().transform((value) => value?.slice(0, 1024))

/** `GET {base}/m/pay`'s query (B-phone-4). */
export const phonePayOpenInput = z.object({
  ticket: field('ticket').optional(),
  code: field('code').optional(),
  state: field('state').optional(),
  userAgent,
})

/** A plans page's form (B-phone-5): its token, and the plan of the button pressed (none: the plans again). */
export const phonePlanChoice = z.object({
  csrf: z.string({ error: 'the form has no CSRF token: open the link again' }).max(512, { error: 'csrf is too long' }),
  plan: z.string({ error: 'plan must be a string' }).max(64, { error: 'plan must be at most 64 characters' }).optional(),
  clientAddress: identifier('clientAddress').optional(),
})

/** `GET {base}/m/order`'s query (B-phone-7). */
export const phoneOrderOpenInput = z.object({
  orderId: field('id'),
  code: field('code').optional(),
  state: field('state').optional(),
  userAgent,
})
