/**
 * `sendReminders` (docs/behaviour.md, B-remind-1…7): one pass over the authorizations near their end
 * (and, with `pointsBelow`, those low on points), read through the store's index, never every user.
 * Each due reminder is claimed in the store before the notifier hears of it, so that of several
 * instances or passes exactly one ever sends it, and a pass killed after a claim sends nothing twice
 * (a claim without an outcome is not tried again: at most once). A failure that may pass gives the
 * claim back for a later pass; a quota stops the pass.
 *
 * @module
 */
import type { ReminderDelivery, ReminderMessage, SendRemindersInput, SendRemindersResult } from './api'
import type { ResolvedReminders } from './options'
import type { Telemetry } from '../telemetry/telemetry'
import type { AuthorizationRecord, UserAggregate } from '../store/records'
import type { Store } from '../store/contract'
import { ScanAuthError } from '../errors'
import { digestSecret } from '../rules/confirm'
import { dueLead, endOfAccess, isLowOnPoints, reminderKey } from '../rules/reminders'
import { DAY } from '../rules/time'
import { iso } from '../service/views'
import { ATTR } from '../telemetry/names'
import { consentKey, isSet } from './keys'

/** A store with the reminders' read (checked once when the service is created). */
export type ReminderStore = Store & Required<Pick<Store, 'listActiveAuthorizations'>>

/** What a pass needs of the service. */
export interface ReminderContext {
  store: ReminderStore
  now: () => number
  reminders: ResolvedReminders
  telemetry: Telemetry
  /** The renewal link (`{url}pay`), or null without an address. */
  renewUrl: () => string | null
}

/** Authorizations read per store call. */
const PAGE = 200
/** How long a claim and its outcome are kept after the end they were for. */
const CLAIM_KEPT_MS = 30 * DAY
/** How long a channel that could not reach a person is skipped for them. */
const UNREACHABLE_KEPT_MS = 7 * DAY
/** The default and the largest number of messages of one pass. */
const DEFAULT_LIMIT = 10_000
const MAX_LIMIT = 100_000

/** The counter that says a channel could not reach a person lately. */
const offKey = (channel: string, openid: string) => `reminder-off:${channel}:${digestSecret(openid)}`

/** One reminder found due: whom, for which end, under which key. */
interface Due {
  key: string
  user: UserAggregate
  authorizationId: number
  kind: 'time' | 'points'
  leadDays: number | null
  endsAt: number | null
  remainingPoints: number | null
  /** Until when its claim is kept. */
  keepUntil: number
}

