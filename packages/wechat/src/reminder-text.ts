/**
 * What a reminder says, within WeChat's limits: the free text of the one-time subscription message
 * (≤200 characters) and of the customer-service message, and the fields of a template message (each
 * ≤20 characters, no line breaks, since WeChat's 2023 rules; `first` and `remark` are no longer shown).
 *
 * Every text says when access ends (or how many points are left) and, when core knows the renewal
 * link, leads to it: the subscription and template messages open their `url` when tapped, the
 * customer-service text carries it as `<a href>`, which WeChat shows as a link.
 *
 * @module
 */
import type { ReminderMessage } from '@scanauth/core'
import { escapeAttribute } from './confirm-reply'

/** The limit of one template message field, in characters. */
export const TEMPLATE_FIELD_MAX_CHARS = 20
/** The limit of a one-time subscription message's `data.content.value`, in characters. */
export const SUBSCRIBE_CONTENT_MAX_CHARS = 200
/** The limit of a one-time subscription message's `title`, in characters. */
export const SUBSCRIBE_TITLE_MAX_CHARS = 15

/** The facts of one reminder, short enough for a template field each: what a `data` mapping picks from. */
export interface ReminderFacts {
  /** `Access ending` or `Points running low`. */
  headline: string
  /** `Access` or `Points`. */
  subject: string
  /** When access ends, e.g. `2026-03-04 16:00` in the notifier's time zone; `''` for points. */
  ends: string
  /** `5 points left`; `''` for time. */
  remaining: string
  /** `ends` or `remaining`, whichever applies. */
  status: string
  /** `Tap to renew` when the message carries the renewal link, else `''`. */
  action: string
}

/** The facts of `message`, dates written in `timeZone` (an IANA name, e.g. `Asia/Shanghai`). */
export function reminderFacts(message: ReminderMessage, timeZone: string): ReminderFacts {
  const time = message.kind === 'time'
  const ends = time && message.endsAt !== null ? formatDateTime(message.endsAt, timeZone) : ''
  const remaining = !time && message.remainingPoints !== null ? `${message.remainingPoints} point${message.remainingPoints === 1 ? '' : 's'} left` : ''
  return {
    headline: time ? 'Access ending' : 'Points running low',
    subject: time ? 'Access' : 'Points',
    ends,
    remaining,
    status: time ? ends : remaining,
    action: message.renewUrl === null ? '' : 'Tap to renew',
  }
}

/**
 * The default text of a reminder on `channel`: `Your access ends on 2026-03-04 16:00 (UTC+8).` or
 * `You have 5 points left.`, then for `subscribe` `Tap this message to renew.` (the message's `url` is
 * the link) and for `custom` `<a href="…">Renew</a>` (WeChat shows it as a link). Without a renewal
 * link, only the first sentence.
 */
export function defaultReminderText(message: ReminderMessage, channel: 'subscribe' | 'custom', timeZone: string): string {
  let text: string
  if (message.kind === 'time' && message.endsAt !== null) {
    text = `Your access ends on ${formatDateTime(message.endsAt, timeZone)} (${zoneName(message.endsAt, timeZone)}).`
  } else if (message.kind === 'points' && message.remainingPoints !== null) {
    text = `You have ${message.remainingPoints} point${message.remainingPoints === 1 ? '' : 's'} left.`
  } else {
    text = 'Your access is ending.'
  }
  if (message.renewUrl === null) return text
  return channel === 'subscribe' ? `${text} Tap this message to renew.` : `${text} <a href="${escapeAttribute(message.renewUrl)}">Renew</a>`
}

/**
 * The default fields of a template message, in the classic layout of the library's expiry templates
 * (`first`, `keyword1`, `keyword2`, `remark`): headline, subject, when (or points left), action. A
 * category template names its fields otherwise (`thing1`, `time2` …): give the notifier a `data`
 * mapping for it.
 */
export function defaultTemplateData(facts: ReminderFacts): Record<string, WechatTemplateField> {
  return {
    first: { value: facts.headline },
    keyword1: { value: facts.subject },
    keyword2: { value: facts.status },
    remark: { value: facts.action },
  }
}

/**
 * `text` cut to `max` characters (code points, as WeChat counts them, so an emoji is never split): a
 * longer text keeps `max - 1` and ends in `…`. Line breaks become spaces when `singleLine` (template
 * fields may not contain them).
 */
export function cutText(text: string, max: number, singleLine = false): string {
  const flat = singleLine ? text.replace(/\s*[\r\n]+\s*/g, ' ') : text
  const chars = Array.from(flat)
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`
}

/** The wall-clock parts of `date` in `timeZone`. */
function wallClock(date: Date, timeZone: string): { year: string; month: string; day: string; hour: string; minute: string } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date)
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '00'
  return { year: part('year'), month: part('month'), day: part('day'), hour: part('hour'), minute: part('minute') }
}

/** `2026-03-04 16:00` in `timeZone`. */
function formatDateTime(iso: string, timeZone: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const { year, month, day, hour, minute } = wallClock(date, timeZone)
  return `${year}-${month}-${day} ${hour}:${minute}`
}

/**
 * The zone's offset at that time, `UTC+8`, `UTC-4`, `UTC+5:30` or `UTC`: computed from the wall clock
 * rather than asked of ICU, whose short names differ between Node builds (`GMT`, `GMT+0`).
 */
function zoneName(iso: string, timeZone: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return timeZone
  const wall = wallClock(date, timeZone)
  const asUtc = Date.UTC(Number(wall.year), Number(wall.month) - 1, Number(wall.day), Number(wall.hour), Number(wall.minute))
  const minutes = Math.round((asUtc - Math.floor(date.getTime() / 60_000) * 60_000) / 60_000)
  if (minutes === 0) return 'UTC'
  const sign = minutes > 0 ? '+' : '-'
  const abs = Math.abs(minutes)
  return `UTC${sign}${Math.floor(abs / 60)}${abs % 60 === 0 ? '' : `:${String(abs % 60).padStart(2, '0')}`}`
}

/** One field of a template message. */
export interface WechatTemplateField {
  /** Its text: cut to 20 characters, line breaks made spaces. */
  value: string
}
