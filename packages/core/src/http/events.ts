/**
 * The event stream of `GET {base}/events?scene=…` (docs/behaviour.md B-wait-3): Server-Sent Events
 * with an `event: status` whose data is the poll's JSON, sent on connect and on each change, a
 * heartbeat comment while nothing changes, and the end of the stream after a final status.
 *
 * @module
 */
import type { ScanAuth, StatusResult } from '../api'
import { statusBody } from './wire'

/** Response headers of an event stream. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies that buffer (nginx) would hold the events back until the stream ends.
  'x-accel-buffering': 'no',
}

/** The default time between heartbeat comments: 15 seconds. */
export const DEFAULT_HEARTBEAT_MS = 15_000

/** A heartbeat: an SSE comment line, ignored by `EventSource`, that keeps proxies from closing an idle stream. */
export const HEARTBEAT = ': heartbeat\n\n'

/** One `status` event carrying the poll's wire body. */
export function statusEvent(status: StatusResult, purchaseUrl?: string): string {
  return `event: status\ndata: ${JSON.stringify(statusBody(status, purchaseUrl))}\n\n`
}

/** A final `error` event: the stream could not go on (the store failed); the body reveals nothing. */
export const ERROR_EVENT = `event: error\ndata: ${JSON.stringify({ detail: 'Internal error' })}\n\n`

/** What {@link statusEvents} needs. */
export interface StatusEventsInput {
  auth: Pick<ScanAuth, 'waitForStatus'>
  sceneStr: string
  /** The answer read before the stream started (so that an unknown scene is a plain 404). */
  first: StatusResult
  /** Ends the stream when the client goes away. */
  signal?: AbortSignal
  heartbeatMs: number
  purchaseUrl?: string
  /** Told an unexpected failure before the stream ends with an `error` event. */
  onError?(error: unknown): void
}

/**
 * The chunks of the stream. It ends after a final status (anything but `pending`), when `signal`
 * aborts (nothing more is read), or after an `error` event.
 */
export async function* statusEvents(input: StatusEventsInput): AsyncGenerator<string, void, undefined> {
  const { auth, sceneStr, signal } = input
  yield statusEvent(input.first, input.purchaseUrl)
  let current = input.first
  while (current.status === 'pending' && !isAborted(signal)) {
    let next: StatusResult
    try {
      next = await auth.waitForStatus(sceneStr, { timeoutMs: input.heartbeatMs, signal })
    } catch (error) {
      // The client went away: nothing to say, and nobody to say it to.
      if (isAborted(signal)) return
      input.onError?.(error)
      yield ERROR_EVENT
      return
    }
    yield next.status === 'pending' ? HEARTBEAT : statusEvent(next, input.purchaseUrl)
    current = next
  }
}

/** Whether the client went away (a function, so each call reads the signal afresh). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}
