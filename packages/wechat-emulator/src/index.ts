/**
 * `@scanauth/wechat-emulator`: a local stand-in for the WeChat Official Account platform, for
 * development without credentials and for tests (no test ever reaches WeChat).
 *
 * It is a real HTTP server that speaks the parts of WeChat scanauth uses (`stable_token`, `token`,
 * `qrcode/create`, `showqrcode` with real PNG images), pushes signed and optionally encrypted scan
 * events to the app's callback like WeChat does (three deliveries when no answer comes within 5 s),
 * and has an HTML page where a person can "scan" a code by clicking it. It also plays web OAuth
 * (`connect/oauth2/authorize`, `sns/oauth2/access_token`) for confirm on the phone: the page shows the
 * account's replies with their links, and a link opens as the user who scanned.
 *
 * For reminders it plays the three send APIs (`message/template/subscribe`, `message/template/send`,
 * `message/custom/send`) with WeChat's rules (one message per confirmation and scene, followers only,
 * the customer-service window, a daily quota knob), the one-time subscription's confirm page
 * (`/mp/subscribemsg`), and shows every message the account sent on its page, links tappable as the
 * receiver (`reminderNotifierOptions()`, `messages()`, `confirmSubscription()`).
 *
 * {@link startWechatPayEmulator} starts a separate server that plays WeChat Pay API v3 (Native and
 * JSAPI orders, query, close, refunds): it checks every request's signature, signs every answer, and
 * sends encrypted, signed payment and refund notifications with WeChat's retries. It also serves a
 * stand-in for WeChat's `WeixinJSBridge` (`jsapiBridgeUrl`), so a JSAPI page pays in any browser.
 * The two emulators are independent: emulate either one while the other is real.
 *
 * @packageDocumentation
 */
import { createHash, randomBytes } from 'node:crypto'
import { decodeAesKey, SUBSCRIBE_SCENE_PREFIX } from '@scanauth/wechat'
import { ConfirmLinks } from './confirm-links'
import { WechatEmulatorError } from './errors'
import { FailureQueue } from './failures'
import { AUTHORIZE_PATH, EmulatorOAuthCodes } from './oauth'
import { openInWechat } from './open-in-wechat'
import { deliverPush, type PushSettings } from './push'
import { ScanLog } from './scan-log'
import { closeServer } from './listen'
import { listen } from './server'
import { EmulatorTickets } from './tickets'
import { EmulatorTokens } from './tokens'
import { EmulatorUsers } from './users'
import { SubscribeConsents } from './subscriptions'
import { DailyQuota, MessageLog } from './message-log'
import type { MessagingState } from './send-api'
import { SUBSCRIBE_CONFIRM_PATH } from './subscribe-page'
import { confirmSubscription } from './subscribe-in-wechat'
import type { EmulatorPushResult, EmulatorRequest, EmulatorScanInput, WechatEmulator, WechatEmulatorOptions } from './types'

export { WechatEmulatorError, type WechatEmulatorErrorCode } from './errors'
export type {
  WechatEmulator,
  WechatEmulatorOptions,
  EmulatorTicket,
  EmulatorRequest,
  EmulatorEndpoint,
  EmulatorFailure,
  EmulatorScanInput,
  EmulatorPushResult,
  EmulatorReply,
  EmulatorScan,
  EmulatorMessage,
  EmulatorMessageChannel,
  EmulatorSubscription,
} from './types'
export { SUBSCRIBE_CONFIRM_PATH } from './subscribe-page'

export { startWechatPayEmulator } from './pay/start'
export { WECHAT_PAY_RETRY_SCHEDULE_SECONDS, WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS } from './pay/notify'
export { defaultOpenidBelongs, FOREIGN_OPENID_PREFIX } from './pay/openids'
export { JSAPI_BRIDGE_PATH } from './pay/bridge'
export type {
  WechatPayEmulator,
  WechatPayEmulatorOptions,
  WechatPayKeyMode,
  WechatPayKnobs,
  WechatPayMerchantKey,
  WechatPayPayInput,
  WechatPayTradeState,
  WechatPayRefundStatus,
  WechatPayEmulatorOrder,
  WechatPayEmulatorRefund,
  WechatPayEmulatorNotification,
  WechatPayDeliveryAttempt,
  WechatPayEmulatorRequest,
} from './pay/types'

/**
 * Starts an emulated Official Account on a local port.
 *
 * @example
 * ```ts
 * const emulator = await startWechatEmulator({ appId: 'wx-test', appSecret: 's3cret', token: 'tok' })
 * const auth = createScanAuth({ store: new MemoryStore(), qr: createWechatQrProvider(emulator.qrProviderOptions()) })
 * emulator.setCallbackUrl('http://127.0.0.1:3000/wechat/callback')
 * const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
 * const pushed = await emulator.scan({ sceneStr, openid: 'o_user_1' }) // pushed.reply?.Content === 'Signed in.'
 * await emulator.close()
 * ```
 */
