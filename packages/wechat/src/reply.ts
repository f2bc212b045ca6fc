/**
 * Passive replies: the body of the HTTP response to a push, which WeChat shows the user as a message
 * from the account. Plain or, in safe mode, encrypted.
 *
 * @module
 */
import { randomInt } from 'node:crypto'
import type { ScanResult } from '@scanauth/core'
import { confirmReplyText, escapeAttribute } from './confirm-reply'
import { encryptMessage } from './crypto'
import type { WechatMessage } from './message'
import { computeSignature } from './signature'
import { buildXml } from './xml'

/**
 * The body that tells WeChat "received, nothing to say". WeChat then neither retries nor shows the
 * user "this account cannot provide service right now".
 */
export const SUCCESS_BODY = 'success'

/**
 * The default texts sent to the user after a scan whose answer is fixed. A `scanned` scan (confirm
 * on the phone) is answered with a text made for it, naming the device and linking to the confirm
 * page: see {@link confirmReplyText}.
 */
export const DEFAULT_REPLY_TEXTS: Readonly<Record<Exclude<ScanResult['result'], 'scanned'>, string>> = {
  authorized: 'Signed in.',
  need_purchase: 'Please purchase to continue.',
  invalid: 'This QR code has expired or was already used. Refresh it on your device and scan again.',
}

/**
 * The text of a `need_purchase` scan whose result carries `payUrl` (core's `payments.phone`,
 * docs/behaviour.md B-phone-2): the default text and a link to buy on this phone. WeChat shows
 * `<a href="…">` in a text reply as a tappable link, which opens in WeChat's browser, where the
 * cashier is.
 */
export function needPurchaseReplyText(payUrl: string): string {
  return `${DEFAULT_REPLY_TEXTS.need_purchase} <a href="${escapeAttribute(payUrl)}">Buy on this phone</a>, or on the device.`
}

/**
 * The text of an `authorized` scan whose result carries `remindUrl` (core's `reminders` with a
 * one-time subscription, docs/behaviour.md B-remind-6): the default text and the "remind me" link,
 * WeChat's one-time subscription confirm page.
 */
export function signedInReplyText(remindUrl: string): string {
  return `${DEFAULT_REPLY_TEXTS.authorized} <a href="${escapeAttribute(remindUrl)}">Remind me before it ends</a>`
}

/**
 * The default `reply` of `createWechatCallback`: one of {@link DEFAULT_REPLY_TEXTS}; for a `scanned`
 * scan the link to the confirm page ({@link confirmReplyText}; `message` dates the scan so the text
 * can say how long is left); for a `need_purchase` scan with a `payUrl`, the link to buy on the phone
 * ({@link needPurchaseReplyText}); for an `authorized` scan with a `remindUrl`, the "remind me" link
 * ({@link signedInReplyText}).
 */
export function defaultReply(result: ScanResult, message?: Pick<WechatMessage, 'CreateTime'>): string {
  if (result.result === 'scanned') return confirmReplyText(result, message)
  if (result.result === 'authorized' && typeof result.remindUrl === 'string' && result.remindUrl !== '') return signedInReplyText(result.remindUrl)
  if (result.result === 'need_purchase' && typeof result.payUrl === 'string' && result.payUrl !== '') return needPurchaseReplyText(result.payUrl)
  return DEFAULT_REPLY_TEXTS[result.result]
}

/**
 * A passive text reply to `message`: to the user who sent it, from the account it was sent to.
 *
 * @param createTime - seconds since the epoch (the platform documents seconds; some SDKs wrongly send ms)
 */
export function textReplyXml(message: Pick<WechatMessage, 'FromUserName' | 'ToUserName'>, content: string, createTime: number): string {
  return buildXml({
    ToUserName: message.FromUserName,
    FromUserName: message.ToUserName,
    CreateTime: createTime,
    MsgType: 'text',
    Content: content,
  })
}

/** Encryption parameters of a safe-mode reply. */
export interface ReplySealing {
  key: Buffer
  appId: string
  token: string
  /** Seconds since the epoch. */
  timestamp: number
  /** Defaults to a fresh random number. */
  nonce?: string
}

/**
 * Wraps a reply for safe mode: `<Encrypt>` with the encrypted XML, `<MsgSignature>` over token,
 * timestamp, nonce and the Encrypt text, and the `<TimeStamp>` and `<Nonce>` used.
 */
export function sealReply(xml: string, sealing: ReplySealing): string {
  const encrypt = encryptMessage(sealing.key, sealing.appId, xml)
  const nonce = sealing.nonce ?? String(randomInt(1_000_000_000, 10_000_000_000))
  const timestamp = String(sealing.timestamp)
  return buildXml({
    Encrypt: encrypt,
    MsgSignature: computeSignature(sealing.token, timestamp, nonce, encrypt),
    TimeStamp: sealing.timestamp,
    Nonce: nonce,
  })
}
