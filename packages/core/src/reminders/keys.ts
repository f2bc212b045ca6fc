/**
 * The store counters of reminders and their consents (docs/behaviour.md, B-remind-4…8). Counters are
 * what every store has; a reminder needs no record of its own: a claim is a counter that a pass sets
 * first, a consent a counter the subscription redirect sets and a send deletes. Openids are digested
 * so that no key names a person.
 *
 * @module
 */
import { digestSecret } from '../rules/confirm'
import type { Store } from '../store/contract'
import type { ReminderSubscription } from './api'

/** The consent of one one-time subscription confirmation of `openid` (one message's worth). */
export function consentKey(openid: string, subscription: Pick<ReminderSubscription, 'templateId' | 'scene'>): string {
  return `subscribed:${digestSecret(openid)}:${subscription.templateId}:${subscription.scene}`
}

/** The state (`reserved`) of a subscription link issued to `openid`. */
export function subscribeStateKey(reserved: string, openid: string): string {
  return `subscribe-state:${reserved}:${digestSecret(openid)}`
}

/**
 * Whether the counter `key` is there, read by adding one to it (a counter has no other read): a
 * value of 1 means it was not, and it is deleted again.
 */
export async function isSet(store: Store, key: string, now: number, keepUntil = now + 1): Promise<boolean> {
  if ((await store.incrementCounter(key, keepUntil, now)) > 1) return true
  await store.deleteCounter(key)
  return false
}