export async function startWechatEmulator(options: WechatEmulatorOptions): Promise<WechatEmulator> {
  for (const name of ['appId', 'appSecret', 'token'] as const) {
    if (typeof options?.[name] !== 'string' || options[name] === '') throw new WechatEmulatorError('invalid_options', `startWechatEmulator: ${name} is required`)
  }
  const { appId, appSecret, token } = options
  const now = options.now ?? Date.now
  const key = options.encodingAESKey === undefined ? null : accountKey(options.encodingAESKey)
  const mode = options.mode ?? (key ? 'safe' : 'plain')
  if (mode !== 'plain' && key === null) throw new WechatEmulatorError('invalid_options', `startWechatEmulator: mode '${mode}' needs encodingAESKey`)
  const accountId = options.accountId ?? `gh_${createHash('sha256').update(appId).digest('hex').slice(0, 12)}`
  const demoOpenid = options.demoOpenid ?? 'o_emulator_demo_user'

  let baseUrl = ''
  let callbackUrl: string | null = options.callbackUrl ?? null
  const closing = new AbortController()
  const users = new EmulatorUsers(demoOpenid)
  const consents = new SubscribeConsents()
  const messageLog = new MessageLog()
  if (options.dailySendQuota !== undefined && !isQuota(options.dailySendQuota)) {
    throw new WechatEmulatorError('invalid_options', 'startWechatEmulator: dailySendQuota must be a whole number from 0')
  }
  const quota = new DailyQuota(options.dailySendQuota ?? null, now)
  const subscribeTemplateId = optionalText('subscribeTemplateId', options.subscribeTemplateId)
  const templateIds = templateIdsOption(options.templateIds)
  const log: EmulatorRequest[] = []
  const failures = new FailureQueue()
  const scanLog = new ScanLog()
  const confirmLinks = new ConfirmLinks(closing.signal)
  const tokens = new EmulatorTokens({
    ttlSeconds: options.tokenTtlSeconds ?? 7200,
    overlapSeconds: options.classicTokenOverlapSeconds ?? 300,
    now,
  })
  const tickets = new EmulatorTickets({ baseUrl: () => baseUrl, now })
  const oauthCodes = new EmulatorOAuthCodes(now)
  const settings: PushSettings = {
    token,
    appId,
    accountId,
    key,
    mode,
    timeoutMs: options.pushTimeoutMs ?? 5000,
    attempts: options.pushAttempts ?? 3,
    now,
    closed: closing.signal,
  }

  const push = (fields: Record<string, string | number>): Promise<EmulatorPushResult> => {
    if (callbackUrl === null) return Promise.reject(new WechatEmulatorError('no_callback_url', 'no callback URL is set: call setCallbackUrl(url) first'))
    const event: Record<string, string> = { ToUserName: accountId, CreateTime: String(Math.floor(now() / 1000)) }
    for (const [name, value] of Object.entries(fields)) event[name] = String(value)
    if (!event.FromUserName) return Promise.reject(new WechatEmulatorError('invalid_argument', 'push: FromUserName (the openid) is required'))
    // WeChat knows the interaction whether or not the app answers: it opens the customer-service window.
    users.notePush(event, now())
    return deliverPush(callbackUrl, event, settings)
  }

  const scan = async (input: EmulatorScanInput): Promise<EmulatorPushResult> => {
    if (typeof input?.openid !== 'string' || input.openid === '') throw new WechatEmulatorError('invalid_argument', 'scan: openid is required')
    const code = input.ticket !== undefined ? tickets.byTicket(input.ticket) : input.sceneStr !== undefined ? tickets.latestLiveFor(input.sceneStr) : undefined
    if (input.ticket !== undefined && code === undefined) throw new WechatEmulatorError('unknown_ticket', 'scan: unknown ticket')
    if (code !== undefined && !code.live) {
      throw new WechatEmulatorError('expired_code', 'scan: the QR code has expired (WeChat shows "expired" and sends nothing)')
    }
    const sceneStr = code?.sceneStr ?? input.sceneStr
    if (sceneStr === undefined) throw new WechatEmulatorError('invalid_argument', 'scan: ticket or sceneStr is required')
    const subscribed = input.subscribed ?? users.follows(input.openid)
    const fields: Record<string, string> = {
      FromUserName: input.openid,
      MsgType: 'event',
      Event: subscribed ? 'SCAN' : 'subscribe',
      EventKey: subscribed ? sceneStr : `${SUBSCRIBE_SCENE_PREFIX}${sceneStr}`,
    }
    if (code !== undefined) fields.Ticket = code.ticket
    const at = now()
    const result = await push(fields)
    scanLog.add({ at, sceneStr, openid: input.openid, ticket: code?.ticket ?? null }, result)
    return result
  }

  const messaging: MessagingState = {
    users,
    consents,
    log: messageLog,
    quota,
    templateIds,
    subscribeTemplateId,
    now,
    onTemplateSent(message) {
      // WeChat reports each template message's delivery to the push URL; nobody waits for the answer.
      if (callbackUrl === null) return
      push({ FromUserName: message.openid, MsgType: 'event', Event: 'TEMPLATESENDJOBFINISH', MsgID: String(message.msgid), Status: 'success' }).catch(() => undefined)
    },
  }

  const { server, url } = await listen(
    { appId, appSecret, demoOpenid, baseUrl: () => baseUrl, tokens, tickets, oauthCodes, failures, log, scanLog, confirmLinks, messaging, now, scan },
    options.port ?? 0,
    options.host ?? '127.0.0.1',
  )
  baseUrl = url

  return {
    url,
    appId,
    accountId,
    qrProviderOptions: () => ({ appId, appSecret, apiBaseUrl: url, imageBaseUrl: url }),
    webOAuthOptions: () => ({ appId, appSecret, apiBase: url, authorizeBase: `${url}${AUTHORIZE_PATH}` }),
    openInWechat: (target, openOptions) =>
      openInWechat({ baseUrl: url, appId, demoOpenid, oauthCodes, log, now, closed: closing.signal }, target, openOptions),
    scan,
    sendText: ({ openid, content }) =>
      push({ FromUserName: openid, MsgType: 'text', Content: content, MsgId: randomBytes(8).readBigUInt64BE().toString() }),
    push,
    setCallbackUrl(next) {
      callbackUrl = next
    },
    tickets: () => tickets.all(),
    requests: () => log.map((entry) => ({ ...entry })),
    scans: () => scanLog.newestFirst(),
    failNext: (endpoint, failure, times) => failures.add(endpoint, failure, times),
    invalidateTokens: () => tokens.revokeAll(),
    reminderNotifierOptions: () => ({ appId, appSecret, apiBase: url, subscribeConfirmBase: `${url}${SUBSCRIBE_CONFIRM_PATH}` }),
    messages: () => messageLog.all(),
    subscriptions: () => consents.all(),
    setUser(openid, settings) {
      if (typeof openid !== 'string' || openid === '') throw new WechatEmulatorError('invalid_argument', 'setUser: openid is required')
      for (const name of ['follows', 'refusesMessages'] as const) {
        if (settings?.[name] !== undefined && typeof settings[name] !== 'boolean') throw new WechatEmulatorError('invalid_argument', `setUser: ${name} must be a boolean`)
      }
      users.set(openid, settings ?? {})
    },
    setDailySendQuota(limit) {
      if (limit !== null && !isQuota(limit)) throw new WechatEmulatorError('invalid_argument', 'setDailySendQuota: limit must be null or a whole number from 0')
      quota.setLimit(limit)
    },
    confirmSubscription: (target, confirmOptions) =>
      confirmSubscription(
        { baseUrl: url, appId, demoOpenid, oauthCodes, log, now, closed: closing.signal, subscribeTemplateId, consents, users },
        target,
        confirmOptions,
      ),
    async close() {
      closing.abort()
      await closeServer(server)
    },
  }
}

/** A daily quota: a whole number of calls, 0 or more. */
function isQuota(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
}

/** An optional non-empty text option, or null. */
function optionalText(name: string, value: unknown): string | null {
  if (value === undefined) return null
  if (typeof value !== 'string' || value === '') throw new WechatEmulatorError('invalid_options', `startWechatEmulator: ${name} must be a non-empty string`)
  return value
}

/** The account's template ids, or null (any id) when not given. */
function templateIdsOption(value: unknown): ReadonlySet<string> | null {
  if (value === undefined) return null
  if (!Array.isArray(value) || value.some((id) => typeof id !== 'string' || id === '')) {
    throw new WechatEmulatorError('invalid_options', 'startWechatEmulator: templateIds must be an array of non-empty strings')
  }
  return new Set(value as string[])
}

/** The account's AES key from its EncodingAESKey, refused as one of the emulator's own options. */
function accountKey(encodingAESKey: string): Buffer {
  try {
    return decodeAesKey(encodingAESKey)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new WechatEmulatorError('invalid_options', `startWechatEmulator: ${reason}`, { cause: error })
  }
}
