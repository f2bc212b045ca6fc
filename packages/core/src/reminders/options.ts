/**
 * The `reminders` option of `createScanAuth`, parsed once with zod (B-remind-1): a lead list or a
 * notifier that cannot work fails at start-up with a message naming it, never at the first pass.
 *
 * @module
 */
import { z } from 'zod'
import type { ReminderNotifier } from './api'
import { MAX_LEAD_DAYS } from '../rules/reminders'

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

const hasSend = (value: unknown) => typeof value === 'object' && value !== null && typeof (value as ReminderNotifier).send === 'function'

/** The `reminders` option. */
export const remindersSchema = z.strictObject({
  leadDays: z
    .array(z.number().positive({ error: 'leadDays must be above 0' }).max(MAX_LEAD_DAYS, { error: `leadDays must be at most ${MAX_LEAD_DAYS}` }))
    .min(1, { error: 'leadDays must list at least one lead' })
    .refine((leads) => new Set(leads).size === leads.length, { error: 'leadDays must not repeat a lead' }),
  pointsBelow: z.number().int().positive().optional(),
  notifier: z.custom<ReminderNotifier>(hasSend, { error: 'reminders.notifier must have send(), e.g. createWechatReminderNotifier() of @scanauth/wechat' }),
  renewal: z.boolean().optional(),
  url: z
    .union([z.string().refine(isHttpUrl, { error: 'reminders.url must be the absolute http(s) address of the phone pages ({base}/m/)' }), z.custom<() => string>((value) => typeof value === 'function')])
    .optional(),
})

/** The `reminders` option after parsing. */
export type ResolvedReminders = z.infer<typeof remindersSchema>
