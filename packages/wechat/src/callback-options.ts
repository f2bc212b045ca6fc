/**
 * Options of `createWechatCallback`, their defaults, and the request and response it works with.
 *
 * @module
 */
import { MemoryStore, type ScanAuth, type ScanResult, type Store } from '@scanauth/core'
import { decodeAesKey } from './crypto'
import { WechatError } from './errors'
import type { WechatMessage } from './message'
import { defaultReply } from './reply'

/** A push as any Node framework can describe it. */
export interface WechatCallbackRequest {
  /** `GET` (URL verification) or `POST` (messages and events); any case. */
  method: string
  /** The query parameters: a plain object (first value of an array wins) or `URLSearchParams`. */
  query: Record<string, string | string[] | undefined> | URLSearchParams
  /**
   * The **raw** body: a string or the bytes (`Buffer`/`Uint8Array`). Mount the callback before any
   * JSON/XML/urlencoded body parser, or give it the raw body the parser kept; a parsed object cannot
   * be checked and is refused with 415 (after the signature check, like every body problem).
   */
  body?: string | Uint8Array | unknown
  /**
   * Set by a framework adapter that stopped reading the body at its own limit: the push is answered
   * 413, like a body over `maxBodyBytes`, after the signature check (B-wx-1, B-wx-3) — an unsigned
   * request gets 401 whatever its size.
   */
  bodyTooLarge?: boolean
}

/** What to send back. Always a string body. */
export interface WechatCallbackResponse {
  /** HTTP status: 200 for an answer, 4xx for a refused push, 500 when `auth.handleScan` or the store failed. */
  status: number
  /** Response headers to send as they are (the content type). */
  headers: Record<string, string>
  /** The body to send as it is: `echostr`, `success`, or a passive reply as XML (encrypted in safe mode). */
  body: string
}

/** The callback: one request in, one response out. Never throws. */
export type WechatCallback = (request: WechatCallbackRequest) => Promise<WechatCallbackResponse>

/** Context given to `onMessage`. */
export interface WechatMessageContext {
  /** True when the push came encrypted (safe or compatible mode). */
  encrypted: boolean
}

/** Options of `createWechatCallback`. */
export interface WechatCallbackOptions {
  /** Anything with core's `handleScan`, normally the instance from `createScanAuth`. */
  auth: Pick<ScanAuth, 'handleScan'>
  /** The Token (令牌) set on the account's server configuration page. */
  token: string
  /** The AppID: checked against the appid inside every encrypted message. */
  appId: string
  /** The EncodingAESKey (43 characters), for safe and compatible mode. Without it, only plain pushes are understood. */
  encodingAESKey?: string
  /** The previous EncodingAESKey while a key change rolls out; tried when the current one fails. */
  previousEncodingAESKey?: string
  /**
   * Refuse plain (unencrypted) POSTs with 403: only an encrypted body is authenticated. Default
   * `true` when `encodingAESKey` is set (safe mode required), `false` without a key. Set it to
   * `false` beside a key only while the account switches from plaintext to safe mode, then remove it.
   * Compatible-mode pushes carry the ciphertext and are accepted either way (only the ciphertext is read).
   */
  requireEncryption?: boolean
  /**
   * Where signed requests and delivered events are recorded, so a replay or a second delivery is
   * refused on **every** instance: the application's `Store` (the one given to `createScanAuth`);
   * only its `incrementCounter` and `deleteCounter` are used, under keys starting `wx:`.
   *
   * **Warning:** without it the records live in a `MemoryStore` of this process only. A signed
   * plain-mode query seen once (the URL verification, an access log) can then be replayed with a
   * forged body to another instance within the timestamp window, and a retry that reaches another
   * instance is processed again. Leave it out only with a single instance.
   */
  store?: Pick<Store, 'incrementCounter' | 'deleteCounter'>
  /**
   * Accept a push only if its `timestamp` is within this many seconds of `now` (either way). Default
   * 300. Replay and duplicate records live twice as long. `false` turns the check off (not
   * recommended: records then live 600 s, and a request older than that is accepted again).
   */
  replayWindowSeconds?: number | false
  /**
   * The text sent to the user after a scan, or `null` for none (WeChat then gets `success`). Default
   * `defaultReply`: "Signed in." / "Please purchase to continue." / a hint to refresh an invalid code /
   * with `confirm: 'link'`, the device's name and a link to the confirm page. `false` never replies.
   * Runs inside WeChat's 5-second budget: keep it fast.
   */
  reply?: ((result: ScanResult, message: WechatMessage) => string | null | undefined | Promise<string | null | undefined>) | false
  /**
   * Every push that is not a scanauth scan (text messages, menu clicks, plain follows, ...): an account
   * has only one push URL, so the app's other handling goes here. A returned string is sent to the
   * user as a passive text reply. Reports on messages the account sent (`TEMPLATESENDJOBFINISH`,
   * `subscribe_msg_popup_event`, `subscribe_msg_change_event`, `subscribe_msg_sent_event`: see
   * `isDeliveryReport`) come here too, to be recorded if the app wants; they are always answered
   * `success`, whatever this returns or throws.
   */
  onMessage?: (message: WechatMessage, context: WechatMessageContext) => string | null | undefined | void | Promise<string | null | undefined | void>
  /**
   * Errors from `auth.handleScan`, `reply`, `onMessage` or the `store` (the push is still answered:
   * 500 for `handleScan` and the store, so WeChat retries). `message` is the push being handled;
   * `undefined` when the store failed on a URL verification, which carries no message.
   */
  onError?: (error: unknown, message: WechatMessage | undefined) => void
  /** Largest body accepted, in bytes. Default 64 KiB (pushes are a few hundred bytes). */
  maxBodyBytes?: number
  /** Answer `success` if handling takes longer than this; the work goes on. WeChat gives up at 5000 ms. Default 4000. */
  replyDeadlineMs?: number
  /** Clock in epoch milliseconds. Default `Date.now`. */
  now?: () => number
}

