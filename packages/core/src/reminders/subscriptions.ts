/**
 * The "remind me" link and WeChat's redirect back from its confirm page (docs/behaviour.md,
 * B-remind-6…8): a one-time subscription confirmation is one message's worth of consent. The link
 * carries a `reserved` state issued for one person; the redirect to `{base}/m/subscribed` counts only
 * with that state, for that person, for the template and scene offered, once, and a confirmation
 * stores one consent, which the send of a reminder spends.
 *
 * @module
 */
import type { ReminderSubscription, SubscriptionOutcome, SubscriptionRedirect } from './api'
import type { Store } from '../store/contract'
import { ScanAuthError } from '../errors'
import { DAY } from '../rules/time'
import { consentKey, isSet, subscribeStateKey } from './keys'

/** How long a "remind me" link works: a day. */
const STATE_TTL_MS = DAY
/** How long a confirmation is kept unspent: a year. */
const CONSENT_TTL_MS = 365 * DAY
/** WeChat's `reserved`: at most 128 bytes of `[a-zA-Z0-9]`; ours are 32 hexadecimal characters. */
const RESERVED_PATTERN = /^[0-9a-f]{32}$/

export function subscriptionMethods(input: { store: Store; now: () => number; subscription: ReminderSubscription; pagesUrl: () => string }) {
  const { store, now, subscription } = input

  return {
    /** A "remind me" link for `openid`: WeChat's confirm page, coming back to `{base}/m/subscribed`. */
    async subscribeUrlFor(openid: string): Promise<string> {
      const bytes = crypto.getRandomValues(new Uint8Array(16))
      const reserved = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
      const at = now()
      await store.incrementCounter(subscribeStateKey(reserved, openid), at + STATE_TTL_MS, at)
      const base = input.pagesUrl()
      const redirectUrl = new URL('subscribed', base.endsWith('/') ? base : `${base}/`).toString()
      return subscription.confirmUrl({ redirectUrl, reserved })
    },

    /**
     * WeChat's redirect (B-remind-7): refuses a template or scene not offered (`subscription_invalid`,
     * 400) and a state not issued to that person or used already (`subscription_state_invalid`, 403),
     * storing nothing; a cancel stores nothing either.
     */
    async acceptSubscription(redirect: SubscriptionRedirect): Promise<SubscriptionOutcome> {
      const { openid, templateId, action, scene, reserved } = redirect
      if (templateId !== subscription.templateId || scene !== String(subscription.scene)) {
        throw new ScanAuthError('subscription_invalid', 'This subscription was not offered here')
      }
      if (action === 'cancel') return 'cancelled'
      if (action !== 'confirm') throw new ScanAuthError('invalid_request', "action must be 'confirm' or 'cancel'")
      if (typeof reserved !== 'string' || !RESERVED_PATTERN.test(reserved) || typeof openid !== 'string' || openid === '' || openid.length > 128) {
        throw new ScanAuthError('subscription_state_invalid', 'This confirmation does not come from a link issued here')
      }
      const at = now()
      const state = subscribeStateKey(reserved, openid)
      if (!(await isSet(store, state, at))) throw new ScanAuthError('subscription_state_invalid', 'This confirmation does not come from a link issued to you, or was used already')
      // Spent: a replayed redirect stores nothing more.
      await store.deleteCounter(state)
      await store.incrementCounter(consentKey(openid, subscription), at + CONSENT_TTL_MS, at)
      return 'subscribed'
    },
  }
}
