/**
 * The reminders half of the configuration (`SCANAUTH_REMINDERS` and the variables beside it), read
 * by `configFromEnv` (config.ts, whose header table lists every variable). Reminders before access
 * ends are core's `reminders` option (docs/reminders.md); the example sends them through
 * `createWechatReminderNotifier` of `@scanauth/wechat` (reminder-wiring.ts) on a timer, and
 * `scanauth reminders` of `@scanauth/cli` runs one pass with the same variables, for cron.
 *
 * | variable | meaning |
 * |---|---|
 * | `SCANAUTH_REMINDERS` | the lead days, e.g. `3,1`: one message 3 days and one 1 day before access ends; fractions work (`0.0005` ≈ 43 s). Unset: no reminders |
 * | `SCANAUTH_REMINDERS_POINTS_BELOW` | also one message when a points authorization falls below this many points |
 * | `SCANAUTH_REMINDERS_INTERVAL_SECONDS` | seconds between passes (default 60); `0`: no timer (a cron job runs `scanauth reminders`) |
 * | `WECHAT_SUBSCRIBE_TEMPLATE_ID` | the one-time subscription template (一次性订阅消息) id: the "remind me before it ends" link |
 * | `WECHAT_TEMPLATE_ID_RENEWAL` | a template message (模板消息) id, for followers |
 * | `WECHAT_TEMPLATE_FIELDS_RENEWAL` | its fields: a JSON object from field name to fact, e.g. `{"thing1":"headline","time2":"ends"}` |
 *
 * @module
 */
import { ConfigError } from './config-error'
import type { EnvReader } from './pay-config'

/** The facts a template field may carry (`ReminderFacts` of `@scanauth/wechat`). */
export const REMINDER_FACTS = ['headline', 'subject', 'ends', 'remaining', 'status', 'action'] as const

/** One of {@link REMINDER_FACTS}. */
export type ReminderFact = (typeof REMINDER_FACTS)[number]

/** Reminders before access ends, as the environment configures them. */
export interface RemindersConfig {
  /** `SCANAUTH_REMINDERS`: the lead days, each above 0 and at most 60, each once. */
  leadDays: number[]
  /** `SCANAUTH_REMINDERS_POINTS_BELOW`. */
  pointsBelow?: number
  /** Milliseconds between passes (`SCANAUTH_REMINDERS_INTERVAL_SECONDS`, default a minute), or false: no timer. */
  everyMs: number | false
  /** `WECHAT_SUBSCRIBE_TEMPLATE_ID`: the one-time subscription; default, when emulated, the emulator's demo template. */
  subscribeTemplateId?: string
  /** `WECHAT_TEMPLATE_ID_RENEWAL`: the template message; default, when emulated, the emulator's demo template. */
  templateId?: string
  /** `WECHAT_TEMPLATE_FIELDS_RENEWAL`: the template's fields, by name; default `@scanauth/wechat`'s `first`, `keyword1`, `keyword2`, `remark`. */
  templateFields?: Record<string, ReminderFact>
}

/** The variables that mean something only with `SCANAUTH_REMINDERS`. */
const REMINDER_ONLY = [
  'SCANAUTH_REMINDERS_POINTS_BELOW',
  'SCANAUTH_REMINDERS_INTERVAL_SECONDS',
  'WECHAT_SUBSCRIBE_TEMPLATE_ID',
  'WECHAT_TEMPLATE_ID_RENEWAL',
  'WECHAT_TEMPLATE_FIELDS_RENEWAL',
] as const

/** Core's longest lead (`MAX_LEAD_DAYS` of its reminder rules). */
export const MAX_LEAD_DAYS = 60

/** The longest interval between passes: a day. */
const MAX_INTERVAL_SECONDS = 86_400

/** A template id as the Official Account platform shows it (43 characters of base64url); any id of that alphabet passes. */
const TEMPLATE_ID = /^[A-Za-z0-9_-]{1,64}$/

/** A template field's name (`first`, `keyword1`, `thing1`, `time2` …). */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,31}$/

