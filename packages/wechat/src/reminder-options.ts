/**
 * Options of `createWechatReminderNotifier`, their defaults, and their validation (a `WechatError`
 * `invalid_options` naming the bad one, as every factory of this package throws).
 *
 * @module
 */
import type { ReminderMessage } from '@scanauth/core'
import type { FetchLike } from './api-client'
import { asAccessTokens, createAccessTokenSource, type WechatAccessTokens } from './access-token'
import { WechatError } from './errors'
import { WECHAT_API_BASE_URL } from './qr-provider'
import type { ReminderFacts, WechatTemplateField } from './reminder-text'
import { SUBSCRIBE_TITLE_MAX_CHARS } from './reminder-text'
import type { TokenCache } from './token'

/** WeChat's confirm page of the one-time subscription message (一次性订阅消息). */
export const WECHAT_SUBSCRIBE_CONFIRM_URL = 'https://mp.weixin.qq.com/mp/subscribemsg'

/** A channel the notifier can send through. */
export type WechatReminderChannel = 'subscribe' | 'template' | 'custom'

/** The channels, in the default order: consent first, then followers, then the open window. */
export const DEFAULT_REMINDER_CHANNELS: readonly WechatReminderChannel[] = ['subscribe', 'template', 'custom']

/** The customer-service window a scan opens (WeChat: 1 minute after a scan, follow or menu click). */
export const DEFAULT_CUSTOM_WINDOW_MS = 60_000
/** The longest customer-service window WeChat grants (48 hours after a message from the user). */
export const MAX_CUSTOM_WINDOW_MS = 48 * 3_600_000

/** A template message's fields for one reminder: `{ key: { value } }`, picked from `facts` or made up. */
export type WechatReminderTemplateData = (message: ReminderMessage, facts: ReminderFacts) => Record<string, WechatTemplateField>

export type { WechatTemplateField } from './reminder-text'

/** Options of `createWechatReminderNotifier`. */
export interface WechatReminderNotifierOptions {
  /** The Official Account's AppID: the one whose openids core holds. */
  appId: string
  /** Its AppSecret. Required unless `tokens` hands out the access token. */
  appSecret?: string
  /**
   * Where the access token comes from instead of fetching one: e.g. the QR provider of
   * `createWechatQrProvider`, so one process keeps one token (needed with the classic token endpoint).
   */
  tokens?: WechatAccessTokens
  /** API base URL. Default `https://api.weixin.qq.com`; the emulator's `url` in development and tests. */
  apiBase?: string
  /**
   * The confirm page of the one-time subscription, without query or fragment. Default
   * `https://mp.weixin.qq.com/mp/subscribemsg`; `${emulator.url}/mp/subscribemsg` with the emulator.
   */
  subscribeConfirmBase?: string
  /** Without `tokens`: `stable` (default) or `classic`, as `createWechatQrProvider`. */
  tokenEndpoint?: 'stable' | 'classic'
  /** Without `tokens`: a cache shared by processes, as `createWechatQrProvider`. */
  tokenCache?: TokenCache
  /** Without `tokens`: the key in `tokenCache`. Default `scanauth:wechat:token:{appId}:{tokenEndpoint}`. */
  tokenCacheKey?: string
  /** Without `tokens`: stop using a token this many seconds before it expires. Default 300. */
  refreshMarginSeconds?: number
  /** Without `tokens`: called when `tokenCache` fails. */
  onTokenCacheError?: (error: unknown) => void
  /** Deadline of each HTTP request, in milliseconds. Default 5000. */
  timeoutMs?: number
  /** The `fetch` to use. Default: the global `fetch`. */
  fetch?: FetchLike
  /** Clock in epoch milliseconds (the customer-service window, token expiry). Default `Date.now`. */
  now?: () => number
  /**
   * The channels to try, in order. Default `['subscribe', 'template', 'custom']`, less those not set
   * up (`subscribe` and `template` need their options). Naming one without its options is an error.
   */
  channels?: WechatReminderChannel[]
  /** The one-time subscription message: the account's one template id, the scene asked for, the title. */
  subscribe?: {
    /** The account's one-time subscription template id (接口权限 → 一次性订阅消息). */
    templateId: string
    /** The `scene` (integer 0–10000) confirmations are asked for and messages sent under. Default 1. */
    scene?: number
    /** The message's title, at most 15 characters. Default `Access ending`. */
    title?: string
  }
  /** The template message: followers only; every field at most 20 characters. */
  template?: {
    /** The template id (from the account's category templates). */
    templateId: string
    /** Send the renewal link as the message's `url` (tapping the message opens it). Default true. */
    url?: boolean
    /**
     * The template's fields for a reminder. Default `{ first, keyword1, keyword2, remark }` from
     * `facts` (headline, subject, when or points left, "Tap to renew"). Every value is cut to 20
     * characters and line breaks become spaces.
     */
    data?: WechatReminderTemplateData
  }
  /** The customer-service text message: only inside the window after the person's last interaction. */
  custom?: {
    /**
     * How long after `message.lastSeenAt` (the last scan, all core knows of) a text may be sent.
     * Default 60 000 (a scan opens one minute); at most 48 hours (a message from the user opens 48 h,
     * but core does not see those). Outside it the channel is skipped without a call.
     */
    windowMs?: number
  }
  /**
   * The free text of the `subscribe` (at most 200 characters: longer is cut) and `custom` (may hold
   * `<a href>` links) messages. Default `defaultReminderText`.
   */
  text?: (message: ReminderMessage, channel: 'subscribe' | 'custom') => string
  /** The IANA time zone dates are written in. Default `Asia/Shanghai`. */
  timeZone?: string
  /**
   * Told about what the operator must fix, e.g. a template id WeChat calls invalid (40037); the send
   * goes on with the next channel. A throw here is ignored.
   */
  onError?: (error: unknown, channel: WechatReminderChannel) => void
}

