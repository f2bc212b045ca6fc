/**
 * Which confirm links of the replies are used, for the page to mark them. With confirm on the phone
 * a scan's reply links to the app's confirm page (`{base}/confirm?ticket=…`); once that page has been
 * answered the ticket is used and the link leads nowhere (docs/behaviour.md B-confirm-4). The answer
 * goes from the phone's browser to the app, never through WeChat, so the emulator asks the app, as the
 * phone would by opening the link again: a `GET` that follows no redirect. The app sends a link still
 * open on to WeChat's authorize page (a redirect: nothing is decided or spent, B-confirm-6) and
 * answers a used, expired or replaced one with a 4xx page; that page's title (scanauth's: "Already
 * answered") is what the emulator shows beside the link.
 *
 * A link found used stays used, so it is asked about once; an open one at most once a second,
 * however many pages refresh; an app that does not answer (stopped, unreachable) leaves the link
 * unmarked, and a page waits for an answer only briefly (a late one shows on its next refresh). Only confirm links are asked about: a reply's other links are the app's to serve, and a
 * `GET` of them could do anything.
 *
 * @module
 */
import { WECHAT_BROWSER_USER_AGENT } from './open-in-wechat'
import { decodeEntities } from './reply-html'

/** How long the app may take to answer before the question is dropped (asked again later). */
const ASK_TIMEOUT_MS = 1500
/** How long a view waits for the answers: a slower one (an app far away, a host that does not resolve) shows on a later refresh. */
const VIEW_WAIT_MS = 300
/** How often an open link is asked about again. */
const ASK_AGAIN_MS = 1000
/** Links remembered (each kept scan has one or two): the oldest are forgotten beyond this. */
const REMEMBERED = 1000

/** Whether `link` is a confirm link: an http(s) address whose path ends in `/confirm`, with a `ticket`. */
export function isConfirmLink(link: string): boolean {
  try {
    const url = new URL(link)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname.endsWith('/confirm') && url.searchParams.has('ticket')
  } catch {
    return false
  }
}

/** The confirm links the app no longer takes, with what its page says; see the module comment. */
export class ConfirmLinks {
  /** Used links and the title of the app's page about them: final. */
  readonly #used = new Map<string, string>()
  /** When each open link was last asked about, and the question under way. */
  readonly #asked = new Map<string, { at: number; answer?: Promise<void> }>()
  readonly #closed: AbortSignal

  /** `closed`: aborted when the emulator closes, ending every question under way. */
  constructor(closed: AbortSignal) {
    this.#closed = closed
  }

  /**
   * The used ones among `links` (other links are passed over), with the app's words: what the app has
   * said so far, after waiting a moment for the answers to the questions this asks.
   */
  async usedAmong(links: Iterable<string>): Promise<ReadonlyMap<string, string>> {
    const confirmLinks = [...new Set(links)].filter(isConfirmLink)
    const asked = confirmLinks.filter((link) => !this.#used.has(link)).map((link) => this.#ask(link))
    if (asked.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([Promise.all(asked), new Promise<void>((resolve) => (timer = setTimeout(resolve, VIEW_WAIT_MS)))])
      clearTimeout(timer)
    }
    const used = new Map<string, string>()
    for (const link of confirmLinks) {
      const words = this.#used.get(link)
      if (words !== undefined) used.set(link, words)
    }
    return used
  }

  #ask(link: string): Promise<void> {
    const last = this.#asked.get(link)
    if (last?.answer !== undefined) return last.answer
    if (last !== undefined && Date.now() - last.at < ASK_AGAIN_MS) return Promise.resolve()
    const entry: { at: number; answer?: Promise<void> } = { at: Date.now() }
    entry.answer = this.#askApp(link).finally(() => delete entry.answer)
    this.#asked.delete(link)
    this.#asked.set(link, entry)
    forgetOldest(this.#asked)
    return entry.answer
  }

  async #askApp(link: string): Promise<void> {
    if (this.#closed.aborted) return
    try {
      const response = await fetch(link, {
        redirect: 'manual',
        headers: { 'user-agent': WECHAT_BROWSER_USER_AGENT },
        signal: AbortSignal.any([this.#closed, AbortSignal.timeout(ASK_TIMEOUT_MS)]),
      })
      if (response.status < 400 || response.status > 499) {
        await response.body?.cancel()
        return
      }
      this.#used.set(link, titleOf(await response.text()) ?? `HTTP ${response.status}`)
      this.#asked.delete(link)
      forgetOldest(this.#used)
    } catch {
      // The app did not answer in time (or at all): the link is not known to be used; asked again later.
    }
  }
}

/** The text of a page's `<title>`, entities decoded and white space folded; undefined without one. */
function titleOf(html: string): string | undefined {
  const title = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html)?.[1]
  const text = title === undefined ? '' : decodeEntities(title).replace(/\s+/g, ' ').trim()
  return text === '' ? undefined : text.slice(0, 120)
}

/** Drops the oldest entries of `map` beyond {@link REMEMBERED}, so a long-running dev server does not grow. */
function forgetOldest(map: Map<string, unknown>): void {
  for (const key of map.keys()) {
    if (map.size <= REMEMBERED) return
    map.delete(key)
  }
}
