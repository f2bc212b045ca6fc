/**
 * The event stream of `GET {base}/events?scene=…` (docs/behaviour.md B-wait-3): Server-Sent Events
 * with an `event: status` whose data is the poll's JSON, sent on connect and on each change, a
 * heartbeat comment while nothing changes, and the end of the stream after a final status.
 *
 * @module
 */
import type { ScanAuth, StatusResult } from '../api'
import { MAX_WAIT_MS } from '../scene-waiters'
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
 * aborts (nothing more is read), or after an `error` event. One wait serves the whole stream (it is
 * renewed only after {@link MAX_WAIT_MS}), and heartbeats come from a timer beside it, so an idle
 * stream costs the store about two reads per ten minutes, not two per heartbeat.
 */
export async function* statusEvents(input: StatusEventsInput): AsyncGenerator<string, void, undefined> {
  const { auth, sceneStr, signal } = input
  yield statusEvent(input.first, input.purchaseUrl)
  let current = input.first
  let change: Promise<StatusResult> | null = null
  while (current.status === 'pending' && !isAborted(signal)) {
    change ??= auth.waitForStatus(sceneStr, { timeoutMs: MAX_WAIT_MS, signal })
    let next: StatusResult | typeof HEARTBEAT_DUE
    try {
      next = await beforeHeartbeat(change, input.heartbeatMs)
    } catch (error) {
      // The client went away: nothing to say, and nobody to say it to.
      if (isAborted(signal)) return
      input.onError?.(error)
      yield ERROR_EVENT
      return
    }
    if (next === HEARTBEAT_DUE) {
      yield HEARTBEAT
      continue
    }
    // A wait that ran out answers pending: start another; anything else is the final event.
    change = null
    if (next.status !== 'pending') yield statusEvent(next, input.purchaseUrl)
    current = next
  }
}

/** What {@link beforeHeartbeat} answers when the heartbeat came first. */
const HEARTBEAT_DUE = Symbol('heartbeat due')

/** The change, or {@link HEARTBEAT_DUE} when `heartbeatMs` passes first (the timer is always cleared). */
async function beforeHeartbeat(change: Promise<StatusResult>, heartbeatMs: number): Promise<StatusResult | typeof HEARTBEAT_DUE> {
  let timer: NodeJS.Timeout | undefined
  const due = new Promise<typeof HEARTBEAT_DUE>((resolve) => {
    timer = setTimeout(() => resolve(HEARTBEAT_DUE), heartbeatMs)
  })
  try {
    return await Promise.race([change, due])
  } finally {
    clearTimeout(timer)
  }
}

/** Whether the client went away (a function, so each call reads the signal afresh). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}
