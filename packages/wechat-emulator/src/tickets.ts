/**
 * The QR codes the emulator creates, and their images.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import QRCode from 'qrcode'
import type { EmulatorTicket } from './types'

interface StoredTicket {
  ticket: string
  code: string
  sceneStr: string
  expiresAt: number | null
}

/** The codes of one emulated account, by ticket and by the short code in their URL. */
export class EmulatorTickets {
  readonly #byTicket = new Map<string, StoredTicket>()
  readonly #byCode = new Map<string, StoredTicket>()
  readonly #baseUrl: () => string
  readonly #now: () => number

  constructor(options: { baseUrl: () => string; now: () => number }) {
    this.#baseUrl = options.baseUrl
    this.#now = options.now
  }

  /** Creates a code for `sceneStr`, temporary (`expireSeconds`) or permanent (null). */
  create(sceneStr: string, expireSeconds: number | null): EmulatorTicket {
    // Like WeChat's, tickets are base64 with "+", "/" and a "==" tail, so a client that forgets to
    // URL-encode them breaks here as it would in production. 52 bytes always end in "==".
    const ticket = `gQH${randomBytes(52).toString('base64')}`
    const code = randomBytes(12).toString('base64url')
    const stored: StoredTicket = { ticket, code, sceneStr, expiresAt: expireSeconds === null ? null : this.#now() + expireSeconds * 1000 }
    this.#byTicket.set(ticket, stored)
    this.#byCode.set(code, stored)
    return this.#view(stored)
  }

  /** A code by ticket, or undefined when unknown. */
  byTicket(ticket: string): EmulatorTicket | undefined {
    const stored = this.#byTicket.get(ticket)
    return stored && this.#view(stored)
  }

  /** A code by the short code of its URL (`/q/<code>`). */
  byCode(code: string): EmulatorTicket | undefined {
    const stored = this.#byCode.get(code)
    return stored && this.#view(stored)
  }

  /** The newest live code for a scene. */
  latestLiveFor(sceneStr: string): EmulatorTicket | undefined {
    let found: EmulatorTicket | undefined
    for (const stored of this.#byTicket.values()) {
      const view = this.#view(stored)
      if (stored.sceneStr === sceneStr && view.live) found = view
    }
    return found
  }

  /** Every code, oldest first. */
  all(): EmulatorTicket[] {
    return [...this.#byTicket.values()].map((stored) => this.#view(stored))
  }

  #view(stored: StoredTicket): EmulatorTicket {
    const base = this.#baseUrl()
    return {
      ticket: stored.ticket,
      sceneStr: stored.sceneStr,
      url: `${base}/q/${stored.code}`,
      imageUrl: `${base}/cgi-bin/showqrcode?ticket=${encodeURIComponent(stored.ticket)}`,
      expiresAt: stored.expiresAt,
      live: stored.expiresAt === null || this.#now() < stored.expiresAt,
    }
  }
}

/** A PNG of a QR code that decodes to `text`. */
export function qrPng(text: string): Promise<Buffer> {
  return QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 300 })
}
