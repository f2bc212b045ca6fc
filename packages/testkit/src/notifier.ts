/**
 * `TestNotifier`: a reminder notifier in process memory, for the contract cases of reminders on every
 * store. It records every message it is handed and answers what the test tells it to (by default
 * `sent` on `template`). The wire of WeChat's channels is tested in `@scanauth/wechat` against the
 * emulator; here only what core relies on.
 *
 * @module
 */
import type { ReminderDelivery, ReminderMessage, ReminderNotifier, ReminderSubscription } from '@scanauth/core'

/** The confirm page address its subscription builds (WeChat's own, so suites can check its shape). */
export const TEST_SUBSCRIBE_BASE = 'https://mp.weixin.qq.com/mp/subscribemsg'

/** A {@link ReminderNotifier} whose answers the test decides. */
export class TestNotifier implements ReminderNotifier {
  /** Every message handed to `send`, in order. */
  readonly messages: ReminderMessage[] = []
  /** The channels it may report unreachable. */
  readonly channels = ['subscribe', 'template', 'custom'] as const
  /** What `send` answers for a message (default: sent on `subscribe` when subscribed, else `template`); a throw is thrown. */
  answer: (message: ReminderMessage) => ReminderDelivery | Promise<ReminderDelivery> = (message) => ({ outcome: 'sent', channel: message.subscribed ? 'subscribe' : 'template' })
  readonly subscription?: ReminderSubscription

  /** @param subscription - a one-time subscription (template id, scene), or none. */
  constructor(subscription?: { templateId: string; scene: number }) {
    if (subscription !== undefined) {
      this.subscription = {
        ...subscription,
        confirmUrl: ({ redirectUrl, reserved }) =>
          `${TEST_SUBSCRIBE_BASE}?action=get_confirm&appid=wx-test-app&scene=${subscription.scene}&template_id=${subscription.templateId}&redirect_url=${encodeURIComponent(redirectUrl)}&reserved=${reserved}#wechat_redirect`,
      }
    }
  }

  async send(message: ReminderMessage): Promise<ReminderDelivery> {
    this.messages.push(message)
    return this.answer(message)
  }
}
