/**
 * `createWechatCallback`: the account's push URL (服务器地址) as one framework-neutral function.
 *
 * - `GET` is WeChat's URL verification: `echostr` is echoed when `signature` matches.
 * - `POST` is a message or event. The signature and timestamp are checked on every request before
 *   the body is looked at; the body is size-capped, DTD-free XML, decrypted in safe mode (required by
 *   default with a key); then the request and the event are recorded in the Store, so a replay or a
 *   second delivery is refused or skipped on every instance; then a scan of a scanauth code goes to
 *   `auth.handleScan`, and every other push to `onMessage`. Reports on sent messages
 *   (`TEMPLATESENDJOBFINISH`, the subscription events) go to `onMessage` too and are always answered
 *   `success`.
 * - The answer always comes within WeChat's 5 seconds: `success`, or a passive text reply (encrypted
 *   in safe mode). A refused push gets a 4xx and nothing is processed; a failure of `handleScan` or
 *   of the store gets a 500, so WeChat retries.
 *
 * The decision order is docs/behaviour.md's "The WeChat callback" (B-wx-1 … B-wx-9).
 *
 * @module
 */
import type { ScanResult } from '@scanauth/core'
import {
  resolveCallbackOptions,
  type ResolvedCallbackOptions,
  type WechatCallback,
  type WechatCallbackOptions,
  type WechatCallbackRequest,
  type WechatCallbackResponse,
  type WechatMessageContext,
} from './callback-options'
import { PushRejection, authenticate, openPush, readBody, readQuery, type OpenedPush } from './inbound'
import { deliveryKey, isDeliveryReport, sceneOfScan, type WechatMessage } from './message'
import { LocalOutcomes } from './outcomes'
import { ReplayRecords, type RecordKeys, type SignedRequest } from './replay'
import { SUCCESS_BODY, sealReply, textReplyXml } from './reply'

const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }
const XML = { 'content-type': 'application/xml; charset=utf-8', 'cache-control': 'no-store' }
/** Our own MemoryStore (no `store` option) is purged of expired records after this many pushes. */
const PURGE_EVERY = 1024

/** What handling a delivery produced: the text to send to the user, or null for `success`. */
type Outcome = { replyText: string | null }

/**
 * Creates the push handler for an Official Account.
 *
 * @example
 * ```ts
 * import type { ScanAuth, Store } from '@scanauth/core'
 * import { createWechatCallback } from '@scanauth/wechat'
 *
 * declare const auth: ScanAuth, store: Store, appId: string, rawBody: Buffer, url: URL
 * // `store`: the one given to createScanAuth, so every instance shares the replay records.
 * const wechat = createWechatCallback({ auth, store, token: process.env.WECHAT_TOKEN!, appId, encodingAESKey: process.env.WECHAT_ENCODING_AES_KEY })
 * // node:http, with the raw body read as a Buffer:
 * const res = await wechat({ method: 'POST', query: url.searchParams, body: rawBody })
 * ```
 *
 * @throws {@link WechatError} `invalid_options` naming the option that is missing or wrong.
 */
