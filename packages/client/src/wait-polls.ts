/**
 * Waiting by the long poll (`GET status?scene=…&wait=25`, B-wait-2) and by the plain poll
 * (`GET status?scene=…` every `pollIntervalMs`).
 *
 * @module
 */
import { sleep } from './abortable'
import { backoffDelay, mayRetry } from './backoff'
import { discard, httpError, readJson, send } from './http'
import { endsWait, LONG_POLL_SECONDS } from './transport'
import { pastDeadline, sceneHeaders, sceneQuery, UNKNOWN_SCENE, type WaitInput, type WaitOutcome } from './wait-context'
import { readStatus, type StatusBody } from './wire'

/** Server errors a poll retries with backoff (the store or an upstream briefly failing). */
const TRANSIENT = new Set([500, 502, 503, 504])

/** A long poll answered sooner than this without an end is paced like the plain poll. */
const QUICK_ANSWER_MS = 1000

/** The answer of one status request: a status, or an error answer the caller decides about. */
type PollAnswer = { kind: 'status'; status: StatusBody } | { kind: 'error'; response: Response }

async function askStatus(input: WaitInput, wait: number | undefined): Promise<PollAnswer> {
  const route = `status?${sceneQuery(input.sceneStr)}${wait === undefined ? '' : `&wait=${wait}`}`
  const response = await send(input.http, route, { signal: input.signal, headers: sceneHeaders(input), retryNetwork: true })
  if (response.status === 404) {
    discard(response)
    return { kind: 'status', status: UNKNOWN_SCENE }
  }
  if (response.status !== 200) return { kind: 'error', response }
  return { kind: 'status', status: readStatus(await readJson(response, route)) }
}

/** Whether `status` ends this wait (a payment's `need_purchase` once its deadline has passed). */
function ends(input: WaitInput, status: StatusBody): boolean {
  return endsWait(status.status, input.purpose, pastDeadline(input))
}

/** One plain poll (after a 204 from the event stream: the scene has ended, this says how). */
export async function pollOnce(input: WaitInput): Promise<StatusBody> {
  const answer = await askStatus(input, undefined)
  if (answer.kind === 'error') throw await httpError(answer.response, 'status')
  return answer.status
}

/**
 * The long poll, in a loop. Any error answer but 404 and 429 falls back (the plain poll may get
 * through where a long-held request does not).
 */
export async function waitByLongPoll(input: WaitInput): Promise<WaitOutcome> {
  for (;;) {
    const started = Date.now()
    const answer = await askStatus(input, LONG_POLL_SECONDS)
    if (answer.kind === 'error') return { kind: 'fallback', error: await httpError(answer.response, 'status') }
    input.onStatus(answer.status, 'long-poll')
    if (ends(input, answer.status)) return { kind: 'final', status: answer.status }
    // Answered at once without an end (a server that ignores `wait`, a payment whose order is gone):
    // pace the loop like the plain poll rather than spin.
    if (Date.now() - started < QUICK_ANSWER_MS) await sleep(input.pollIntervalMs, input.signal)
  }
}

/** The plain poll, in a loop; 5xx answers are retried with backoff a bounded number of times. */
export async function waitByPoll(input: WaitInput): Promise<WaitOutcome> {
  let failures = 0
  for (;;) {
    const answer = await askStatus(input, undefined)
    if (answer.kind === 'error') {
      failures++
      if (!TRANSIENT.has(answer.response.status) || !mayRetry(failures, input.http.backoff)) {
        return { kind: 'fallback', error: await httpError(answer.response, 'status') }
      }
      discard(answer.response)
      await sleep(Math.max(input.pollIntervalMs, backoffDelay(failures, input.http.backoff)), input.signal)
      continue
    }
    failures = 0
    input.onStatus(answer.status, 'poll')
    if (ends(input, answer.status)) return { kind: 'final', status: answer.status }
    await sleep(input.pollIntervalMs, input.signal)
  }
}
