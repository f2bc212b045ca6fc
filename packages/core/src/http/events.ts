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
  auth: Pick<ScanAuth, 'waitForStatus' | 'openOrderOfScene'>
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
 * Whether the stream goes on after `status`: while pending, and while `need_purchase` has an open
 * order of the scene that the device waits to see paid (B-order-7).
 */
async function goesOn(auth: StatusEventsInput['auth'], sceneStr: string, status: StatusResult): Promise<boolean> {
  if (status.status === 'pending') return true
  return status.status === 'need_purchase' && (await auth.openOrderOfScene(sceneStr)) !== null
}

/**
 * The chunks of the stream. It ends after a final status (anything but `pending`, and
 * `need_purchase` once no open order of the scene is waited on), when `signal`
 * aborts (nothing more is read), or after an `error` event. One wait serves the whole stream (it is
 * renewed only after {@link MAX_WAIT_MS}), and heartbeats come from a timer beside it, so an idle
 * stream costs the store about two reads per ten minutes, not two per heartbeat.
 */
export async function* statusEvents(input: StatusEventsInput): AsyncGenerator<string, void, undefined> {
  const { auth, sceneStr, signal } = input
  yield statusEvent(input.first, input.purchaseUrl)
  let current = input.first
  let change: Promise<StatusResult> | null = null
  let more: boolean
  try {
    more = await goesOn(auth, sceneStr, current)
  } catch (error) {
    input.onError?.(error)
    yield ERROR_EVENT
    return
  }
  while (more && !isAborted(signal)) {
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
    // A wait that ran out answers what the device has already been told: start another. A change
    // is sent; it ends the stream unless the device still waits on it (an order opened meanwhile).
    change = null
    if (next.status !== current.status) {
      yield statusEvent(next, input.purchaseUrl)
      current = next
    } else if (current.status === 'pending') continue
    // A change, or a wait on an order that ended without one (the order's deadline passed): ask again.
    try {
      more = await goesOn(auth, sceneStr, current)
    } catch (error) {
      if (isAborted(signal)) return
      input.onError?.(error)
      yield ERROR_EVENT
      return
    }
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