export function sendRemindersMethod(ctx: ReminderContext) {
  const { store, reminders, telemetry } = ctx
  const { notifier } = reminders
  const maxLeadMs = Math.max(...reminders.leadDays) * DAY

  /** A time authorization near its end: due for the smallest lead its chain's end is within, or why not. */
  function timeDue(user: UserAggregate, at: number): Due | 'renewed' {
    const end = endOfAccess(user.authorizations, at)
    const lead = end === null ? null : dueLead(end.endsAt, at, reminders.leadDays)
    if (end === null || lead === null) return 'renewed'
    const key = reminderKey({ userId: user.user.id, authorizationId: end.last.id, lead })
    return { key, user, authorizationId: end.last.id, kind: 'time', leadDays: lead, endsAt: end.endsAt, remainingPoints: null, keepUntil: end.endsAt + CLAIM_KEPT_MS }
  }

  /** A points authorization low on points: due once, unless something is queued behind it. */
  function pointsDue(user: UserAggregate, authorization: AuthorizationRecord, at: number): Due | 'renewed' {
    const current = user.authorizations.find((a) => a.id === authorization.id)
    if (current === undefined || !isLowOnPoints(current, reminders.pointsBelow ?? 0, at)) return 'renewed'
    if (user.authorizations.some((a) => a.status === 'pending')) return 'renewed'
    const key = reminderKey({ userId: user.user.id, authorizationId: current.id, lead: 'points' })
    return { key, user, authorizationId: current.id, kind: 'points', leadDays: null, endsAt: null, remainingPoints: current.remainingPoints, keepUntil: at + 365 * DAY }
  }

  /** The message of a due reminder, with what the store knows of reaching the person. */
  async function messageOf(due: Due, at: number): Promise<ReminderMessage> {
    const { openid } = due.user.user
    const subscription = notifier.subscription
    const subscribed = subscription === undefined ? false : await isSet(store, consentKey(openid, subscription), at)
    const unreachableChannels: string[] = []
    for (const channel of notifier.channels ?? []) if (await isSet(store, offKey(channel, openid), at)) unreachableChannels.push(channel)
    return {
      openid,
      userId: due.user.user.id,
      kind: due.kind,
      leadDays: due.leadDays,
      endsAt: due.endsAt === null ? null : iso(due.endsAt),
      remainingPoints: due.remainingPoints,
      renewUrl: ctx.renewUrl(),
      subscribed,
      unreachableChannels,
      lastSeenAt: iso(due.user.user.lastSeenAt),
    }
  }

  /** Claims, sends and records one reminder; answers what came of it. */
  async function deliver(due: Due, at: number): Promise<ReminderDelivery | 'already_reminded'> {
    // The claim goes in before the notifier hears of it: no other pass or instance sends this (B-remind-4).
    if ((await store.incrementCounter(due.key, due.keepUntil, at)) > 1) return 'already_reminded'
    let delivery: ReminderDelivery
    try {
      delivery = await notifier.send(await messageOf(due, at))
    } catch (error) {
      delivery = { outcome: 'retry', reason: error instanceof Error ? error.message : String(error) }
    }
    const { openid } = due.user.user
    if (delivery.outcome === 'retry' || delivery.outcome === 'stop') {
      // Nothing went out: the claim is given back, and a later pass tries again (B-remind-5).
      await store.deleteCounter(due.key)
      return delivery
    }
    // The outcome, recorded after the send; a claim without one was cut off between the two.
    await store.incrementCounter(`${due.key}:${delivery.outcome}`, due.keepUntil, at)
    for (const channel of delivery.unreachable ?? []) await store.incrementCounter(offKey(channel, openid), at + UNREACHABLE_KEPT_MS, at)
    // One confirmation is one message (B-remind-6): the one-time subscription is spent by its send.
    if (delivery.outcome === 'sent' && delivery.channel === 'subscribe' && notifier.subscription !== undefined) {
      await store.deleteCounter(consentKey(openid, notifier.subscription))
    }
    return delivery
  }

  return async function sendReminders(input: SendRemindersInput = {}): Promise<SendRemindersResult> {
    const at = input.now ?? ctx.now()
    const limit = input.limit ?? DEFAULT_LIMIT
    if (!Number.isSafeInteger(at) || at < 0) throw new ScanAuthError('invalid_request', 'now must be epoch milliseconds')
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new ScanAuthError('invalid_request', `limit must be a whole number from 1 to ${MAX_LIMIT}`)
    const result: SendRemindersResult = { checked: 0, due: 0, sent: 0, skipped: { already_reminded: 0, renewed: 0, unreachable: 0 }, failed: 0, stopped: false, byChannel: {} }
    if (input.dryRun === true) result.planned = []

    /** Handles one candidate; false to end the pass. */
    const handle = async (authorization: AuthorizationRecord): Promise<boolean> => {
      result.checked++
      const { user } = await store.load({ userId: authorization.userId, wholeQueue: true })
      if (user === null) return true
      const due = authorization.type === 'time' ? timeDue(user, at) : pointsDue(user, authorization, at)
      if (due === 'renewed') {
        result.skipped.renewed++
        return true
      }
      if (result.due >= limit) {
        result.stopped = true
        return false
      }
      if (result.planned !== undefined) {
        // A dry run reads and reports; it claims, sends and records nothing.
        result.due++
        result.planned.push({ userId: user.user.id, authorizationId: due.authorizationId, leadDays: due.leadDays, kind: due.kind })
        return true
      }
      const delivery = await deliver(due, at)
      if (delivery === 'already_reminded') {
        result.skipped.already_reminded++
        return true
      }
      result.due++
      telemetry.count('reminders', { [ATTR.channel]: delivery.outcome === 'sent' ? delivery.channel : 'none', [ATTR.outcome]: delivery.outcome })
      if (delivery.outcome === 'sent') {
        result.sent++
        result.byChannel[delivery.channel] = (result.byChannel[delivery.channel] ?? 0) + 1
      } else if (delivery.outcome === 'unreachable') result.skipped.unreachable++
      else result.failed++
      if (delivery.outcome === 'stop') result.stopped = true
      return delivery.outcome !== 'stop'
    }

    // Time authorizations ending within the longest lead, by their end (B-remind-2, B-remind-3).
    let after: { endAt: number; id: number } | undefined
    let going = true
    while (going) {
      const page = await store.listActiveAuthorizations({ type: 'time', endFrom: at + 1, endBefore: at + maxLeadMs + 1, ...(after === undefined ? {} : { after }), limit: PAGE })
      for (const authorization of page) if (!(going = await handle(authorization))) break
      const last = page[page.length - 1]
      if (page.length < PAGE || last === undefined) break
      after = { endAt: last.endAt as number, id: last.id }
    }
    // Points authorizations low on points (B-remind-5).
    let afterId = 0
    while (going && reminders.pointsBelow !== undefined) {
      const page = await store.listActiveAuthorizations({ type: 'points', pointsBelow: reminders.pointsBelow, afterId, limit: PAGE })
      for (const authorization of page) if (!(going = await handle(authorization))) break
      const last = page[page.length - 1]
      if (page.length < PAGE || last === undefined) break
      afterId = last.id
    }
    return result
  }
}
