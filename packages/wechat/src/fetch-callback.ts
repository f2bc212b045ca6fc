/**
 * `createWechatFetchHandler`: the account's push URL for hosts that speak the Fetch standard (Hono,
 * Next.js route handlers, Bun, Deno). A translation only: the `Request` becomes a
 * {@link WechatCallbackRequest} (method, query, raw body text), the callback's answer a `Response`.
 * Signatures, replay window, decryption and the scan itself stay in `createWechatCallback`.
 *
 * @module
 */
import { readFetchBody } from '@scanauth/core'
import { DEFAULT_PUSH_MAX_BODY_BYTES, type WechatCallback } from './callback-options'
import { WechatError } from './errors'

/** Options of {@link createWechatFetchHandler}. */
export interface WechatFetchHandlerOptions {
  /**
   * Largest body read from the client, in bytes; a longer one answers 413 without reaching the
   * callback. Default 64 KiB, the callback's own default (pushes are a few hundred bytes).
   */
  maxBodyBytes?: number
}

// `ignoreBOM` keeps the bytes as they came (the callback checks and hashes exactly what was sent).
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * Wraps a callback from `createWechatCallback` as `(request: Request) => Promise<Response>`.
 *
 * The returned function rejects only when the body cannot be read (the client broke it off, or
 * something upstream read it first); the host then answers 500 and logs it, and WeChat retries.
 *
 * @example
 * ```ts
 * const callback = createWechatCallback({ auth, token, appId, encodingAESKey })
 * const wechat = createWechatFetchHandler(callback)
 * app.all('/wechat/callback', (c) => wechat(c.req.raw))   // Hono; or `export const POST = wechat` in Next.js
 * ```
 */
export function createWechatFetchHandler(callback: WechatCallback, options: WechatFetchHandlerOptions = {}): (request: Request) => Promise<Response> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_PUSH_MAX_BODY_BYTES
  if (!(Number.isInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new WechatError('invalid_options', 'createWechatFetchHandler: maxBodyBytes must be a positive integer')
  }

  return async function wechatFetchHandler(request) {
    const method = request.method.toUpperCase()
    let body: string | undefined
    let bodyTooLarge = false
    if (method === 'POST') {
      const bytes = await readFetchBody(request, maxBodyBytes)
      // Over the limit: the callback answers 413, after the signature check (B-wx-1).
      bodyTooLarge = bytes !== undefined && bytes.byteLength > maxBodyBytes
      body = bytes === undefined || bodyTooLarge ? '' : UTF8.decode(bytes)
    }
    const answer = await callback({ method, query: new URL(request.url).searchParams, body, bodyTooLarge })
    return new Response(method === 'HEAD' ? null : answer.body, { status: answer.status, headers: answer.headers })
  }
}