/** The options after validation, with defaults filled in. */
export interface ResolvedReminderOptions {
  appId: string
  apiBase: string
  tokens: WechatAccessTokens
  confirmBase: string
  timeoutMs: number
  fetch: FetchLike
  now: () => number
  channels: WechatReminderChannel[]
  subscribe: { templateId: string; scene: number; title: string } | null
  template: { templateId: string; url: boolean; data: WechatReminderTemplateData | undefined } | null
  customWindowMs: number
  text: WechatReminderNotifierOptions['text']
  timeZone: string
  onError: WechatReminderNotifierOptions['onError']
}

/** Validates `options` (throwing `invalid_options` naming the bad one) and fills in defaults. */
export function resolveReminderOptions(options: WechatReminderNotifierOptions): ResolvedReminderOptions {
  const fail = (what: string): never => {
    throw new WechatError('invalid_options', `createWechatReminderNotifier: ${what}`)
  }
  if (typeof options !== 'object' || options === null) fail('options are required')
  const { appId } = options
  if (typeof appId !== 'string' || appId === '') fail('appId is required')
  const apiBase = options.apiBase ?? WECHAT_API_BASE_URL
  if (!isHttpUrl(apiBase)) fail('apiBase must be an absolute http(s) URL')
  const confirmBase = options.subscribeConfirmBase ?? WECHAT_SUBSCRIBE_CONFIRM_URL
  // The query and the #wechat_redirect fragment are ours to add.
  if (!isHttpUrl(confirmBase) || /[?#]/.test(confirmBase)) fail('subscribeConfirmBase must be an absolute http(s) URL without query or fragment')
  const timeoutMs = options.timeoutMs ?? 5000
  if (!(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))) fail('timeoutMs must be a positive number')
  if (options.fetch !== undefined && typeof options.fetch !== 'function') fail('fetch must be a function')
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const now = options.now ?? Date.now
  const tokens = resolveTokens(options, apiBase, timeoutMs, fetch, now, fail)

  const subscribe = options.subscribe === undefined ? null : resolveSubscribe(options.subscribe, fail)
  const template = options.template === undefined ? null : resolveTemplate(options.template, fail)
  const windowMs = options.custom?.windowMs ?? DEFAULT_CUSTOM_WINDOW_MS
  if (!(typeof windowMs === 'number' && windowMs > 0 && windowMs <= MAX_CUSTOM_WINDOW_MS)) fail('custom.windowMs must be above 0 and at most 48 hours (172800000)')
  const channels = resolveChannels(options.channels, subscribe !== null, template !== null, fail)
  if (options.text !== undefined && typeof options.text !== 'function') fail('text must be a function')
  if (options.onError !== undefined && typeof options.onError !== 'function') fail('onError must be a function')
  const timeZone = options.timeZone ?? 'Asia/Shanghai'
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
  } catch {
    fail(`timeZone ${String(timeZone)} is not an IANA time zone`)
  }
  return { appId, apiBase, tokens, confirmBase, timeoutMs, fetch, now, channels, subscribe, template, customWindowMs: windowMs, text: options.text, timeZone, onError: options.onError }
}

