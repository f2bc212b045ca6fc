/**
 * Waiting by the event stream (`GET events?scene=…`, B-wait-3), read from a `fetch` body. The stream
 * is never reopened after a final status: the reader is cancelled the moment one arrives. It is
 * reopened (with backoff, a bounded number of times) only when it breaks before a final status.
 *
 * @module
 */
import { linkedController, sleep, type LinkedController } from './abortable'
import { backoffDelay, mayRetry } from './backoff'
import { abortedError, ScanAuthClientError } from './errors'
import { discard, httpError, send } from './http'
import { SseParser } from './sse-parser'
import { endsWait, FIRST_EVENT_TIMEOUT_MS, streamVerdict } from './transport'
import { pollOnce } from './wait-polls'
import { sceneHeaders, sceneQuery, type WaitInput, type WaitOutcome } from './wait-context'
import { readStatus, type StatusBody } from './wire'

/** A stream that lived this long before breaking counts as having worked: its reconnect starts the backoff afresh. */
const HEALTHY_STREAM_MS = 30_000

/** What reading one stream came to. */
type ReadOutcome =
  | { kind: 'final'; status: StatusBody }
  /** No event within {@link FIRST_EVENT_TIMEOUT_MS} (`'auto'` only): a proxy holds the stream back. */
  | { kind: 'silent' }
  /** The stream ended or broke before a final status. */
  | { kind: 'broken'; error: ScanAuthClientError }

/**
 * The silence watchdog of one attempt (`'auto'` only): armed before the request is sent, so a proxy
 * that holds back the response headers is given up on as surely as one that holds back the events.
 */
interface Watchdog {
  /** Whether it fired: nothing came within {@link FIRST_EVENT_TIMEOUT_MS}. */
  readonly fired: boolean
  /** The first event came: stand down. */
  clear(): void
}

function armWatchdog(input: WaitInput, attempt: LinkedController): Watchdog {
  if (input.transports.option !== 'auto') return { fired: false, clear: () => {} }
  let fired = false
  const timer = setTimeout(() => {
    fired = true
    attempt.abort()
  }, FIRST_EVENT_TIMEOUT_MS)
  return {
    get fired() {
      return fired
    },
    clear: () => clearTimeout(timer),
  }
}

/** The `{detail}` of an `event: error` (its data is JSON like an error answer), or the data as it is. */
function errorDetail(data: string): string {
  try {
    const body: unknown = JSON.parse(data)
    const detail = typeof body === 'object' && body !== null ? (body as { detail?: unknown }).detail : undefined
    return typeof detail === 'string' ? detail : data
  } catch {
    return data
  }
}

/** Reads one open stream until a final status, silence, or its end. */
async function readStream(input: WaitInput, body: ReadableStream<Uint8Array>, attempt: LinkedController, watchdog: Watchdog): Promise<ReadOutcome> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parser = new SseParser()
  let last: StatusBody | undefined
  // Aborting the attempt (silence, the caller) cancels the read in flight.
  const onAbort = () => void reader.cancel().catch(() => {})
  attempt.signal.addEventListener('abort', onAbort, { once: true })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (watchdog.fired) return { kind: 'silent' }
      if (input.signal.aborted) throw abortedError(input.signal.reason)
      if (done) {
        // The server ends the stream after a final status only: for a payment, a `need_purchase` it
        // ended on means no order of the scene is open any more (B-order-7).
        if (last?.status === 'need_purchase' && input.purpose === 'payment') return { kind: 'final', status: last }
        return { kind: 'broken', error: new ScanAuthClientError('network', 'The event stream ended before a final status') }
      }
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        if (event.event === 'error') {
          return { kind: 'broken', error: new ScanAuthClientError('http', 'The event stream failed at the server', { status: 500, detail: errorDetail(event.data) }) }
        }
        if (event.event !== 'status') continue
        watchdog.clear()
        let status: StatusBody
        try {
          status = readStatus(JSON.parse(event.data))
        } catch {
          return { kind: 'broken', error: new ScanAuthClientError('http', 'The event stream sent a status that is not what scanauth sends') }
        }
        last = status
        input.onStatus(status, 'events')
        if (endsWait(status.status, input.purpose)) return { kind: 'final', status }
      }
    }
  } catch (error) {
    if (watchdog.fired) return { kind: 'silent' }
    if (input.signal.aborted) throw abortedError(input.signal.reason)
    return { kind: 'broken', error: new ScanAuthClientError('network', 'The event stream broke', { cause: error }) }
  } finally {
    watchdog.clear()
    attempt.signal.removeEventListener('abort', onAbort)
    // Done with this stream, whatever happened: close it (a final status, silence, an abort).
    reader.cancel().catch(() => {})
  }
}

/**
 * The event stream: opened, read to a final status, reopened with backoff when it breaks. A refusal
 * (a status other than 200/204/429, another content type) or silence falls back.
 */
export async function waitByEvents(input: WaitInput): Promise<WaitOutcome> {
  let failures = 0
  for (;;) {
    const attempt = linkedController(input.signal)
    const watchdog = armWatchdog(input, attempt)
    const openedAt = Date.now()
    let outcome: ReadOutcome
    try {
      let response: Response
      try {
        response = await send(input.http, `events?${sceneQuery(input.sceneStr)}`, { signal: attempt.signal, headers: sceneHeaders(input), retryNetwork: true })
      } catch (error) {
        if (input.signal.aborted) throw abortedError(input.signal.reason)
        // Held back without headers, or refused at the network level (a proxy that resets streams):
        // with 'auto' the long poll is tried; a forced 'events' has nothing to fall back to.
        if (watchdog.fired) return { kind: 'fallback', error: new ScanAuthClientError('network', `The event stream answered nothing within ${FIRST_EVENT_TIMEOUT_MS / 1000} s`) }
        if (input.transports.option === 'auto' && error instanceof ScanAuthClientError && error.code === 'network') return { kind: 'fallback', error }
        throw error
      }
      const verdict = streamVerdict(response.status, response.headers.get('content-type'))
      if (verdict === 'ended') {
        discard(response)
        const status = await pollOnce(input)
        input.onStatus(status, 'events')
        if (endsWait(status.status, input.purpose, true)) return { kind: 'final', status }
        return { kind: 'fallback', error: new ScanAuthClientError('http', 'events answered 204 for a scene that has not ended', { status: 204 }) }
      }
      if (verdict !== 'stream' || response.body === null) {
        // A 200 of another type may be a body that never ends (a proxy's own stream): never read it.
        if (response.status === 200) {
          discard(response)
          return { kind: 'fallback', error: new ScanAuthClientError('http', `events answered ${response.headers.get('content-type') ?? 'no content type'}, not an event stream`, { status: 200 }) }
        }
        return { kind: 'fallback', error: await httpError(response, 'events') }
      }
      outcome = await readStream(input, response.body, attempt, watchdog)
    } finally {
      watchdog.clear()
      attempt.abort()
      attempt.dispose()
    }
    if (outcome.kind === 'final') return outcome
    if (outcome.kind === 'silent') {
      return { kind: 'fallback', error: new ScanAuthClientError('network', `The event stream delivered no event within ${FIRST_EVENT_TIMEOUT_MS / 1000} s`) }
    }
    failures = Date.now() - openedAt >= HEALTHY_STREAM_MS ? 1 : failures + 1
    if (!mayRetry(failures, input.http.backoff)) return { kind: 'fallback', error: outcome.error }
    await sleep(backoffDelay(failures, input.http.backoff), input.signal)
  }
}
