/**
 * What `scanauth reminders` sends with: the variables the example servers read for their reminders
 * (`examples/shared/src/reminder-config.ts`), read the same way, so that a cron job beside a server
 * runs the server's pass with the server's settings: the lead days (`SCANAUTH_REMINDERS`), the
 * Official Account (`WECHAT_APP_ID`, `WECHAT_APP_SECRET`, `WECHAT_API_BASE`), its templates
 * (`WECHAT_SUBSCRIBE_TEMPLATE_ID`, `WECHAT_TEMPLATE_ID_RENEWAL`, `WECHAT_TEMPLATE_FIELDS_RENEWAL`) and
 * the public address of the phone pages (`SCANAUTH_PUBLIC_URL` + `/auth/m/`). Every mistake is an
 * `invalid_config` error (exit status 2), found before the store is opened.
 *
 * @module
 */
import { ScanAuthCliError } from './errors'

/** The facts a template field may carry (`ReminderFacts` of `@scanauth/wechat`). */
export const REMINDER_FACTS = ['headline', 'subject', 'ends', 'remaining', 'status', 'action'] as const

/** One of {@link REMINDER_FACTS}. */
export type ReminderFact = (typeof REMINDER_FACTS)[number]

/** Where the example servers mount scanauth's phone pages under their public address. */
export const PHONE_PAGES_PATH = '/auth/m/'

/** Core's longest lead (`MAX_LEAD_DAYS` of its reminder rules). */
const MAX_LEAD_DAYS = 60

/** A template id as the Official Account platform shows it; any id of that alphabet passes. */
const TEMPLATE_ID = /^[A-Za-z0-9_-]{1,64}$/

/** A template field's name (`first`, `keyword1`, `thing1`, `time2` …). */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,31}$/

/** The Official Account the reminders go out from. */
export interface ReminderAccount {
  /** `WECHAT_APP_ID`. */
  appId: string
  /** `WECHAT_APP_SECRET`. */
  appSecret: string
  /** `WECHAT_API_BASE`, when set (an emulator or a proxy). */
  apiBase?: string
}

/** The reminders' settings, from the environment. */
export interface ReminderSettings {
  /** `SCANAUTH_REMINDERS`. */
  leadDays: number[]
  /** `SCANAUTH_REMINDERS_POINTS_BELOW`. */
  pointsBelow?: number
  /** The account; null only for a dry run without `WECHAT_APP_ID` (nothing is sent then). */
  account: ReminderAccount | null
  /** `WECHAT_SUBSCRIBE_TEMPLATE_ID`. */
  subscribeTemplateId?: string
  /** `WECHAT_TEMPLATE_ID_RENEWAL`. */
  templateId?: string
  /** `WECHAT_TEMPLATE_FIELDS_RENEWAL`. */
  templateFields?: Record<string, ReminderFact>
  /** The phone pages, `SCANAUTH_PUBLIC_URL` + `/auth/m/`; undefined without it (messages then carry no link). */
  pagesUrl?: string
}

/**
 * Reads the settings from `env` (a variable set to white space counts as unset, as in the examples).
 * Without `dryRun` the account is required: a pass sends.
 */
export function reminderSettings(env: Record<string, string | undefined>, dryRun: boolean): ReminderSettings {
  const value = (name: string) => {
    const raw = env[name]?.trim()
    return raw ? raw : undefined
  }
  const fail = (message: string): never => {
    throw new ScanAuthCliError('invalid_config', message)
  }
  const raw = value('SCANAUTH_REMINDERS')
  if (raw === undefined) {
    fail('SCANAUTH_REMINDERS is not set: give the lead days the servers remind at (e.g. SCANAUTH_REMINDERS=3,1), with the store and WeChat variables of the servers')
  }
  const settings: ReminderSettings = { leadDays: leadDaysOf(raw as string, fail), account: accountOf(value, dryRun, fail) }
  const pointsBelow = value('SCANAUTH_REMINDERS_POINTS_BELOW')
  if (pointsBelow !== undefined) {
    const n = Number(pointsBelow)
    if (!/^\d+$/.test(pointsBelow) || n < 1 || n > 1_000_000_000) {
      fail(`SCANAUTH_REMINDERS_POINTS_BELOW must be a whole number of points from 1 to 1000000000 (remind when fewer are left), not "${pointsBelow}"`)
    }
    settings.pointsBelow = n
  }
  const subscribe = value('WECHAT_SUBSCRIBE_TEMPLATE_ID')
  if (subscribe !== undefined) settings.subscribeTemplateId = templateIdOf('WECHAT_SUBSCRIBE_TEMPLATE_ID', subscribe, fail)
  const template = value('WECHAT_TEMPLATE_ID_RENEWAL')
  if (template !== undefined) settings.templateId = templateIdOf('WECHAT_TEMPLATE_ID_RENEWAL', template, fail)
  const fields = value('WECHAT_TEMPLATE_FIELDS_RENEWAL')
  if (fields !== undefined) {
    if (template === undefined) fail('WECHAT_TEMPLATE_FIELDS_RENEWAL maps the fields of WECHAT_TEMPLATE_ID_RENEWAL: set that too, or unset it')
    settings.templateFields = templateFieldsOf(fields as string, fail)
  }
  const publicUrl = value('SCANAUTH_PUBLIC_URL')
  if (publicUrl !== undefined) settings.pagesUrl = `${publicBase(publicUrl, fail)}${PHONE_PAGES_PATH}`
  return settings
}

