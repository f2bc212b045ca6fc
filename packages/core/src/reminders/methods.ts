/**
 * The reminder operations of a scanauth instance (docs/behaviour.md, B-remind-1…10): a pass of
 * `sendReminders`, the "remind me" link and WeChat's redirect back from it. Without the `reminders`
 * option they answer `reminders_not_configured`, and no link is offered.
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import type { ResolvedOptions } from '../service/options'
import type { Telemetry } from '../telemetry/telemetry'
import type { Store } from '../store/contract'
import { ScanAuthError } from '../errors'
import { SPAN } from '../telemetry/names'
import { sendRemindersMethod, type ReminderStore } from './send'
import { subscriptionMethods } from './subscriptions'

export type ReminderMethods = Pick<ScanAuth, 'sendReminders' | 'reminderSubscription' | 'remindMeUrl' | 'acceptSubscription'>

/** Whether a store has the reminders' read. */
function hasReminderRead(store: Store): store is ReminderStore {
  return typeof store.listActiveAuthorizations === 'function'
}

export function reminderMethods(input: { store: Store; now: () => number; config: ResolvedOptions; telemetry: Telemetry }): ReminderMethods {
  const { store, now, config, telemetry } = input
  const options = config.reminders
  if (options === undefined) {
    const off = async (): Promise<never> => {
      throw new ScanAuthError('reminders_not_configured', 'Reminders are not configured: createScanAuth was given no reminders option')
    }
    return {
      sendReminders: off,
      reminderSubscription: false,
      remindMeUrl: async () => null,
      acceptSubscription: async () => {
        throw new ScanAuthError('subscription_not_configured', 'Reminder subscriptions are not set up on this server')
      },
    }
  }
  if (!hasReminderRead(store)) throw new ScanAuthError('invalid_options', 'createScanAuth: store must implement listActiveAuthorizations() when reminders are configured')
  // The phone pages' address: the option's, else the phone pay pages'; without one, no link.
  const url = options.url ?? config.payments?.phone?.url
  const pagesUrl = url === undefined ? null : () => (typeof url === 'function' ? url() : url)
  // The renewal link is the phone's plans page, which is there only where the service sells on the phone.
  const renews = options.renewal ?? config.payments?.phone !== undefined
  const renewUrl = () => (pagesUrl === null || !renews ? null : new URL('pay', withSlash(pagesUrl())).toString())
  const subscription = options.notifier.subscription
  const subscriptions = subscription === undefined || pagesUrl === null ? null : subscriptionMethods({ store, now, subscription, pagesUrl })
  const sendReminders = sendRemindersMethod({ store, now, reminders: options, telemetry, renewUrl })
  return {
    sendReminders: (pass) => telemetry.operation(SPAN.reminders, () => sendReminders(pass), (result, span) => {
      span?.setAttribute('scanauth.reminders.sent', result.sent)
      span?.setAttribute('scanauth.reminders.due', result.due)
    }),
    reminderSubscription: subscriptions !== null,
    remindMeUrl: async (openid) => (subscriptions === null ? null : subscriptions.subscribeUrlFor(openid)),
    async acceptSubscription(redirect) {
      if (subscriptions === null) throw new ScanAuthError('subscription_not_configured', 'Reminder subscriptions are not set up on this server')
      return subscriptions.acceptSubscription(redirect)
    },
  }
}

const withSlash = (base: string) => (base.endsWith('/') ? base : `${base}/`)
