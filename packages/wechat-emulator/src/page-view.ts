/**
 * The live parts of the emulator's page, rendered on the server: the QR codes (with whether and by
 * whom each was scanned), the scans (with what the phone shows and what the callback answered) and
 * the account's messages (page-messages.ts).
 * The page is served with them, and its script fetches them again every two seconds from
 * `GET /emulator/view`, so there is one renderer, here, and every value in it is escaped.
 *
 * Times are written as `<time datetime>` in UTC; the page's script shows them in the viewer's zone.
 *
 * @module
 */
import { escapeHtml } from './html'
import { replyHtml } from './reply-html'
import { messagesHtml } from './page-messages'
import type { EmulatorMessage, EmulatorScan, EmulatorTicket } from './types'

/** What WeChat shows instead of a reply it refuses, or when the account does not answer. */
export const SERVICE_UNAVAILABLE_TEXT = 'This Official Account cannot provide service right now. (该公众号暂时无法提供服务，请稍后再试)'

/** The two live parts of the page, as HTML. */
export interface PageView {
  /** The codes' boxes. */
  codes: string
  /** The scans' table rows. */
  scans: string
  /** How many scans `scans` has (the table is hidden when none). */
  scanCount: number
  /** The account's messages (the chat's rows, newest first). */
  messages: string
  /** How many messages `messages` has. */
  messageCount: number
}

/**
 * The view of `tickets` and `scans` (links in replies open through `openUrl`; the `usedLinks` are shown
 * used); with `only` (a ticket, `''` for an unknown code), just that code and its scans: what a phone
 * sees when it opens a code's URL.
 */
export function pageView(input: {
  tickets: EmulatorTicket[]
  scans: EmulatorScan[]
  only?: string | undefined
  openUrl: string
  usedLinks?: ReadonlyMap<string, string>
  /** The messages the account sent, oldest first; with `only`, none (a code's page is about the code). */
  messages?: readonly EmulatorMessage[]
}): PageView {
  const focused = input.only !== undefined
  const codes = input.tickets.filter((c) => c.live && (!focused || c.ticket === input.only))
  const scans = shownScans(input.scans, input.only)
  const messages = focused ? [] : (input.messages ?? [])
  return {
    codes:
      codes.length === 0
        ? `<p class="muted">${focused ? 'This QR code is unknown or has expired.' : 'No live QR codes yet. Create a scene in the app.'}</p>`
        : codes.map((code) => codeBox(code, input.scans.find((s) => s.ticket === code.ticket))).join('\n'),
    scans: scans.map((scan) => scanRow(scan, input.openUrl, input.usedLinks)).join('\n'),
    scanCount: scans.length,
    messages: messagesHtml(messages, input.openUrl),
    messageCount: messages.length,
  }
}

/** The scans the view lists: all of them, or with `only` those of that code; newest first, as kept. */
export function shownScans(scans: EmulatorScan[], only: string | undefined): EmulatorScan[] {
  return only === undefined ? scans : scans.filter((s) => s.ticket === only)
}

/** One code. Once scanned it says so, by whom, and offers "Scan again" (a second scan is a test case too), not "Scan". */
function codeBox(code: EmulatorTicket, lastScan: EmulatorScan | undefined): string {
  const ticket = escapeHtml(code.ticket)
  const until = code.expiresAt === null ? 'permanent' : `expires ${timeHtml(code.expiresAt)}`
  const image = `<img src="${escapeHtml(code.imageUrl)}" alt="QR code for ${escapeHtml(code.sceneStr)}"`
  if (lastScan === undefined) {
    return `<div class="code">${image} title="Click to scan" data-scan="${ticket}">
<div class="muted">${escapeHtml(code.sceneStr)}</div><div class="muted">${until}</div>
<button type="button" data-scan="${ticket}">Scan</button></div>`
  }
  return `<div class="code scanned">${image}>
<div class="muted">${escapeHtml(code.sceneStr)}</div><div class="muted">${until}</div>
<p class="badge">Scanned by ${escapeHtml(lastScan.openid)} at ${timeHtml(lastScan.at)}</p>
<button type="button" class="secondary" data-scan="${ticket}">Scan again</button></div>`
}

/** One scan: time, scene, who, what the phone shows, what the callback answered. */
function scanRow(scan: EmulatorScan, openUrl: string, usedLinks: ReadonlyMap<string, string> | undefined): string {
  const bad = scan.status !== 200 || scan.replyError !== null
  return `<tr><td data-label="Time">${timeHtml(scan.at)}</td>
<td data-label="Scene">${escapeHtml(scan.sceneStr + (scan.event === 'subscribe' ? ' (subscribe)' : ''))}</td>
<td data-label="openid">${escapeHtml(scan.openid)}</td>
<td data-label="The phone shows" class="phone">${phoneShows(scan, openUrl, usedLinks)}</td>
<td data-label="The callback answered"${bad ? ' class="error"' : ''}>${escapeHtml(answerOf(scan))}</td></tr>`
}

/** The chat bubble the scanner gets: the reply (its links tappable), WeChat's error, or nothing. */
function phoneShows(scan: EmulatorScan, openUrl: string, usedLinks: ReadonlyMap<string, string> | undefined): string {
  if (scan.status !== 200 || scan.replyError !== null) return `<span class="error">${escapeHtml(SERVICE_UNAVAILABLE_TEXT)}</span>`
  if (scan.reply === null) return '<span class="muted">(no message)</span>'
  return `<div class="bubble">${replyHtml(scan.reply, scan.openid, openUrl, usedLinks)}</div>`
}

/** What the callback answered, in words: the HTTP status and what WeChat would object to. */
function answerOf(scan: EmulatorScan): string {
  if (scan.status === null) return `no answer after ${scan.attempts} deliveries`
  let text = `HTTP ${scan.status}${scan.attempts > 1 ? ` (after ${scan.attempts} deliveries)` : ''}`
  // The raw reply helps only when WeChat would refuse it; otherwise the phone's column shows it.
  if (scan.reply === null) text += ' · no reply'
  else text += scan.replyError === null ? ' · a text reply' : ` · replied "${scan.reply}"`
  if (scan.replyError !== null) text += ` · ${scan.replyError}`
  return text
}

function timeHtml(at: number): string {
  const iso = new Date(at).toISOString()
  return `<time datetime="${iso}">${iso.slice(11, 19)} UTC</time>`
}