function resolveTokens(
  options: WechatReminderNotifierOptions,
  apiBase: string,
  timeoutMs: number,
  fetch: FetchLike,
  now: () => number,
  fail: (what: string) => never,
): WechatAccessTokens {
  if (options.tokens !== undefined) {
    if (typeof options.tokens?.getAccessToken !== 'function' || typeof options.tokens.rejectAccessToken !== 'function') {
      fail('tokens must have getAccessToken() and rejectAccessToken() (e.g. a createWechatQrProvider)')
    }
    return options.tokens
  }
  if (typeof options.appSecret !== 'string' || options.appSecret === '') fail('appSecret is required (or tokens)')
  const tokenEndpoint = options.tokenEndpoint ?? 'stable'
  if (tokenEndpoint !== 'stable' && tokenEndpoint !== 'classic') fail("tokenEndpoint must be 'stable' or 'classic'")
  return asAccessTokens(
    createAccessTokenSource({
      appId: options.appId,
      appSecret: options.appSecret as string,
      apiBase,
      tokenEndpoint,
      tokenCache: options.tokenCache,
      tokenCacheKey: options.tokenCacheKey,
      refreshMarginSeconds: options.refreshMarginSeconds ?? 300,
      timeoutMs,
      fetch,
      now,
      onTokenCacheError: options.onTokenCacheError,
    }),
  )
}

function resolveSubscribe(value: NonNullable<WechatReminderNotifierOptions['subscribe']>, fail: (what: string) => never): NonNullable<ResolvedReminderOptions['subscribe']> {
  if (typeof value?.templateId !== 'string' || value.templateId === '') fail('subscribe.templateId is required')
  const scene = value.scene ?? 1
  if (!(Number.isInteger(scene) && scene >= 0 && scene <= 10_000)) fail('subscribe.scene must be an integer from 0 to 10000 (WeChat limit)')
  const title = value.title ?? 'Access ending'
  if (typeof title !== 'string' || title === '' || Array.from(title).length > SUBSCRIBE_TITLE_MAX_CHARS) fail('subscribe.title must be 1 to 15 characters (WeChat limit)')
  return { templateId: value.templateId, scene, title }
}

function resolveTemplate(value: NonNullable<WechatReminderNotifierOptions['template']>, fail: (what: string) => never): NonNullable<ResolvedReminderOptions['template']> {
  if (typeof value?.templateId !== 'string' || value.templateId === '') fail('template.templateId is required')
  if (value.url !== undefined && typeof value.url !== 'boolean') fail('template.url must be a boolean')
  if (value.data !== undefined && typeof value.data !== 'function') fail('template.data must be a function')
  return { templateId: value.templateId, url: value.url ?? true, data: value.data }
}

function resolveChannels(given: unknown, hasSubscribe: boolean, hasTemplate: boolean, fail: (what: string) => never): WechatReminderChannel[] {
  if (given === undefined) return DEFAULT_REMINDER_CHANNELS.filter((c) => (c === 'subscribe' ? hasSubscribe : c === 'template' ? hasTemplate : true))
  if (!Array.isArray(given) || given.length === 0) fail('channels must be a non-empty array')
  const list = given as unknown[]
  for (const channel of list) {
    if (!DEFAULT_REMINDER_CHANNELS.includes(channel as WechatReminderChannel)) fail(`channels: unknown channel ${String(channel)} (subscribe, template, custom)`)
  }
  if (new Set(list).size !== list.length) fail('channels must not repeat a channel')
  if (list.includes('subscribe') && !hasSubscribe) fail("channels names 'subscribe' but the subscribe option is not set")
  if (list.includes('template') && !hasTemplate) fail("channels names 'template' but the template option is not set")
  return list as WechatReminderChannel[]
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}