/** The default of `replayWindowSeconds`. */
const DEFAULT_WINDOW_SECONDS = 300

/**
 * The largest push body the callback reads by default, in bytes (64 KiB; pushes are a few hundred
 * bytes). The framework adapters read the body with the same limit.
 */
export const DEFAULT_PUSH_MAX_BODY_BYTES = 64 * 1024

/** The options after validation, with defaults filled in. */
export interface ResolvedCallbackOptions {
  auth: Pick<ScanAuth, 'handleScan'>
  token: string
  appId: string
  /** Current key first, then the previous one. */
  keys: Buffer[]
  requireEncryption: boolean
  replayWindowMs: number | null
  /** The records' store: the given one, or a `MemoryStore` of this process. */
  store: Pick<Store, 'incrementCounter' | 'deleteCounter'>
  /** Whether `store` is our own `MemoryStore` (nobody else purges it). */
  ownStore: MemoryStore | null
  /** How long the replay and duplicate records live: twice the timestamp window (B-wx-7). */
  recordTtlMs: number
  reply: NonNullable<WechatCallbackOptions['reply']>
  onMessage: WechatCallbackOptions['onMessage']
  onError: WechatCallbackOptions['onError']
  maxBodyBytes: number
  replyDeadlineMs: number
  now: () => number
}

/** Validates the options (throwing a `WechatError` `invalid_options` that names the bad one) and fills in defaults. */
export function resolveCallbackOptions(options: WechatCallbackOptions): ResolvedCallbackOptions {
  const fail = (what: string): never => {
    throw new WechatError('invalid_options', `createWechatCallback: ${what}`)
  }
  if (typeof options?.auth?.handleScan !== 'function') fail('auth must have handleScan()')
  if (typeof options.token !== 'string' || options.token === '') fail('token is required')
  if (typeof options.appId !== 'string' || options.appId === '') fail('appId is required')
  if (options.requireEncryption && options.encodingAESKey === undefined) fail('requireEncryption needs encodingAESKey')
  const store = options.store
  if (store !== undefined && (typeof store?.incrementCounter !== 'function' || typeof store.deleteCounter !== 'function')) {
    fail('store must implement incrementCounter() and deleteCounter() (a Store of @scanauth/core)')
  }
  const keys: Buffer[] = []
  for (const [name, value] of [['encodingAESKey', options.encodingAESKey], ['previousEncodingAESKey', options.previousEncodingAESKey]] as const) {
    if (value === undefined) continue
    try {
      keys.push(decodeAesKey(value))
    } catch {
      fail(`${name} must be 43 characters from [A-Za-z0-9] (the base64 alphabet)`)
    }
  }
  const window = options.replayWindowSeconds ?? DEFAULT_WINDOW_SECONDS
  if (window !== false && !(typeof window === 'number' && window > 0)) fail('replayWindowSeconds must be a positive number or false')
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_PUSH_MAX_BODY_BYTES
  if (!(Number.isInteger(maxBodyBytes) && maxBodyBytes > 0)) fail('maxBodyBytes must be a positive integer')
  const replyDeadlineMs = options.replyDeadlineMs ?? 4000
  if (!(replyDeadlineMs > 0)) fail('replyDeadlineMs must be positive')
  const ownStore = store === undefined ? new MemoryStore() : null
  // Without a window, records still need a life: that of the default window (B-wx-7).
  const windowMs = window === false ? DEFAULT_WINDOW_SECONDS * 1000 : window * 1000
  return {
    auth: options.auth,
    token: options.token,
    appId: options.appId,
    keys,
    // Safe mode is required by default once a key is configured (B-wx-2).
    requireEncryption: options.requireEncryption ?? options.encodingAESKey !== undefined,
    replayWindowMs: window === false ? null : window * 1000,
    store: store ?? (ownStore as MemoryStore),
    ownStore,
    recordTtlMs: 2 * windowMs,
    reply: options.reply ?? defaultReply,
    onMessage: options.onMessage,
    onError: options.onError,
    maxBodyBytes,
    replyDeadlineMs,
    now: options.now ?? Date.now,
  }
}
