/**
 * `createWechatPayFetchHandler`: the `notify_url` endpoint for hosts that speak the Fetch standard
 * (Hono, Next.js route handlers, Bun, Deno). A translation: the raw body bytes and headers of the
 * `Request` go to {@link createWechatPayNotificationHandler}, its answer becomes a `Response`. What
 * a framework middleware would do before it is done here: only `POST`, and a body read no further
 * than `maxBodyBytes` (so an unsigned flood costs at most that much memory per request).
 *
 * @module
 */
import { WechatPayError } from './errors'
import { createWechatPayNotificationHandler, type WechatPayNotificationHandler, type WechatPayNotificationHandlerOptions } from './notification-handler'
import { DEFAULT_NOTIFY_MAX_BODY_BYTES } from './raw-notification'

/** Options of {@link createWechatPayFetchHandler}: the handler's, and a body limit. */
export interface WechatPayFetchHandlerOptions extends WechatPayNotificationHandlerOptions {
  /** Largest notification accepted, in bytes; a larger one is answered 413 unread. Default 64 KiB (real ones are about 1 KiB). */
  maxBodyBytes?: number
}

/** WeChat Pay's failure body: a non-2xx answer with `{"code":"FAIL","message"}` makes it send again. */
function fail(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ code: 'FAIL', message }), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } })
}

/** The body's bytes, or null once more than `max` of them arrived (the rest is left unread). */
async function readAtMost(request: Request, max: number): Promise<Uint8Array | null> {
  if (request.body === null) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.byteLength
  }
  return body
}

/**
 * Creates the endpoint as `(request: Request) => Promise<Response>`. It reads the raw body itself, so
 * no framework body parser may run before it. Anything but `POST` is 405; a body over `maxBodyBytes`
 * is 413, declared or counted, and never read further; the rest is the handler's (401 for a
 * missing or bad signature, told to `onError`).
 *
 * @example
 * ```ts
 * import type { ScanAuth } from '@scanauth/core'
 * import { createWechatPayFetchHandler, type VerificationKeys } from '@scanauth/wechat-pay'
 *
 * declare const auth: ScanAuth, verificationKeys: VerificationKeys, apiV3Key: string
 * const notify = createWechatPayFetchHandler({ auth, verificationKeys, apiV3Key })
 * // Hono: app.post('/wxpay/notify', (c) => notify(c.req.raw)); Next.js: export { notify as POST }
 * export { notify as POST }
 * ```
 */
export function createWechatPayFetchHandler(options: WechatPayFetchHandlerOptions): (request: Request) => Promise<Response> {
  const { maxBodyBytes, ...handlerOptions } = options
  return asFetchHandler(createWechatPayNotificationHandler(handlerOptions), { maxBodyBytes })
}

/**
 * The Fetch-standard endpoint around a notification handler you already have (one made by
 * {@link createWechatPayNotificationHandler}, perhaps wrapped with logging of your own): the same
 * `POST`-only, body-limited translation {@link createWechatPayFetchHandler} makes.
 */
export function asFetchHandler(handler: WechatPayNotificationHandler, options: { maxBodyBytes?: number } = {}): (request: Request) => Promise<Response> {
  const { maxBodyBytes = DEFAULT_NOTIFY_MAX_BODY_BYTES } = options
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new WechatPayError('invalid_options', 'createWechatPayFetchHandler: maxBodyBytes must be a positive whole number of bytes')
  }
  return async function wechatPayFetchHandler(request) {
    if (request.method.toUpperCase() !== 'POST') return fail(405, 'use POST', { allow: 'POST' })
    const declared = Number(request.headers.get('content-length') ?? Number.NaN)
    if (declared > maxBodyBytes) return fail(413, 'the notification is too large')
    const body = await readAtMost(request, maxBodyBytes)
    if (body === null) return fail(413, 'the notification is too large')
    const headers: Record<string, string> = {}
    request.headers.forEach((value, name) => {
      headers[name] = value
    })
    const answer = await handler({ headers, body })
    return new Response(answer.status === 204 ? null : answer.body, { status: answer.status, headers: answer.headers })
  }
}