/** Reads the reminders' variables: undefined when `SCANAUTH_REMINDERS` is unset (and none of the others is set). */
export function remindersFromEnv(value: EnvReader): RemindersConfig | undefined {
  const raw = value('SCANAUTH_REMINDERS')
  if (raw === undefined) {
    const stray = REMINDER_ONLY.filter((name) => value(name) !== undefined)
    if (stray.length > 0) {
      throw new ConfigError(`${stray.join(', ')} ${stray.length === 1 ? 'is a reminder setting' : 'are reminder settings'}: set SCANAUTH_REMINDERS too (the lead days, e.g. 3,1), or unset ${stray.length === 1 ? 'it' : 'them'}`)
    }
    return undefined
  }
  const config: RemindersConfig = { leadDays: leadDaysOf(raw), everyMs: intervalOf(value('SCANAUTH_REMINDERS_INTERVAL_SECONDS')) }
  const pointsBelow = value('SCANAUTH_REMINDERS_POINTS_BELOW')
  if (pointsBelow !== undefined) config.pointsBelow = pointsBelowOf(pointsBelow)
  const subscribe = value('WECHAT_SUBSCRIBE_TEMPLATE_ID')
  if (subscribe !== undefined) config.subscribeTemplateId = templateIdOf('WECHAT_SUBSCRIBE_TEMPLATE_ID', subscribe)
  const template = value('WECHAT_TEMPLATE_ID_RENEWAL')
  if (template !== undefined) config.templateId = templateIdOf('WECHAT_TEMPLATE_ID_RENEWAL', template)
  const fields = value('WECHAT_TEMPLATE_FIELDS_RENEWAL')
  if (fields !== undefined) {
    if (template === undefined) throw new ConfigError('WECHAT_TEMPLATE_FIELDS_RENEWAL maps the fields of WECHAT_TEMPLATE_ID_RENEWAL: set that too, or unset it')
    config.templateFields = templateFieldsOf(fields)
  }
  return config
}

/** `SCANAUTH_REMINDERS`: lead days separated by commas, plain decimals above 0 and at most 60, each once. */
export function leadDaysOf(raw: string): number[] {
  const rule = `SCANAUTH_REMINDERS must be the days before access ends to remind at, separated by commas (e.g. 3,1, or 0.0005 for about 43 s), each above 0 and at most ${MAX_LEAD_DAYS}, each once, not "${raw}"`
  const parts = raw.split(',').map((part) => part.trim())
  const leads = parts.map((part) => {
    const n = Number(part)
    // Plain decimals only ("3", "0.5", ".0005"): no exponents, hex or "Infinity".
    if (!/^(\d+\.?\d*|\.\d+)$/.test(part) || !(n > 0) || n > MAX_LEAD_DAYS) throw new ConfigError(rule)
    return n
  })
  if (new Set(leads).size !== leads.length) throw new ConfigError(rule)
  return leads
}

/** `SCANAUTH_REMINDERS_INTERVAL_SECONDS`: whole seconds from 0 (no timer) to a day; default 60. */
function intervalOf(raw: string | undefined): number | false {
  if (raw === undefined) return 60_000
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n > MAX_INTERVAL_SECONDS) {
    throw new ConfigError(`SCANAUTH_REMINDERS_INTERVAL_SECONDS must be a whole number of seconds from 0 (no timer: run scanauth reminders from cron) to ${MAX_INTERVAL_SECONDS}, not "${raw}"`)
  }
  return n === 0 ? false : n * 1000
}

/** `SCANAUTH_REMINDERS_POINTS_BELOW`: a positive whole number of points. */
export function pointsBelowOf(raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n < 1 || n > 1_000_000_000) {
    throw new ConfigError(`SCANAUTH_REMINDERS_POINTS_BELOW must be a whole number of points from 1 to 1000000000 (remind when fewer are left), not "${raw}"`)
  }
  return n
}

/** A template id (`WECHAT_SUBSCRIBE_TEMPLATE_ID`, `WECHAT_TEMPLATE_ID_RENEWAL`). */
export function templateIdOf(name: string, raw: string): string {
  if (!TEMPLATE_ID.test(raw)) throw new ConfigError(`${name} must be a template id from the Official Account platform (1 to 64 letters, digits, _ or -), not "${raw}"`)
  return raw
}

/** `WECHAT_TEMPLATE_FIELDS_RENEWAL`: `{"field": "fact", …}`, each fact one of {@link REMINDER_FACTS}. */
export function templateFieldsOf(raw: string): Record<string, ReminderFact> {
  const rule = `WECHAT_TEMPLATE_FIELDS_RENEWAL must be a JSON object from template field to fact (${REMINDER_FACTS.join(', ')}), e.g. {"thing1":"headline","time2":"ends"}`
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new ConfigError(`${rule}; it is not JSON`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0 || Object.keys(parsed).length > 20) {
    throw new ConfigError(`${rule}, with 1 to 20 fields`)
  }
  const fields: Record<string, ReminderFact> = {}
  for (const [field, fact] of Object.entries(parsed)) {
    if (!FIELD_NAME.test(field)) throw new ConfigError(`${rule}; "${field}" is not a field name (a letter, then letters, digits or _)`)
    if (!REMINDER_FACTS.includes(fact as ReminderFact)) throw new ConfigError(`${rule}; the fact of "${field}" is ${JSON.stringify(fact)}`)
    fields[field] = fact as ReminderFact
  }
  return fields
}
