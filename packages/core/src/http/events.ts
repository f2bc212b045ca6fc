/**
 * The event stream of `GET {base}/events?scene=…` (docs/behaviour.md B-wait-3): Server-Sent Events
 * with an `event: status` whose data is the poll's JSON, sent on connect and on each change, a
 * heartbeat comment while nothing changes, and the end of the stream after a final status. The
 * first event also carries `retry:`, and each `status` event an `id:` (B-wait-5).
 *
 * @module
 */
import type { ScanAuth, StatusResult } from '../service/api'
import { ScanAuthError } from '../errors'
import { MAX_WAIT_MS } from '../service/scene-waiters'
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

/**
 * The reconnection delay a stream asks of `EventSource` (its `retry:` field), in milliseconds: 3 s,
 * what browsers mostly use anyway, now stated so that every client waits the same (B-wait-5).
 */
export const RECONNECT_DELAY_MS = 3000

/** The `retry:` line sent once, at the start of each stream (in the first event's block). */
const RETRY_FIELD = `retry: ${RECONNECT_DELAY_MS}\n`

/**
 * One `status` event carrying the poll's wire body. Its `id:` is the status itself (`pending`,
 * `need_purchase`, `authorized`, `expired`; `scanned`, `denied` with `confirm: 'link'`): a stream never sends the same status twice in a row,
 * and a reconnecting `EventSource` sends it back as `Last-Event-ID`, the last status the client saw
 * (B-wait-5). The `id` line comes first, so `event: status\ndata: …` stays one run of text.
 */
export function statusEvent(status: StatusResult, purchaseUrl?: string): string {
  return `id: ${status.status}\nevent: status\ndata: ${JSON.stringify(statusBody(status, purchaseUrl))}\n\n`
}

/** A final `error` event: the stream could not go on (the store failed); the body reveals nothing. */
export const ERROR_EVENT = `event: error\ndata: ${JSON.stringify({ detail: 'Internal error' })}\n\n`

/** What {@link statusEvents} needs. */
export interface StatusEventsInput {
  auth: Pick<ScanAuth, 'waitForStatus' | 'openOrderOfScene' | 'getStatus'>
  sceneStr: string
  /** The answer read before the stream started (so that an unknown scene is a plain 404). */
  first: StatusResult
  /** The scene's poll secret as the client presented it (B-secret-2). */
  pollSecret?: string
  /** Ends the stream when the client goes away. */
  signal?: AbortSignal
  heartbeatMs: number
  purchaseUrl?: string
  /** Told an unexpected failure before the stream ends with an `error` event. */
  onError?(error: unknown): void
}

/** Where a stream stands after a status: the status to tell, and whether to keep waiting. */
export interface StreamStep {
  /** The status the device should have last been told (read again when an order just stopped waiting). */
  status: StatusResult
  /** Whether the stream goes on (B-wait-3, B-order-7); when not, the scene has ended for the device. */
  goesOn: boolean
}

/**
 * Whether the stream goes on after `status`: while pending, and while `need_purchase` has an open
 * order of the scene that the device waits to see paid (B-order-7). A `need_purchase` with no open
 * order is read again before it counts as final: the order may have been paid between the read of
 * the status and the read of the order (the grant commits before the order is marked paid), and
 * then the fresh read answers `authorized` (B-wait-5).
 */
export async function nextStep(auth: StatusEventsInput['auth'], sceneStr: string, status: StatusResult, pollSecret?: string): Promise<StreamStep> {
  // `scanned` waits for the scanner's decision on the phone (B-confirm-9).
  if (status.status === 'pending' || status.status === 'scanned') return { status, goesOn: true }
  if (status.status !== 'need_purchase') return { status, goesOn: false }
  if ((await auth.openOrderOfScene(sceneStr)) !== null) return { status, goesOn: true }
  return { status: await auth.getStatus(sceneStr, { pollSecret }), goesOn: false }
}

/**
 * The chunks of the stream. It ends after a final status (anything but `pending`, and
 * `need_purchase` once no open order of the scene is waited on), when `signal`
 * aborts (nothing more is read), or after an `error` event. One wait serves the whole stream (it is
 * renewed only after {@link MAX_WAIT_MS}), and heartbeats come from a timer beside it, so an idle
 * stream costs the store about two reads per ten minutes, not two per heartbeat.
 */
export async function* statusEvents(input: StatusEventsInput): AsyncGenerator<string, void, undefined> {
  const { auth, sceneStr, signal, pollSecret } = input
  yield RETRY_FIELD + statusEvent(input.first, input.purchaseUrl)
  let current = input.first
  let change: Promise<StatusResult> | null = null
  let more: boolean
  try {
    const step = await nextStep(auth, sceneStr, current, pollSecret)
    if (step.status.status !== current.status) yield statusEvent(step.status, input.purchaseUrl)
    ;({ status: current, goesOn: more } = step)
  } catch (error) {
    yield failure(error, input)
    return
  }
  while (more && !isAborted(signal)) {
    // `seen`: a `scanned` already sent is not news, its decision is (B-confirm-10).
    change ??= auth.waitForStatus(sceneStr, { timeoutMs: MAX_WAIT_MS, signal, pollSecret, seen: current.status })
    let next: StatusResult | typeof HEARTBEAT_DUE
    try {
      next = await beforeHeartbeat(change, input.heartbeatMs)
    } catch (error) {
      // The client went away: nothing to say, and nobody to say it to.
      if (isAborted(signal)) return
      yield failure(error, input)
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
    } else if (current.status === 'pending' || current.status === 'scanned') continue
    // A change, or a wait on an order that ended without one (the order's deadline passed): ask again.
    try {
      const step = await nextStep(auth, sceneStr, current, pollSecret)
      if (step.status.status !== current.status) yield statusEvent(step.status, input.purchaseUrl)
      ;({ status: current, goesOn: more } = step)
    } catch (error) {
      if (isAborted(signal)) return
      yield failure(error, input)
      return
    }
  }
}

/**
 * The final event of a stream that cannot go on: a refusal the client can act on (the poll secret
 * it did not present, B-secret-2) says so; anything else is reported and says nothing.
 */
function failure(error: unknown, input: StatusEventsInput): string {
  if (error instanceof ScanAuthError && error.code === 'poll_secret_required') {
    return `event: error\ndata: ${JSON.stringify({ detail: error.message })}\n\n`
  }
  input.onError?.(error)
  return ERROR_EVENT
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
