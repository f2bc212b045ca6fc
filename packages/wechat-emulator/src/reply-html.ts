/**
 * A passive text reply as the emulated phone shows it. WeChat renders `<a href="…">…</a>` in a text
 * reply as a tappable link and shows the rest as text; so does the emulator's page, and nothing else
 * of the reply becomes markup: the text is taken apart into plain runs and links, and every piece is
 * escaped again before it is written.
 *
 * A link's address is not written as is: it goes through `GET /emulator/open`, which makes the
 * scanner the phone's user (the `wxemu_openid` cookie the authorize page reads) before sending the
 * browser on. Only http(s) addresses become links; others (`weixin://…`, `javascript:`) are shown as
 * text, since a browser cannot open them as WeChat would.
 *
 * @module
 */
import { escapeHtml } from './html'

/** `<a href="…">label</a>` (or single quotes), as a reply writes a link. */
const LINK = /<a\s+href\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>([\s\S]*?)<\/a\s*>/gi

/**
 * The phone's view of `text`, as HTML safe to insert into the page; links open as `openid` through
 * `openUrl` (the emulator's `/emulator/open` at its own address, so that the cookie is set on the host
 * the authorize page is reached at, even when the page was opened as `localhost`). A link in `spent`
 * (a confirm link the app no longer takes: see confirm-links.ts) is shown used, with the app's words.
 */
export function replyHtml(text: string, openid: string, openUrl: string, spent: ReadonlyMap<string, string> = new Map()): string {
  let html = ''
  let at = 0
  for (const match of text.matchAll(LINK)) {
    html += escapeHtml(decodeEntities(text.slice(at, match.index)))
    const href = decodeEntities(match[1] ?? match[2] ?? '')
    // A label is text: tags inside it are shown, not obeyed.
    const label = escapeHtml(decodeEntities(match[3] ?? ''))
    const used = spent.get(href)
    const open = `${escapeHtml(openUrl)}?${escapeHtml(new URLSearchParams({ openid, url: href }).toString())}`
    html += !isHttp(href)
      ? `<span class="reply-link dead" title="${escapeHtml(`${href} (not an http(s) link: not opened here)`)}">${label}</span>`
      : used === undefined
        ? `<a class="reply-link" href="${open}" title="${escapeHtml(`Opens ${href} in WeChat as ${openid}`)}">${label}</a>`
        : `<a class="reply-link used" href="${open}" title="${escapeHtml(`Used: the app answers ${href} with “${used}”`)}">${label}</a> <span class="link-used">used · ${escapeHtml(used)}</span>`
    at = match.index + match[0].length
  }
  return html + escapeHtml(decodeEntities(text.slice(at)))
}

/** The http(s) addresses a reply links to, in order, as a tap would open them (entities decoded). */
export function replyLinks(text: string): string[] {
  return [...text.matchAll(LINK)].map((match) => decodeEntities(match[1] ?? match[2] ?? '')).filter(isHttp)
}

/** The HTML entities a reply may use to escape its text (named basics and numeric ones), decoded. */
export function decodeEntities(text: string): string {
  return text.replace(/&(?:(amp|lt|gt|quot|apos)|#(\d{1,7})|#x([0-9a-f]{1,6}));/gi, (entity, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (name !== undefined) return NAMED[name.toLowerCase()] ?? entity
    const code = dec !== undefined ? Number(dec) : Number.parseInt(hex ?? '', 16)
    // Not a character (past U+10FFFF, a lone surrogate, NUL): left as written.
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : entity
  })
}

const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function isHttp(href: string): boolean {
  try {
    const url = new URL(href)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}