export function createWechatCallback(options: WechatCallbackOptions): WechatCallback {
  const config = resolveCallbackOptions(options)
  const records = new ReplayRecords({ store: config.store, appId: config.appId, ttlMs: config.recordTtlMs, now: config.now })
  const outcomes = new LocalOutcomes<Outcome>({ ttlMs: config.recordTtlMs, now: config.now })
  let pushes = 0

  /** Runs a record step; a store failure is reported, then answered 500 like a failing `handleScan` (B-wx-8). */
  async function record<T>(work: () => Promise<T>, message: WechatMessage | undefined): Promise<T> {
    try {
      return await work()
    } catch (error) {
      report(config, error, message)
      throw error
    }
  }

  /** Processes a first delivery; on failure its records are deleted so WeChat's retry runs it again (B-wx-8). */
  function processFirst(key: string, message: WechatMessage, context: WechatMessageContext, owned: RecordKeys): Promise<Outcome> {
    const work = handleMessage(config, message, context).catch(async (error: unknown) => {
      outcomes.forget(key)
      await records.forget(owned).catch((forgetError: unknown) => report(config, forgetError, message))
      throw error
    })
    // Nobody may be waiting any more (the deadline passed): the failure is already reported.
    work.catch(() => undefined)
    return work
  }

  /**
   * Asks the records whether this request processes its delivery (B-wx-4 … B-wx-6), and processes
   * it if so. A repeat gets this process's outcome of the delivery when it has one, else `success`.
   */
  async function deliver(request: SignedRequest, opened: OpenedPush, key: string): Promise<Outcome | undefined> {
    const { message } = opened
    const settle = outcomes.begin(key)
    try {
      const claim = await record(() => records.claimRequest(request), message)
      if (claim.verdict === 'reused') throw new PushRejection(403, 'nonce was already used with another body')
      if (claim.verdict === 'first') {
        const event = await record(() => records.claimEvent(key).catch(async (error: unknown) => {
          // Left behind, the request records would make WeChat's retry look like a repeat.
          await records.forget(claim.keys).catch(() => undefined)
          throw error
        }), message)
        if (event.first) {
          const work = processFirst(key, message, { encrypted: opened.key !== null }, [...claim.keys, event.key])
          settle(work)
          return work
        }
      }
      settle()
      return outcomes.lookup(key)
    } finally {
      settle()
    }
  }

  async function verify(query: ReturnType<typeof readQuery>): Promise<WechatCallbackResponse> {
    const { timestamp, nonce } = authenticate(query, config)
    if (query.echostr === undefined) throw new PushRejection(400, 'echostr is required')
    const claim = await record(() => records.claimRequest({ timestamp, nonce, method: 'GET', payload: query.echostr ?? '' }), undefined)
    // A signed query seen before may not verify again with another echostr, nor reach a POST (B-wx-5).
    if (claim.verdict === 'reused') throw new PushRejection(403, 'nonce was already used')
    // Echo verbatim: this is how WeChat learns the URL is ours.
    return { status: 200, headers: TEXT, body: query.echostr }
  }

  async function push(request: WechatCallbackRequest, query: ReturnType<typeof readQuery>): Promise<WechatCallbackResponse> {
    const { timestamp, nonce } = authenticate(query, config)
    const body = readBody(request.body, config.maxBodyBytes, request.bodyTooLarge === true)
    const opened = openPush(query, body.text, config)
    const key = deliveryKey(opened.message)
    if (config.ownStore !== null && ++pushes % PURGE_EVERY === 0) {
      // Never in the way of the push: a failed purge (a clock answering NaN, say) goes to onError.
      config.ownStore.purgeExpired({ now: config.now() }).catch((error: unknown) => report(config, error, undefined))
    }

    const work = deliver({ timestamp, nonce, method: 'POST', payload: body.bytes }, opened, key)
    const outcome = await withDeadline(work, config.replyDeadlineMs)
    return respond(config, opened, outcome?.replyText ?? null)
  }

  return async function wechatCallback(request) {
    try {
      const method = String(request.method ?? '').toUpperCase()
      const query = readQuery(request.query)
      if (method === 'GET') return await verify(query)
      if (method === 'POST') return await push(request, query)
      return { status: 405, headers: { ...TEXT, allow: 'GET, POST' }, body: 'method not allowed' }
    } catch (error) {
      if (error instanceof PushRejection) return { status: error.status, headers: TEXT, body: error.message }
      // handleScan or the store failed (already reported to onError), or a bug: answer 500 and let WeChat retry.
      return { status: 500, headers: TEXT, body: 'internal error' }
    }
  }
}

/** Decides what a push means and runs it: a scan to core, anything else to `onMessage`. */
async function handleMessage(config: ResolvedCallbackOptions, message: WechatMessage, context: WechatMessageContext): Promise<Outcome> {
  if (isDeliveryReport(message)) {
    // Reports on sent messages (reminders): the app may record them; nobody reads a reply.
    await callOnMessage(config, message, context)
    return { replyText: null }
  }
  const sceneStr = sceneOfScan(message)
  if (sceneStr === null) {
    // A failing hook is reported; WeChat still gets `success` (a retry would only fail again).
    return { replyText: nonEmpty(await callOnMessage(config, message, context)) }
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

/** `onMessage`, when there is one; its failure is reported and goes no further (WeChat still gets `success`). */
async function callOnMessage(config: ResolvedCallbackOptions, message: WechatMessage, context: WechatMessageContext): Promise<unknown> {
  try {
    return await config.onMessage?.(message, context)
  } catch (error) {
    report(config, error, message)
    return undefined
  }
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

function report(config: ResolvedCallbackOptions, error: unknown, message: WechatMessage | undefined): void {
  try {
    config.onError?.(error, message)
  } catch {
    // nowhere left to report to
  }
}

/** The outcome, or undefined when it is not ready within `ms` (the work itself carries on). */
async function withDeadline(work: Promise<Outcome | undefined>, ms: number): Promise<Outcome | undefined> {
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
