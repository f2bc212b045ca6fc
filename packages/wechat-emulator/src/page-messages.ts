/**
 * The account's messages on the emulated phone's page: the chat. Each message the send APIs accepted
 * (one-time subscription, template, customer-service) is shown as a bubble from the account to its
 * user, newest first, with its link tappable as that user: through `GET /emulator/open`, which makes
 * the receiver the phone's user (the `wxemu_openid` cookie) before the browser goes on, so a renewal
 * link opens the app's phone pages as the person it was sent to.
 *
 * Everything from the message is escaped; a customer-service text's `<a href>` links are read as the
 * replies' are (reply-html.ts), the rest of it is text.
 *
 * @module
 */
import { escapeHtml } from './html'
import { replyHtml } from './reply-html'
import type { EmulatorMessage } from './types'

/** The page's words for each channel. */
const CHANNEL_LABELS: Readonly<Record<EmulatorMessage['channel'], string>> = {
  subscribe: 'one-time subscription message',
  template: 'template message',
  custom: 'customer-service message',
}

/** The chat's rows, newest first, as HTML safe to insert into the page. */
export function messagesHtml(messages: readonly EmulatorMessage[], openUrl: string): string {
  return [...messages]
    .reverse()
    .map((message) => `<li class="message" data-channel="${message.channel}">
<div class="muted">${timeHtml(message.at)} · to ${escapeHtml(message.openid)} · ${CHANNEL_LABELS[message.channel]}</div>
<div class="bubble">${bubble(message, openUrl)}</div></li>`)
    .join('\n')
}

function bubble(message: EmulatorMessage, openUrl: string): string {
  if (message.channel === 'custom') return replyHtml(message.text, message.openid, openUrl)
  const title = message.title === null ? '' : `<b>${escapeHtml(message.title)}</b>\n`
  const link = message.url === null ? '' : `\n${tapLink(message.url, message.openid, openUrl)}`
  return `${title}${escapeHtml(message.text)}${link}`
}

/** The message's `url` as a tap on the message opens it: as its receiver; only http(s) is opened. */
function tapLink(url: string, openid: string, openUrl: string): string {
  if (!/^https?:\/\//i.test(url)) return `<span class="reply-link dead">${escapeHtml(url)}</span>`
  const href = `${openUrl}?${new URLSearchParams({ openid, url }).toString()}`
  return `<a class="reply-link message-link" href="${escapeHtml(href)}" title="${escapeHtml(`Opens ${url} in WeChat as ${openid}`)}">Open</a>`
}

function timeHtml(at: number): string {
  const iso = new Date(at).toISOString()
  return `<time datetime="${iso}">${iso.slice(11, 19)} UTC</time>`
}
