/**
 * `createWechatCallback`: the account's push URL (服务器地址) as one framework-neutral function.
 *
 * - `GET` is WeChat's URL verification: `echostr` is echoed when `signature` matches.
 * - `POST` is a message or event. The signature and timestamp are checked on every request, the body
 *   is size-capped, DTD-free XML, decrypted in safe mode; then a scan of a scanauth code goes to
 *   `auth.handleScan`, and every other push to `onMessage`.
 * - The answer always comes within WeChat's 5 seconds: `success`, or a passive text reply (encrypted
 *   in safe mode). A refused push gets a 4xx and nothing is processed.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { ScanResult } from '@scanauth/core'
import {
  resolveCallbackOptions,
  type ResolvedCallbackOptions,
  type WechatCallback,
  type WechatCallbackOptions,
  type WechatCallbackResponse,
  type WechatMessageContext,
} from './callback-options'
import { PushRejection, authenticate, bodyText, openPush, readQuery, type OpenedPush } from './inbound'
import { deliveryKey, sceneOfScan, type WechatMessage } from './message'
import { RecentMap } from './recent'
import { SUCCESS_BODY, sealReply, textReplyXml } from './reply'

const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }
const XML = { 'content-type': 'application/xml; charset=utf-8', 'cache-control': 'no-store' }
/** How many recent deliveries and nonces are remembered (each entry is a few hundred bytes). */
const MEMORY_ENTRIES = 10_000

/** What handling a delivery produced: the text to send to the user, or null for `success`. */
type Outcome = { replyText: string | null }

/**
 * Creates the push handler for an Official Account.
 *
 * @example
 * ```ts
 * const wechat = createWechatCallback({ auth, token: process.env.WECHAT_TOKEN!, appId, encodingAESKey })
 * // node:http, with the raw body read as a Buffer:
 * const res = await wechat({ method: req.method!, query: Object.fromEntries(url.searchParams), body: rawBody })
 * response.writeHead(res.status, res.headers).end(res.body)
 * ```
 *
 * @throws {@link WechatError} `invalid_options` naming the option that is missing or wrong.
 */
export function createWechatCallback(options: WechatCallbackOptions): WechatCallback {
  const config = resolveCallbackOptions(options)
  // Remember deliveries at least as long as a replay of them can pass the timestamp check.
  const memoryMs = Math.max(config.replayWindowMs ?? 0, 60_000) * 2
  const deliveries = new RecentMap<Promise<Outcome>>({ maxEntries: MEMORY_ENTRIES, ttlMs: memoryMs, now: config.now })
  const nonces = new RecentMap<string>({ maxEntries: MEMORY_ENTRIES, ttlMs: memoryMs, now: config.now })

  /** Handles a delivery once; a repeat (WeChat's retry, or a replay) gets the first one's outcome. */
  function deliver(message: WechatMessage, context: WechatMessageContext): Promise<Outcome> {
    const key = deliveryKey(message)
    const known = deliveries.get(key)
    if (known !== undefined) return known
    const work = handleMessage(config, message, context)
    deliveries.set(key, work)
    // A failed delivery is forgotten, so WeChat's retry gets a real second chance.
    work.catch(() => deliveries.delete(key))
    return work
  }

  return async function wechatCallback(request) {
    try {
      const method = String(request.method ?? '').toUpperCase()
      const query = readQuery(request.query)
      if (method === 'GET') {
        authenticate(query, config)
        if (query.echostr === undefined) throw new PushRejection(400, 'echostr is required')
        // Echo verbatim: this is how WeChat learns the URL is ours.
        return { status: 200, headers: TEXT, body: query.echostr }
      }
      if (method !== 'POST') return { status: 405, headers: { ...TEXT, allow: 'GET, POST' }, body: 'method not allowed' }

      const { timestamp, nonce } = authenticate(query, config)
      const text = bodyText(request.body, config.maxBodyBytes)
      bindNonce(nonces, `${timestamp}:${nonce}`, text)
      const opened = openPush(query, text, config)
      const outcome = await withDeadline(deliver(opened.message, { encrypted: opened.key !== null }), config.replyDeadlineMs)
      return respond(config, opened, outcome?.replyText ?? null)
    } catch (error) {
      if (error instanceof PushRejection) return { status: error.status, headers: TEXT, body: error.message }
      // handleScan or onMessage failed (already reported to onError), or a bug: answer 500 and let WeChat retry.
      return { status: 500, headers: TEXT, body: 'internal error' }
    }
  }
}

/**
 * A signed (timestamp, nonce) pair must always come with the same body. WeChat's retries resend the
 * same request; an attacker who captured one plain-mode query string could otherwise attach a body of
 * their own to it within the window (plain mode signs the query, not the body).
 */
function bindNonce(nonces: RecentMap<string>, key: string, body: string): void {
  const digest = createHash('sha256').update(body).digest('base64')
  const seen = nonces.get(key)
  if (seen === undefined) nonces.set(key, digest)
  else if (seen !== digest) throw new PushRejection(403, 'nonce was already used with another body')
}

/** Decides what a push means and runs it: a scan to core, anything else to `onMessage`. */
async function handleMessage(config: ResolvedCallbackOptions, message: WechatMessage, context: WechatMessageContext): Promise<Outcome> {
  const sceneStr = sceneOfScan(message)
  if (sceneStr === null) {
    if (config.onMessage === undefined) return { replyText: null }
    try {
      return { replyText: nonEmpty(await config.onMessage(message, context)) }
    } catch (error) {
      // The app's hook failed; WeChat still gets `success` (a retry would only fail again).
      report(config, error, message)
      return { replyText: null }
    }
  }
  let result: ScanResult
  try {
    result = await config.auth.handleScan({ sceneStr, openid: message.FromUserName })
  } catch (error) {
    // Core refuses input it cannot accept (an over-long openid or scene) with invalid_request: for the
    // user that is just an invalid code. Anything else (the store is down) is a real failure.
    if ((error as { code?: unknown } | null)?.code === 'invalid_request') {
      result = { result: 'invalid' }
    } else {
      report(config, error, message)
      throw error
    }
  }
  if (config.reply === false) return { replyText: null }
  try {
    return { replyText: nonEmpty(await config.reply(result, message)) }
  } catch (error) {
    // The scan is done; only the courtesy message failed.
    report(config, error, message)
    return { replyText: null }
  }
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

function report(config: ResolvedCallbackOptions, error: unknown, message: WechatMessage): void {
  try {
    config.onError?.(error, message)
  } catch {
    // nowhere left to report to
  }
}

/** The outcome, or undefined when it is not ready within `ms` (the work itself carries on). */
async function withDeadline(work: Promise<Outcome>, ms: number): Promise<Outcome | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms)
    timer.unref?.()
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** `success`, or the text reply, encrypted with the key that opened the push. */
function respond(config: ResolvedCallbackOptions, opened: OpenedPush, replyText: string | null): WechatCallbackResponse {
  if (replyText === null) return { status: 200, headers: TEXT, body: SUCCESS_BODY }
  const seconds = Math.floor(config.now() / 1000)
  const xml = textReplyXml(opened.message, replyText, seconds)
  if (opened.key === null) return { status: 200, headers: XML, body: xml }
  return { status: 200, headers: XML, body: sealReply(xml, { key: opened.key, appId: config.appId, token: config.token, timestamp: seconds }) }
}
