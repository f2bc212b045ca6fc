/**
 * One API v3 exchange: the request signed over the exact bytes sent, and the answer believed only
 * after its signature is verified over the exact bytes received. Errors keep what WeChat Pay said
 * (`code`, `message`, `detail` with `sign_information` on a 401), because that is how a merchant
 * debugs a refused signature.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { WechatPayError } from './errors'
import type { VerificationKeySet } from './keys'
import { authorizationHeader, newNonce, requestSignatureMessage, signMessage } from './signature'
import { signedMessageFromHeaders, verifyChecked } from './verify'

/** The `fetch` this package uses; the global one by default (Node 20 has it built in). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/** Everything an exchange needs that does not change between calls. */
export interface ExchangeContext {
  apiBase: string
  mchid: string
  merchantCertSerial: string
  merchantPrivateKey: KeyObject
  verificationKeys: VerificationKeySet
  requestSerial: string | undefined
  fetch: FetchLike
  now: () => number
  timeoutMs: number
  maxSkewSeconds: number
  userAgent: string
}

/** One call. */
export interface ExchangeRequest {
  method: 'GET' | 'POST'
  /** Path and query, e.g. `/v3/pay/transactions/out-trade-no/SA1?mchid=1230000109`, already encoded. */
  path: string
  /** Sent as JSON. */
  body?: unknown
}

/** A verified answer: its status and parsed JSON (undefined for an empty body, e.g. 204). */
export interface ExchangeAnswer {
  status: number
  json: unknown
}

const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * Performs the call. 2xx answers are verified, then parsed; any other status throws `http_error`.
 * The deadline covers the whole exchange, the body included.
 */
export async function exchange(context: ExchangeContext, request: ExchangeRequest): Promise<ExchangeAnswer> {
  const url = `${context.apiBase.replace(/\/+$/, '')}${request.path}`
  const parsed = new URL(url)
  // The canonical URL is what goes on the wire after the base: its path (a base with a path prefix
  // included) and the query exactly as sent.
  const canonicalUrl = `${parsed.pathname}${parsed.search}`
  const bodyText = request.body === undefined ? '' : JSON.stringify(request.body)
  const timestamp = Math.floor(context.now() / 1000)
  const nonce = newNonce()
  const signature = signMessage(requestSignatureMessage({ method: request.method, canonicalUrl, timestamp, nonce, body: bodyText }), context.merchantPrivateKey)
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': context.userAgent,
    authorization: authorizationHeader({ mchid: context.mchid, serialNo: context.merchantCertSerial, nonce, timestamp, signature }),
  }
  if (request.body !== undefined) headers['content-type'] = 'application/json'
  // Asks WeChat Pay to sign the answer with this key (public-key mode answers only when asked).
  if (context.requestSerial !== undefined) headers['wechatpay-serial'] = context.requestSerial
  const endpoint = `${request.method} ${parsed.pathname}`

  let response: Response
  let raw: Uint8Array
  try {
    response = await context.fetch(url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: bodyText }),
      signal: AbortSignal.timeout(context.timeoutMs),
    })
    raw = new Uint8Array(await response.arrayBuffer())
  } catch (error) {
    throw transportError(endpoint, context.timeoutMs, error)
  }
  const requestId = response.headers.get('request-id') ?? undefined
  if (response.status < 200 || response.status > 299) throw httpError(endpoint, response.status, raw, requestId)

  try {
    const signed = signedMessageFromHeaders(Object.fromEntries(response.headers), raw)
    // The keys and the skew were checked when the client was created (createWechatPayClient).
    verifyChecked(signed, context)
  } catch (error) {
    const reason = error instanceof WechatPayError ? `${error.code}: ${error.message}` : String(error)
    throw new WechatPayError('response_unverified', `WeChat Pay ${endpoint} answered ${response.status} but the answer failed verification (${reason}); it was not believed`, {
      cause: error,
      status: response.status,
      ...(requestId === undefined ? {} : { requestId }),
    })
  }
  if (raw.byteLength === 0) return { status: response.status, json: undefined }
  try {
    return { status: response.status, json: JSON.parse(UTF8.decode(raw)) }
  } catch (error) {
    throw new WechatPayError('bad_response', `WeChat Pay ${endpoint} answered ${response.status} with a body that is not JSON`, {
      cause: error,
      status: response.status,
      ...(requestId === undefined ? {} : { requestId }),
    })
  }
}

/** `http_error` carrying WeChat Pay's `code`, `message` and `detail` when the body has them. */
function httpError(endpoint: string, status: number, raw: Uint8Array, requestId: string | undefined): WechatPayError {
  let body: Record<string, unknown> = {}
  try {
    const json: unknown = JSON.parse(UTF8.decode(raw))
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) body = json as Record<string, unknown>
  } catch {
    // Not JSON (a proxy's error page): the status alone is what we know.
  }
  const wechatCode = typeof body.code === 'string' ? body.code : undefined
  const wechatMessage = typeof body.message === 'string' ? body.message : undefined
  const said = wechatCode === undefined ? '' : `: ${wechatCode}${wechatMessage === undefined ? '' : ` (${wechatMessage})`}`
  return new WechatPayError('http_error', `WeChat Pay ${endpoint} answered HTTP ${status}${said}`, {
    status,
    ...(wechatCode === undefined ? {} : { wechatCode }),
    ...(wechatMessage === undefined ? {} : { wechatMessage }),
    ...(body.detail === undefined ? {} : { detail: body.detail }),
    ...(requestId === undefined ? {} : { requestId }),
  })
}

/** Our deadline, or the network (with undici's hidden cause dug out). */
function transportError(endpoint: string, timeoutMs: number, error: unknown): WechatPayError {
  const name = (error as { name?: unknown } | null)?.name
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new WechatPayError('timeout', `WeChat Pay ${endpoint} timed out after ${timeoutMs} ms`, { cause: error })
  }
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    const text = typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message
    if (text !== '' && !parts.includes(text)) parts.push(text)
    current = current.cause
  }
  return new WechatPayError('network_error', `WeChat Pay ${endpoint} request failed: ${parts.length > 0 ? parts.join(': ') : String(error)}`, { cause: error })
}
