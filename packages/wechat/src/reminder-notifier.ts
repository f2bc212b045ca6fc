/**
 * `createWechatReminderNotifier`: core's `ReminderNotifier` on an Official Account. It tries its
 * channels in order (one-time subscription, template, customer-service by default) and answers what
 * happened as a `ReminderDelivery`:
 *
 * - `sent` on the first channel WeChat accepts, with the channels tried before that could not reach
 *   the person (`unreachable`), which core remembers;
 * - `unreachable` when every channel was skipped or refused the person;
 * - `retry` or `stop` at once when a send fails in a way that may pass, or ends the pass
 *   (reminder-errors.ts). No further channel is tried then: the failed send may have been delivered
 *   (a timeout), and a second channel would make it two messages.
 *
 * Channels core lists in `message.unreachableChannels` go last, so they are tried only when the
 * others cannot reach the person either.
 *
 * @module
 */
import type { ReminderDelivery, ReminderMessage, ReminderNotifier } from '@scanauth/core'
import { classifyReminderError } from './reminder-errors'
import { reminderRequestBody, sendOnChannel, skipReason } from './reminder-channels'
import { resolveReminderOptions, type ResolvedReminderOptions, type WechatReminderChannel, type WechatReminderNotifierOptions } from './reminder-options'
import { subscribeConfirmation } from './subscribe-confirm'

/**
 * Creates the reminder notifier of an Official Account, for core's `reminders.notifier`.
 *
 * @example
 * ```ts
 * const notifier = createWechatReminderNotifier({
 *   appId: process.env.WECHAT_APP_ID!,
 *   appSecret: process.env.WECHAT_APP_SECRET!,
 *   subscribe: { templateId: process.env.WECHAT_SUBSCRIBE_TEMPLATE_ID! },
 * })
 * const auth = createScanAuth({ store, qr, reminders: { leadDays: [3, 1], notifier } })
 * ```
 * Against the emulator: `createWechatReminderNotifier({ ...emulator.reminderNotifierOptions(), subscribe: { templateId } })`.
 *
 * @throws {@link WechatError} `invalid_options` naming the option that is missing or wrong.
 */
export function createWechatReminderNotifier(options: WechatReminderNotifierOptions): ReminderNotifier {
  const config = resolveReminderOptions(options)
  const notifier: ReminderNotifier = {
    // Core remembers, per person, the ones reported unreachable, and hands them back in
    // `message.unreachableChannels` (it looks up only these).
    channels: Object.freeze([...config.channels]),
    send: (message) => deliver(message, config),
  }
  if (config.subscribe !== null && config.channels.includes('subscribe')) {
    const { templateId, scene } = config.subscribe
    return { ...notifier, subscription: subscribeConfirmation({ appId: config.appId, templateId, scene, confirmBase: config.confirmBase }) }
  }
  return notifier
}

/** The configured channels, those core found unreachable lately moved to the end (in their order). */
export function channelOrder(channels: readonly WechatReminderChannel[], unreachable: readonly string[]): WechatReminderChannel[] {
  const late = new Set(unreachable)
  return [...channels.filter((c) => !late.has(c)), ...channels.filter((c) => late.has(c))]
}

async function deliver(message: ReminderMessage, config: ResolvedReminderOptions): Promise<ReminderDelivery> {
  const unreachable: string[] = []
  const reasons: string[] = []
  for (const channel of channelOrder(config.channels, Array.isArray(message.unreachableChannels) ? message.unreachableChannels : [])) {
    const skipped = skipReason(channel, message, config)
    if (skipped !== null) {
      reasons.push(`${channel}: ${skipped}`)
      continue
    }
    // Built outside the try: a throwing `text` or `data` of the app is the app's error, not WeChat's
    // answer (core counts a throw as retry; nothing was sent).
    const body = reminderRequestBody(channel, message, config)
    try {
      await sendOnChannel(channel, body, config)
      return unreachable.length === 0 ? { outcome: 'sent', channel } : { outcome: 'sent', channel, unreachable }
    } catch (error) {
      const failure = classifyReminderError(error)
      if (failure.kind !== 'unreachable') return { outcome: failure.kind, reason: `${channel}: ${failure.reason}` }
      if (failure.configuration) report(config, error, channel)
      unreachable.push(channel)
      reasons.push(`${channel}: ${failure.reason}`)
    }
  }
  const reason = reasons.length === 0 ? 'no channel is configured' : reasons.join('; ')
  return unreachable.length === 0 ? { outcome: 'unreachable', reason } : { outcome: 'unreachable', reason, unreachable }
}

function report(config: ResolvedReminderOptions, error: unknown, channel: WechatReminderChannel): void {
  try {
    config.onError?.(error, channel)
  } catch {
    // the operator's reporter failing must not change what the send did
  }
}
