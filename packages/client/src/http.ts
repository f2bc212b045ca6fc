/**
 * The client's requests: one `fetch` per attempt, each with the call's signal; 429 answers waited out
 * per `Retry-After` up to a bound; network failures retried with jittered backoff up to a bound.
 *
 * @module
 */
import { backoffDelay, mayRetry, type BackoffPolicy } from './backoff'
import { sleep } from './abortable'
import { abortedError, ScanAuthClientError } from './errors'
import { parseRetryAfter } from './retry-after'

/** The `fetch` the client calls: the global one, or one the app passes (cookies, a proxy agent, a test counter). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/** How the client sends and retries. */
export interface HttpSettings {
  /** The app's mount of the scanauth routes, without a trailing slash. */
  baseUrl: string
  /** The fetch to call. */
  fetch: FetchLike
  /** 429s asking for a longer wait than this reject with `rate_limited` at once. */
  maxRateLimitWaitSeconds: number
  /** Retries after network failures. */
  backoff: BackoffPolicy
}

/** One request. */
export interface RequestSpec {
  /** Default GET. */
  method?: 'GET' | 'POST'
  /** A JSON body. */
  json?: unknown
  /** A session token, sent as `Authorization: Bearer`. */
  token?: string
  /** More request headers (lower-case names), e.g. a scene's poll secret. */
  headers?: Readonly<Record<string, string>>
  /** Aborts the request (and any wait between attempts). */
  signal: AbortSignal
  /** Whether a network failure may be retried (not for a request that must not run twice, like `consume`). */
  retryNetwork: boolean
}

/** How many 429s in a row one request waits out before rejecting with `rate_limited`. */
const MAX_RATE_LIMIT_WAITS = 3

/** The `{detail}` of an error answer, when it has one; the body is consumed either way. */
async function detailOf(response: Response): Promise<string | undefined> {
  try {
    const body: unknown = await response.json()
    return typeof body === 'object' && body !== null && typeof (body as { detail?: unknown }).detail === 'string' ? (body as { detail: string }).detail : undefined
  } catch {
    return undefined
  }
}

/** The `http` error for an answer the caller did not expect; reads (and so releases) its body. */
export async function httpError(response: Response, route: string): Promise<ScanAuthClientError> {
  const detail = await detailOf(response)
  return new ScanAuthClientError('http', `${route} answered ${response.status}${detail === undefined ? '' : `: ${detail}`}`, { status: response.status, detail })
}

/** Releases a body the client will not read, so the connection is not held. */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => {})
}

/** Sends `route` (relative to the base URL) and answers any status but 429; see the module comment. */
export async function send(settings: HttpSettings, route: string, spec: RequestSpec): Promise<Response> {
  const headers: Record<string, string> = { accept: spec.method === 'POST' ? 'application/json' : 'application/json, text/event-stream' }
  if (spec.json !== undefined) headers['content-type'] = 'application/json'
  if (spec.token !== undefined) headers.authorization = `Bearer ${spec.token}`
  if (spec.headers !== undefined) Object.assign(headers, spec.headers)
  const init: RequestInit = { method: spec.method ?? 'GET', headers, signal: spec.signal }
  if (spec.json !== undefined) init.body = JSON.stringify(spec.json)
  const url = `${settings.baseUrl}/${route}`
  let failures = 0
  let rateLimited = 0
  for (;;) {
    if (spec.signal.aborted) throw abortedError(spec.signal.reason)
    let response: Response
    try {
      response = await settings.fetch(url, init)
    } catch (error) {
      if (spec.signal.aborted) throw abortedError(spec.signal.reason)
      failures++
      if (!spec.retryNetwork || !mayRetry(failures, settings.backoff)) {
        throw new ScanAuthClientError('network', `${route}: the server could not be reached (${failures} attempt${failures === 1 ? '' : 's'})`, { cause: error })
      }
      await sleep(backoffDelay(failures, settings.backoff), spec.signal)
      continue
    }
    if (response.status !== 429) return response
    const seconds = parseRetryAfter(response.headers.get('retry-after'))
    const detail = await detailOf(response)
    rateLimited++
    if (seconds > settings.maxRateLimitWaitSeconds || rateLimited > MAX_RATE_LIMIT_WAITS) {
      throw new ScanAuthClientError('rate_limited', `${route}: rate limited; try again in ${seconds} s`, { status: 429, detail, retryAfterSeconds: seconds })
    }
    await sleep(seconds * 1000, spec.signal)
  }
}

/** Sends `route` and answers its JSON body; any status but 200 is an `http` error (429 as in {@link send}). */
export async function sendForJson(settings: HttpSettings, route: string, spec: RequestSpec): Promise<unknown> {
  const response = await send(settings, route, spec)
  if (response.status !== 200) throw await httpError(response, route.split('?')[0] ?? route)
  return readJson(response, route)
}

/** The JSON body of an answer; an unreadable one is an `http` error. */
export async function readJson(response: Response, route: string): Promise<unknown> {
  try {
    return await response.json()
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw abortedError(error)
    throw new ScanAuthClientError('http', `${route.split('?')[0]} answered ${response.status} with a body that is not JSON`, { status: response.status, cause: error })
  }
}
