/**
 * Choosing how to wait (docs/client.md, "Transports"): the event stream (B-wait-3), the long poll
 * (B-wait-2), the plain poll. Pure decisions; the waiting itself is in `wait-scene.ts`.
 *
 * @module
 */
import type { Transport, TransportOption } from './types'

/** With `'auto'`, a stream that delivers no event within this time is taken for a buffering proxy. */
export const FIRST_EVENT_TIMEOUT_MS = 5000

/** The long poll's `wait`: below the 30 s that the server (and many proxies) allow. */
export const LONG_POLL_SECONDS = 25

/** The plain poll's default interval. */
export const DEFAULT_POLL_INTERVAL_MS = 2000

/** The transport a wait starts with. */
export function firstTransport(option: TransportOption): Transport {
  return option === 'auto' ? 'events' : option
}

/** The transport to fall back to from `current`, or undefined when there is none (a forced transport, or the poll). */
export function fallbackTransport(option: TransportOption, current: Transport): Transport | undefined {
  if (option !== 'auto') return undefined
  if (current === 'events') return 'long-poll'
  if (current === 'long-poll') return 'poll'
  return undefined
}

/** What an answer to `GET events` means for the client. */
export type StreamVerdict =
  /** A stream to read. */
  | 'stream'
  /** 204: the scene has already ended (the server says so to a reconnect); ask its status once. */
  | 'ended'
  /** 429: wait for `Retry-After`. */
  | 'rate_limited'
  /** Anything else: a proxy or server that will not stream (fall back, or fail when forced). */
  | 'refused'

/** Classifies an answer to `GET events` by its status and `content-type`. */
export function streamVerdict(status: number, contentType: string | null): StreamVerdict {
  if (status === 204) return 'ended'
  if (status === 429) return 'rate_limited'
  if (status === 200 && /^\s*text\/event-stream\s*(;|$)/i.test(contentType ?? '')) return 'stream'
  return 'refused'
}

/** The statuses the server sends while a scene still waits for its scan. */
const WAITING = new Set(['pending', 'scanned'])

/**
 * Whether a status ends the wait. A sign-in ends on anything but `pending`/`scanned`; a wait for a
 * payment also waits through `need_purchase` (the server keeps the stream open while the order is,
 * B-order-7), until `needPurchaseIsFinal` says the order's chance has gone.
 */
export function endsWait(status: string, purpose: 'sign-in' | 'payment', needPurchaseIsFinal = false): boolean {
  if (WAITING.has(status)) return false
  if (purpose === 'payment' && status === 'need_purchase') return needPurchaseIsFinal
  return true
}
