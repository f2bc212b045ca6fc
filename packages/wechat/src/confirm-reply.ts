/**
 * The default reply to a scan in `confirm: 'link'` mode (B-confirm-1): a text that names the device
 * and links to the confirm page. WeChat shows `<a href="…">` in a text reply as a tappable link, so
 * the text is HTML: everything from the device is escaped, and hidden characters are made visible
 * first (core's `displayLabel`), so that a label cannot forge a link, nor reorder what is read.
 *
 * @module
 */
import { displayLabel, type ScanResult } from '@scanauth/core'
import type { WechatMessage } from './message'

/**
 * The text sent to the scanner of a `scanned` result: `Sign-in request for “<device>”. <a
 * href="<confirmUrl>">Confirm or deny</a> within 2 minutes. If you did not start this, tap Deny.`
 * Without `confirmUrl` (core's `confirmation.url` is not set) there is nothing to link to, and the
 * text asks the scanner to tell the operator.
 *
 * @param message - the scan push: its `CreateTime` dates the scan, so the time left to decide can be
 *   told on the same clock as the ticket's `expiresAt`. Without it the text gives no duration.
 */
export function confirmReplyText(result: Extract<ScanResult, { result: 'scanned' }>, message?: Pick<WechatMessage, 'CreateTime'>): string {
  const device = `Sign-in request for “${escapeText(displayLabel(result.deviceId))}”.`
  if (typeof result.confirmUrl !== 'string' || result.confirmUrl === '') {
    return `${device} It cannot be confirmed here: the confirm page is not set up. Please tell the operator of this service.`
  }
  const left = timeLeft(result.expiresAt, message)
  const link = `<a href="${escapeAttribute(result.confirmUrl)}">Confirm or deny</a>${left === null ? '' : ` within ${left}`}.`
  return `${device} ${link} If you did not start this, tap Deny.`
}

/**
 * "2 minutes", "45 seconds": how long the ticket lives after the scan, or null when the push carries
 * no usable time (or one so far from `expiresAt` that the clocks cannot be the same).
 */
function timeLeft(expiresAt: number, message: Pick<WechatMessage, 'CreateTime'> | undefined): string | null {
  const sentAt = Number(message?.CreateTime)
  if (!Number.isFinite(sentAt) || !Number.isFinite(expiresAt)) return null
  // CreateTime is whole seconds, truncated: the scan happened up to a second later.
  const seconds = Math.floor((expiresAt - sentAt * 1000) / 1000)
  if (seconds < 1 || seconds > 86_400) return null
  // Under two minutes in seconds: "1 minute" would hide up to 59 of them.
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`
  // Rounded down: telling the scanner more time than there is would make a decision fail.
  const minutes = Math.floor(seconds / 60)
  return `${minutes} minutes`
}

/** Escapes text for an HTML element: what a WeChat text reply is, around its links. */
export function escapeText(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ENTITIES[c] as string)
}

/** Escapes a value for a double-quoted HTML attribute (`href="…"`). */
export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c] as string)
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
