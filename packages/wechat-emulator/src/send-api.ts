/**
 * The three send APIs of an Official Account, with WeChat's rules and errcodes (reference
 * phone-pay-reminders-admin.md §2.1), in the order WeChat applies them: method (43002), token
 * (41001/40001/42001), body (47001), the daily quota knob (45009), the receiver (40003), the template id
 * (40037), the fields (47003), then the channel's own rule:
 *
 * - `message/template/send`: followers only (43004), not to a user who turned messages off (43101);
 *   each field at most 20 characters without line breaks (WeChat's 2023 rule; the emulator refuses
 *   what WeChat would cut, so a client's mapping is caught in tests). A delivery report
 *   (`TEMPLATESENDJOBFINISH`) is pushed to the callback afterwards, as WeChat does.
 * - `message/template/subscribe`: only with a confirmation of that user, template and scene, which
 *   the send spends (43101 without); `scene` a string of 0–10000, `title` ≤15, content ≤200.
 * - `message/custom/send`: text only, inside the window of the user's last interaction (45015) and
 *   its count (45047): users.ts.
 *
 * Every accepted message is recorded (`messages()`, the page's chat).
 *
 * @module
 */
import { apiError, json, type ApiAnswer, type ApiContext } from './api'
import type { EmulatorMessage, EmulatorMessageChannel } from './types'

export type { MessagingState } from './messaging-state'
import type { MessagingState } from './messaging-state'

const TEMPLATE_FIELD_MAX = 20
const TITLE_MAX = 15
const CONTENT_MAX = 200
/** WeChat's limit on a customer-service text, in bytes. */
const CUSTOM_TEXT_MAX_BYTES = 2048

/** `POST /cgi-bin/message/template/send?access_token=` `{touser, template_id, url, data}`. */
export function templateSend(context: ApiContext): ApiAnswer {
  return withCommonChecks(context, 'message/template/send', (body, openid, state) => {
    const templateId = body.template_id
    if (typeof templateId !== 'string' || templateId === '' || (state.templateIds !== null && !state.templateIds.has(templateId))) {
      return apiError(40037, 'invalid template_id')
    }
    const data = readFields(body.data)
    if (typeof data === 'string') return apiError(47003, `argument invalid! ${data}`)
    if (!state.users.follows(openid)) return apiError(43004, 'require subscribe')
    if (state.users.refusesMessages(openid)) return apiError(43101, 'user refuse to accept the msg')
    const message = record(state, 'template', openid, {
      templateId,
      text: Object.entries(data).map(([key, value]) => `${key}: ${value}`).join('\n'),
      data,
      url: urlOf(body.url),
    })
    state.onTemplateSent(message)
    return json({ errcode: 0, errmsg: 'ok', msgid: message.msgid })
  })
}

/** `POST /cgi-bin/message/template/subscribe?access_token=` `{touser, template_id, url, scene, title, data: {content: {value}}}`. */
export function subscribeSend(context: ApiContext): ApiAnswer {
  return withCommonChecks(context, 'message/template/subscribe', (body, openid, state) => {
    const templateId = body.template_id
    if (typeof templateId !== 'string' || templateId === '' || (state.subscribeTemplateId !== null && templateId !== state.subscribeTemplateId)) {
      return apiError(40037, 'invalid template_id')
    }
    const scene = body.scene
    if (typeof scene !== 'string' || !/^\d{1,5}$/.test(scene) || Number(scene) > 10_000) return apiError(47003, 'argument invalid! scene must be a string of 0 to 10000')
    const title = body.title
    if (typeof title !== 'string' || title === '' || Array.from(title).length > TITLE_MAX) return apiError(47003, 'argument invalid! title must be 1 to 15 characters')
    const content = (body.data as { content?: { value?: unknown } } | undefined)?.content?.value
    if (typeof content !== 'string' || content === '' || Array.from(content).length > CONTENT_MAX) {
      return apiError(47003, 'argument invalid! data.content.value must be 1 to 200 characters')
    }
    // One message per confirmation and scene: without one left, WeChat refuses as for a user who said no.
    if (!state.consents.spend(openid, templateId, scene)) return apiError(43101, 'user refuse to accept the msg')
    record(state, 'subscribe', openid, { templateId, scene, title, text: content, url: urlOf(body.url) })
    return json({ errcode: 0, errmsg: 'ok' })
  })
}

/** `POST /cgi-bin/message/custom/send?access_token=` `{touser, msgtype: 'text', text: {content}}`. */
export function customSend(context: ApiContext): ApiAnswer {
  return withCommonChecks(context, 'message/custom/send', (body, openid, state) => {
    // The emulator plays text messages only: the kind a reminder is.
    if (body.msgtype !== 'text') return apiError(40008, 'invalid message type (the emulator plays text only)')
    const content = (body.text as { content?: unknown } | undefined)?.content
    if (typeof content !== 'string' || content === '') return apiError(47003, 'argument invalid! text.content is missing')
    if (Buffer.byteLength(content) > CUSTOM_TEXT_MAX_BYTES) return apiError(45002, 'content size out of limit')
    const window = state.users.checkWindow(openid, state.now())
    if (!window.ok) return apiError(window.errcode, window.errmsg)
    state.users.countCustom(openid)
    record(state, 'custom', openid, { text: content })
    return json({ errcode: 0, errmsg: 'ok' })
  })
}

/** The checks every send shares, then `decide` with the body and the receiver. */
function withCommonChecks(
  context: ApiContext,
  endpoint: string,
  decide: (body: Record<string, unknown>, openid: string, state: MessagingState) => ApiAnswer,
): ApiAnswer {
  if (context.method !== 'POST') return apiError(43002, 'require POST method')
  const check = context.tokens.check(context.query.get('access_token') ?? undefined)
  if (!check.ok) return apiError(check.errcode, check.errmsg)
  let body: unknown
  try {
    body = JSON.parse(context.body)
  } catch {
    return apiError(47001, 'data format error')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return apiError(47001, 'data format error')
  const state = context.messaging
  if (!state.quota.take(endpoint)) return apiError(45009, 'reach max api daily quota limit')
  const openid = (body as Record<string, unknown>).touser
  if (typeof openid !== 'string' || !state.users.isKnown(openid)) return apiError(40003, 'invalid openid')
  return decide(body as Record<string, unknown>, openid, state)
}

/** A template's fields as `key → value`, or what is wrong with them. */
function readFields(data: unknown): Record<string, string> | string {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'data is missing'
  const fields: Record<string, string> = {}
  for (const [key, field] of Object.entries(data as Record<string, unknown>)) {
    const value = (field as { value?: unknown } | null)?.value
    if (typeof value !== 'string') return `data.${key}.value is missing`
    if (Array.from(value).length > TEMPLATE_FIELD_MAX) return `data.${key}.value is longer than 20 characters`
    if (/[\r\n]/.test(value)) return `data.${key}.value contains a line break`
    fields[key] = value
  }
  return fields
}

function urlOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

function record(
  state: MessagingState,
  channel: EmulatorMessageChannel,
  openid: string,
  parts: { templateId?: string; scene?: string; title?: string; text: string; data?: Record<string, string>; url?: string | null },
): EmulatorMessage {
  const message: EmulatorMessage = {
    at: state.now(),
    msgid: state.log.nextMsgId(),
    channel,
    openid,
    templateId: parts.templateId ?? null,
    scene: parts.scene ?? null,
    title: parts.title ?? null,
    text: parts.text,
    data: parts.data ?? null,
    url: parts.url ?? null,
  }
  state.log.add(message)
  return message
}
