/**
 * One JSON call to the WeChat API with a deadline, turned into either the parsed answer or a
 * {@link WechatError} whose message names the cause.
 *
 * @module
 */
import { WechatApiError, WechatHttpError } from './errors'

/** The `fetch` this package uses; the global one by default (Node 20 has it built in). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/** One API call. */
export interface ApiCall {
  /** Absolute URL (may carry secrets in its query: it never appears in an error message). */
  url: string
  /** The path named in error messages, e.g. `cgi-bin/qrcode/create`. */
  endpoint: string
  method: 'GET' | 'POST'
  /** Sent as JSON. */
  body?: unknown
  timeoutMs: number
  fetch: FetchLike
}

/**
 * Performs the call and returns the JSON object WeChat answered.
 *
 * The deadline (`AbortSignal.timeout`) covers the whole exchange, reading the body included, so a
 * server that sends headers and then stalls is cut off too.
 *
 * @throws {@link WechatHttpError} on timeout, network failure, non-2xx status or a non-JSON body
 * @throws {@link WechatApiError} when the answer carries a non-zero `errcode`
 */
export async function callApi(call: ApiCall): Promise<Record<string, unknown>> {
  const { endpoint, timeoutMs } = call
  const init: RequestInit = { method: call.method, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } }
  if (call.body !== undefined) {
    init.body = JSON.stringify(call.body)
    init.headers = { accept: 'application/json', 'content-type': 'application/json; charset=utf-8' }
  }
  let text: string
  let status: number
  try {
    const response = await call.fetch(call.url, init)
    status = response.status
    text = await response.text()
  } catch (error) {
    throw transportError(endpoint, timeoutMs, error)
  }
  if (status < 200 || status > 299) {
    throw new WechatHttpError(endpoint, 'http_status', `WeChat ${endpoint} answered HTTP ${status}${snippet(text)}`, { httpStatus: status })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new WechatHttpError(endpoint, 'bad_response', `WeChat ${endpoint} answered with a body that is not JSON${snippet(text)}`, { httpStatus: status })
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new WechatHttpError(endpoint, 'bad_response', `WeChat ${endpoint} answered with JSON that is not an object`, { httpStatus: status })
  }
  const answer = json as Record<string, unknown>
  const errcode = answer.errcode
  if (errcode !== undefined && errcode !== 0) {
    throw new WechatApiError(endpoint, Number(errcode), typeof answer.errmsg === 'string' ? answer.errmsg : '')
  }
  return answer
}

/** Names why `fetch` threw: our deadline, or the network (with the underlying code, e.g. ECONNREFUSED). */
function transportError(endpoint: string, timeoutMs: number, error: unknown): WechatHttpError {
  const name = (error as { name?: unknown } | null)?.name
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new WechatHttpError(endpoint, 'timeout', `WeChat ${endpoint} timed out after ${timeoutMs} ms`, { cause: error })
  }
  return new WechatHttpError(endpoint, 'network', `WeChat ${endpoint} request failed: ${describeCause(error)}`, { cause: error })
}

/** undici reports "fetch failed" and hides the useful part in `cause`; dig it out. */
function describeCause(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    const text = typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message
    if (text && !parts.includes(text)) parts.push(text)
    current = current.cause
  }
  return parts.length > 0 ? parts.join(': ') : String(error)
}

/** The start of an unexpected body, for the message; short, single-line. */
function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line === '' ? '' : `: ${line.length > 120 ? `${line.slice(0, 120)}…` : line}`
}

/** Joins a base URL and an API path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}
