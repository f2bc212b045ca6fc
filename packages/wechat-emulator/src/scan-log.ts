/**
 * The scans the emulator made, kept so its page can list them (scene, openid, time, the callback's
 * answer) whoever asked for the scan: the page's own clicks, `emulator.scan()` from a test, or an app
 * that drives the emulator (the examples' "Scan with the emulated phone").
 *
 * @module
 */
import type { EmulatorPushResult, EmulatorScan } from './types'

/** How many scans are kept: enough for a page to show a session's history, bounded for a long-running dev server. */
export const SCAN_LOG_LIMIT = 200

/** The last {@link SCAN_LOG_LIMIT} scans, newest first (by the time each was made). */
export class ScanLog {
  readonly #entries: EmulatorScan[] = []

  /** Records a scan that was pushed, with what came back. */
  add(scan: { at: number; sceneStr: string; openid: string; ticket: string | null }, result: EmulatorPushResult): EmulatorScan {
    const entry: EmulatorScan = {
      at: scan.at,
      sceneStr: scan.sceneStr,
      openid: scan.openid,
      ticket: scan.ticket,
      event: result.event.Event === 'subscribe' ? 'subscribe' : 'SCAN',
      attempts: result.attempts,
      status: result.status,
      reply: result.reply?.Content ?? null,
      replyError: result.replyError,
    }
    // Newest scan first by when it was made, not by when its push ended: a push can take seconds
    // (a slow callback, three deliveries), and a scan made after it must still be listed above it.
    // Of scans made at the same time, the one recorded last comes first.
    const at = this.#entries.findIndex((kept) => kept.at <= entry.at)
    this.#entries.splice(at === -1 ? this.#entries.length : at, 0, entry)
    if (this.#entries.length > SCAN_LOG_LIMIT) this.#entries.length = SCAN_LOG_LIMIT
    return entry
  }

  /** Copies of the kept scans, newest first. */
  newestFirst(): EmulatorScan[] {
    return this.#entries.map((entry) => ({ ...entry }))
  }
}
