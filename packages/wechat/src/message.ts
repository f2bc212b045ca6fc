/**
 * What a push carries, and which pushes are scans of a scanauth code.
 *
 * @module
 */
import type { XmlObject, XmlValue } from './xml'
import { textField } from './xml'

/**
 * A message or event pushed by WeChat, as parsed from its XML (decrypted first in safe mode). Text
 * fields are strings, exactly as sent; nested elements (e.g. `ScanCodeInfo`) are objects.
 */
export interface WechatMessage {
  /** The account's original ID (`gh_…`). */
  ToUserName: string
  /** The user's OpenID under this AppID. */
  FromUserName: string
  /** Seconds since the epoch, as a string. */
  CreateTime: string
  /** `event`, `text`, `image`, ... */
  MsgType: string
  /** For `MsgType` `event`: `subscribe`, `unsubscribe`, `SCAN`, `CLICK`, ... (case as WeChat sends it). */
  Event?: string
  /** For scans: the scene (`SCAN`) or `qrscene_` + the scene (`subscribe`). */
  EventKey?: string
  /** For scans: the QR code's ticket. */
  Ticket?: string
  /** For ordinary messages: WeChat's message id. */
  MsgId?: string
  /** For text messages: the text. */
  Content?: string
  [field: string]: XmlValue | undefined
}

/** The prefix WeChat puts before the scene in the `EventKey` of a `subscribe` through a QR code. */
export const SUBSCRIBE_SCENE_PREFIX = 'qrscene_'

/**
 * Checks the parsed fields have what every push has (`ToUserName`, `FromUserName`, `CreateTime`,
 * `MsgType`, all text) and returns them typed, or `null` when they do not.
 */
export function asMessage(fields: XmlObject): WechatMessage | null {
  for (const name of ['ToUserName', 'FromUserName', 'CreateTime', 'MsgType']) {
    if (textField(fields, name) === undefined) return null
  }
  return fields as WechatMessage
}

/**
 * The scene of a scanauth scan, or `null` when the push is something else.
 *
 * - `SCAN` (the user already follows the account): `EventKey` is the raw scene.
 * - `subscribe` through a code: `EventKey` is `qrscene_` + the scene. Only a *leading* prefix is
 *   removed, so a scene that itself contains `qrscene_` survives intact.
 * - A plain `subscribe` (from search or a profile) has no `qrscene_` key and is not a scan.
 */
export function sceneOfScan(message: WechatMessage): string | null {
  if (message.MsgType !== 'event') return null
  const key = typeof message.EventKey === 'string' ? message.EventKey : ''
  if (message.Event === 'SCAN') return key === '' ? null : key
  if (message.Event === 'subscribe' && key.startsWith(SUBSCRIBE_SCENE_PREFIX)) {
    const scene = key.slice(SUBSCRIBE_SCENE_PREFIX.length)
    return scene === '' ? null : scene
  }
  return null
}

/**
 * The events that report on messages the account sent or may send: a template message's delivery
 * (`TEMPLATESENDJOBFINISH`, `Status` `success` / `failed:user block` / `failed: system failed`) and
 * the subscription notification's popup, later change and send results. Nobody reads a reply to them,
 * so the callback hands them to `onMessage` and always answers `success`, whatever the hook does
 * (an error answer would only make WeChat deliver them again).
 */
export const DELIVERY_REPORT_EVENTS: ReadonlySet<string> = new Set([
  'templatesendjobfinish',
  'subscribe_msg_popup_event',
  'subscribe_msg_change_event',
  'subscribe_msg_sent_event',
])

/** Whether `message` is one of the {@link DELIVERY_REPORT_EVENTS} (the event name in any case). */
export function isDeliveryReport(message: WechatMessage): boolean {
  return message.MsgType === 'event' && typeof message.Event === 'string' && DELIVERY_REPORT_EVENTS.has(message.Event.toLowerCase())
}

/**
 * The identity of one delivery, for dropping WeChat's retries (B-wx-6): events by FromUserName +
 * CreateTime + Event + EventKey (the platform's advice plus the key, as WxJava does, so two events of
 * one user in one second stay apart), messages by MsgId. A template message's delivery report carries
 * the message's id as `MsgID` (capital D) and no EventKey: with it, two reports for one user in one
 * second stay apart too.
 */
export function deliveryKey(message: WechatMessage): string {
  const sentId = typeof message.MsgID === 'string' ? message.MsgID : ''
  const parts =
    typeof message.MsgId === 'string' && message.MsgId !== ''
      ? ['msg', message.MsgId, message.FromUserName, message.CreateTime]
      : ['event', message.FromUserName, message.CreateTime, String(message.Event ?? ''), String(message.EventKey ?? ''), ...(sentId === '' ? [] : [sentId])]
  // JSON keeps the parts apart even if one of them contains the separator.
  return JSON.stringify(parts)
}
