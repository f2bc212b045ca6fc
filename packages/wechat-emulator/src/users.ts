/**
 * The emulated account's users as the send APIs see them (reference phone-pay-reminders-admin.md
 * §2.1): who follows (template messages reach followers only: 43004), who turned the account's
 * messages off (43101), and the customer-service window each one's last interaction opened:
 *
 * - a message from the user (text, image, …): 48 hours, 5 messages;
 * - a scan, a follow or a menu click: 1 minute, 3 messages;
 * - outside the window, or after unfollowing: 45015; over the count: 45047.
 *
 * Every push the emulator makes goes through {@link EmulatorUsers.notePush}, so a scan, `sendText` or
 * `push` opens the window and a `subscribe` / `unsubscribe` changes who follows, as on WeChat. The
 * demo user follows from the start (the page's "already follows" box is checked by default).
 *
 * @module
 */

/** The window a message from the user opens, and how many messages it allows. */
const MESSAGE_WINDOW = { ms: 48 * 3_600_000, count: 5 } as const
/** The window a scan, follow or menu click opens. */
const EVENT_WINDOW = { ms: 60_000, count: 3 } as const
/** The events that open the short window. */
const WINDOW_EVENTS: ReadonlySet<string> = new Set(['subscribe', 'scan', 'click'])

interface Interaction {
  at: number
  window: { ms: number; count: number }
  /** Customer-service messages sent since. */
  sent: number
}

/** Whether a customer-service message may be sent now, with WeChat's errcode when not. */
export type WindowCheck = { ok: true } | { ok: false; errcode: 45015 | 45047; errmsg: string }

/** The users of one emulated account. */
export class EmulatorUsers {
  readonly #known = new Set<string>()
  readonly #followers = new Set<string>()
  readonly #refusing = new Set<string>()
  readonly #interactions = new Map<string, Interaction>()

  constructor(demoOpenid: string) {
    this.#known.add(demoOpenid)
    this.#followers.add(demoOpenid)
  }

  /** Whether `openid` is a user of this account (it scanned, wrote, confirmed, or was set up): else 40003. */
  isKnown(openid: string): boolean {
    return this.#known.has(openid)
  }

  /** Makes `openid` a user of this account (a confirmation on the subscribe page, say). */
  know(openid: string): void {
    this.#known.add(openid)
  }

  follows(openid: string): boolean {
    return this.#followers.has(openid)
  }

  refusesMessages(openid: string): boolean {
    return this.#refusing.has(openid)
  }

  /** `setUser`: changes who follows and who refused the account's messages. */
  set(openid: string, settings: { follows?: boolean | undefined; refusesMessages?: boolean | undefined }): void {
    this.#known.add(openid)
    if (settings.follows === true) this.#followers.add(openid)
    if (settings.follows === false) this.#unfollow(openid)
    if (settings.refusesMessages === true) this.#refusing.add(openid)
    if (settings.refusesMessages === false) this.#refusing.delete(openid)
  }

  /** What a push tells about its sender: it is a user; it followed, unfollowed, or interacted. */
  notePush(fields: Readonly<Record<string, string>>, at: number): void {
    const openid = fields.FromUserName
    if (openid === undefined || openid === '') return
    this.#known.add(openid)
    if (fields.MsgType !== 'event') {
      this.#interactions.set(openid, { at, window: MESSAGE_WINDOW, sent: 0 })
      return
    }
    const event = (fields.Event ?? '').toLowerCase()
    if (event === 'unsubscribe') return this.#unfollow(openid)
    if (event === 'subscribe' || event === 'scan') this.#followers.add(openid)
    if (WINDOW_EVENTS.has(event)) this.#interactions.set(openid, { at, window: EVENT_WINDOW, sent: 0 })
  }

  /** Whether a customer-service message to `openid` is allowed at `now`. */
  checkWindow(openid: string, now: number): WindowCheck {
    const last = this.#interactions.get(openid)
    if (last === undefined || !this.#followers.has(openid) || now - last.at >= last.window.ms) {
      return { ok: false, errcode: 45015, errmsg: 'response out of time limit or subscription is canceled' }
    }
    if (last.sent >= last.window.count) return { ok: false, errcode: 45047, errmsg: 'out of response count limit' }
    return { ok: true }
  }

  /** Counts a customer-service message sent to `openid` against its window. */
  countCustom(openid: string): void {
    const last = this.#interactions.get(openid)
    if (last !== undefined) last.sent++
  }

  #unfollow(openid: string): void {
    this.#followers.delete(openid)
    // Unfollowing closes the window too (WeChat answers 45015 "… or subscription is canceled").
    this.#interactions.delete(openid)
  }
}