/** `SCANAUTH_REMINDERS`: lead days separated by commas, plain decimals above 0 and at most 60, each once. */
function leadDaysOf(raw: string, fail: (message: string) => never): number[] {
  const rule = `SCANAUTH_REMINDERS must be the days before access ends to remind at, separated by commas (e.g. 3,1, or 0.0005 for about 43 s), each above 0 and at most ${MAX_LEAD_DAYS}, each once, not "${raw}"`
  const leads = raw.split(',').map((part) => {
    const trimmed = part.trim()
    const n = Number(trimmed)
    // Plain decimals only ("3", "0.5", ".0005"): no exponents, hex or "Infinity".
    if (!/^(\d+\.?\d*|\.\d+)$/.test(trimmed) || !(n > 0) || n > MAX_LEAD_DAYS) fail(rule)
    return n
  })
  if (new Set(leads).size !== leads.length) fail(rule)
  return leads
}

/** The Official Account: `WECHAT_APP_ID` and `WECHAT_APP_SECRET` (both, or neither for a dry run), `WECHAT_API_BASE`. */
function accountOf(value: (name: string) => string | undefined, dryRun: boolean, fail: (message: string) => never): ReminderAccount | null {
  const appId = value('WECHAT_APP_ID')
  const appSecret = value('WECHAT_APP_SECRET')
  const apiBase = value('WECHAT_API_BASE')
  if (appId === undefined && appSecret === undefined) {
    if (apiBase !== undefined) fail('WECHAT_API_BASE needs WECHAT_APP_ID and WECHAT_APP_SECRET')
    if (dryRun) return null
    fail("scanauth reminders sends through the Official Account: set WECHAT_APP_ID and WECHAT_APP_SECRET as for the servers (and WECHAT_API_BASE for an emulator or a proxy); a --dry-run needs neither")
  }
  if (appId === undefined || appSecret === undefined) fail(`${appId === undefined ? 'WECHAT_APP_ID' : 'WECHAT_APP_SECRET'} must be set too: the Official Account needs both`)
  if (apiBase === undefined) return { appId: appId as string, appSecret: appSecret as string }
  if (!isHttpUrl(apiBase)) fail(`WECHAT_API_BASE must be an http(s) URL such as https://api.weixin.qq.com, not "${apiBase}"`)
  return { appId: appId as string, appSecret: appSecret as string, apiBase: apiBase.replace(/\/+$/, '') }
}

function templateIdOf(name: string, raw: string, fail: (message: string) => never): string {
  if (!TEMPLATE_ID.test(raw)) fail(`${name} must be a template id from the Official Account platform (1 to 64 letters, digits, _ or -), not "${raw}"`)
  return raw
}

/** `WECHAT_TEMPLATE_FIELDS_RENEWAL`: `{"field": "fact", …}`, each fact one of {@link REMINDER_FACTS}. */
function templateFieldsOf(raw: string, fail: (message: string) => never): Record<string, ReminderFact> {
  const rule = `WECHAT_TEMPLATE_FIELDS_RENEWAL must be a JSON object from template field to fact (${REMINDER_FACTS.join(', ')}), e.g. {"thing1":"headline","time2":"ends"}`
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    fail(`${rule}; it is not JSON`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0 || Object.keys(parsed).length > 20) {
    fail(`${rule}, with 1 to 20 fields`)
  }
  const fields: Record<string, ReminderFact> = {}
  for (const [field, fact] of Object.entries(parsed as object)) {
    if (!FIELD_NAME.test(field)) fail(`${rule}; "${field}" is not a field name (a letter, then letters, digits or _)`)
    if (!REMINDER_FACTS.includes(fact as ReminderFact)) fail(`${rule}; the fact of "${field}" is ${JSON.stringify(fact)}`)
    fields[field] = fact as ReminderFact
  }
  return fields
}

/** `SCANAUTH_PUBLIC_URL`: an http(s) base without a query, kept without its trailing slash. */
function publicBase(raw: string, fail: (message: string) => never): string {
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    fail(`SCANAUTH_PUBLIC_URL must be an http(s) URL without a query, such as https://app.example, not "${raw}"`)
  }
  return raw.replace(/\/+$/, '')
}

function isHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}
