/**
 * The three ways an Official Account can reach a person with a reminder, as request bodies and one
 * send each (reference phone-pay-reminders-admin.md §2.1):
 *
 * - `subscribe`, the one-time subscription message: `POST cgi-bin/message/template/subscribe`, free
 *   text ≤200 characters and a title ≤15, to anyone who confirmed the subscribemsg link, once per
 *   confirmation and scene. Only tried when core says the person holds a confirmation.
 * - `template`, the template message: `POST cgi-bin/message/template/send`, the operator's template
 *   with every field ≤20 characters, to followers only.
 * - `custom`, the customer-service text: `POST cgi-bin/message/custom/send`, only inside the window
 *   after the person's last interaction; outside it the channel is skipped without a call (WeChat
 *   would answer 45015 and nothing else).
 *
 * @module
 */
import type { ReminderMessage } from '@scanauth/core'
import { withFreshToken } from './access-token'
import { callApi, joinUrl } from './api-client'
import type { ResolvedReminderOptions, WechatReminderChannel } from './reminder-options'
import {
  cutText,
  defaultReminderText,
  defaultTemplateData,
  reminderFacts,
  SUBSCRIBE_CONTENT_MAX_CHARS,
  TEMPLATE_FIELD_MAX_CHARS,
} from './reminder-text'

/** The API path of each channel's send. */
export const REMINDER_ENDPOINTS: Readonly<Record<WechatReminderChannel, string>> = {
  subscribe: 'cgi-bin/message/template/subscribe',
  template: 'cgi-bin/message/template/send',
  custom: 'cgi-bin/message/custom/send',
}

/**
 * Why `channel` cannot be used for `message` before asking WeChat (no confirmation to spend, outside
 * the customer-service window), or null when it can. These are facts core knows too, so they are not
 * reported as the channel failing to reach the person.
 */
export function skipReason(channel: WechatReminderChannel, message: ReminderMessage, config: ResolvedReminderOptions): string | null {
  if (channel === 'subscribe') return message.subscribed ? null : 'no one-time subscription confirmation to spend'
  if (channel === 'custom') {
    const seenAt = Date.parse(message.lastSeenAt)
    if (Number.isNaN(seenAt)) return 'no last interaction known'
    const since = config.now() - seenAt
    return since < config.customWindowMs ? null : `outside the ${Math.round(config.customWindowMs / 1000)} s customer-service window after the last scan`
  }
  return null
}

/** The JSON body of `channel`'s send for `message`. */
export function reminderRequestBody(channel: WechatReminderChannel, message: ReminderMessage, config: ResolvedReminderOptions): Record<string, unknown> {
  if (channel === 'subscribe') {
    const subscribe = config.subscribe
    if (subscribe === null) throw new Error('subscribe is not configured')
    return {
      touser: message.openid,
      template_id: subscribe.templateId,
      ...(message.renewUrl === null ? {} : { url: message.renewUrl }),
      // WeChat documents scene as a string here, though the confirm link carries it as a number.
      scene: String(subscribe.scene),
      title: subscribe.title,
      data: { content: { value: cutText(textOf(message, 'subscribe', config), SUBSCRIBE_CONTENT_MAX_CHARS) } },
    }
  }
  if (channel === 'template') {
    const template = config.template
    if (template === null) throw new Error('template is not configured')
    const facts = reminderFacts(message, config.timeZone)
    const fields = template.data === undefined ? defaultTemplateData(facts) : template.data(message, facts)
    const data: Record<string, { value: string }> = {}
    for (const [key, field] of Object.entries(fields ?? {})) {
      // WeChat's 2023 rule: a field over 20 characters or with a line break is refused or cut.
      data[key] = { value: cutText(String(field?.value ?? ''), TEMPLATE_FIELD_MAX_CHARS, true) }
    }
    return {
      touser: message.openid,
      template_id: template.templateId,
      ...(template.url && message.renewUrl !== null ? { url: message.renewUrl } : {}),
      data,
    }
  }
  return { touser: message.openid, msgtype: 'text', text: { content: textOf(message, 'custom', config) } }
}

/**
 * Sends `body` on `channel`: resolves when WeChat accepted it, throws the `WechatApiError` or
 * `WechatHttpError` otherwise. A refused access token is replaced and the call made once more.
 */
export async function sendOnChannel(channel: WechatReminderChannel, body: Record<string, unknown>, config: ResolvedReminderOptions): Promise<void> {
  const endpoint = REMINDER_ENDPOINTS[channel]
  await withFreshToken(config.tokens, (token) =>
    callApi({
      url: `${joinUrl(config.apiBase, endpoint)}?access_token=${encodeURIComponent(token)}`,
      endpoint,
      method: 'POST',
      body,
      timeoutMs: config.timeoutMs,
      fetch: config.fetch,
    }),
  )
}

function textOf(message: ReminderMessage, channel: 'subscribe' | 'custom', config: ResolvedReminderOptions): string {
  return config.text === undefined ? defaultReminderText(message, channel, config.timeZone) : String(config.text(message, channel))
}
