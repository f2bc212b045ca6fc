/**
 * Reminders before access ends (docs/behaviour.md, B-remind-1…10), as pure functions: when
 * everything a person holds ends, which lead is due, and the key that makes a reminder happen once.
 * No I/O, no clock.
 *
 * @module
 */
import type { AuthorizationRecord } from '../store/records'
import { fifoOrder, isValid } from './authorizations'
import { DAY } from './time'

/** The longest lead: two months. */
export const MAX_LEAD_DAYS = 60

/**
 * When the time a person holds ends (B-remind-2): the end of their valid `active` time
 * authorization, plus the length of every `pending` time authorization queued behind it (each starts
 * when the one before ends). `null` when access does not end by the clock: the active one holds
 * points, or a points authorization is queued (it lasts until used), or nothing valid is active.
 * `last` is the authorization whose end that is: the last time one of the chain.
 */
export function endOfAccess(authorizations: readonly AuthorizationRecord[], now: number): { endsAt: number; last: AuthorizationRecord } | null {
  const active = authorizations.filter((a) => a.status === 'active' && isValid(a, now)).sort((a, b) => b.id - a.id)[0]
  if (active === undefined || active.type !== 'time' || active.endAt === null) return null
  const queue = authorizations.filter((a) => a.status === 'pending').sort(fifoOrder)
  if (queue.some((a) => a.type === 'points')) return null
  let endsAt = active.endAt
  let last = active
  for (const pending of queue) {
    endsAt += (pending.endAt ?? pending.startAt) - pending.startAt
    last = pending
  }
  return { endsAt, last }
}

/**
 * The lead due for an access ending at `endsAt` (B-remind-3): the smallest lead whose window it is
 * in (`endsAt - now <= lead`), so that a pass that starts late sends the most urgent message only;
 * null when it ends beyond every lead, or has ended.
 */
export function dueLead(endsAt: number, now: number, leadDays: readonly number[]): number | null {
  const left = endsAt - now
  if (left <= 0) return null
  const due = leadDays.filter((lead) => left <= lead * DAY)
  return due.length === 0 ? null : Math.min(...due)
}

/**
 * The key of one reminder (B-remind-4): one per person, authorization and lead, ever. A time
 * reminder names the last authorization of the chain, so a chain that activates its next link is
 * not reminded again for the same end.
 */
export function reminderKey(input: { userId: number; authorizationId: number; lead: number | 'points' }): string {
  return `reminder:${input.userId}:${input.authorizationId}:${input.lead}`
}

/** Whether a points authorization is due (B-remind-5): active and valid, with 0 < points left < threshold. */
export function isLowOnPoints(authorization: AuthorizationRecord, pointsBelow: number, now: number): boolean {
  return authorization.status === 'active' && authorization.type === 'points' && isValid(authorization, now) && authorization.remainingPoints < pointsBelow
}
