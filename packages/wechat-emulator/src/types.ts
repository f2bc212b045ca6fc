/**
 * The public shapes of the emulator: its options, the handle `startWechatEmulator` returns, and what
 * its methods return.
 *
 * @module
 */

/** Options of `startWechatEmulator`. The account values are anything you like; the app under test must use the same ones. */
export interface WechatEmulatorOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string
  /** The emulated account's AppID. */
  appId: string
  /** Its AppSecret: the token endpoints refuse any other. */
  appSecret: string
  /** The Token pushes are signed with. */
  token: string
  /** The EncodingAESKey; when set, pushes are encrypted (see `mode`). */
  encodingAESKey?: string
  /** `plain`, `compatible` (plain fields and Encrypt) or `safe` (Encrypt only). Default `safe` with a key, else `plain`. */
  mode?: 'plain' | 'compatible' | 'safe'
  /** Where scans are pushed (the app's callback URL). Can be set later with `setCallbackUrl`. */
  callbackUrl?: string
  /** The account's original ID, sent as ToUserName. Default derived from the AppID (`gh_…`). */
  accountId?: string
  /** How long an old classic token stays valid after a new one is fetched. Default 300 s, like WeChat. */
  classicTokenOverlapSeconds?: number
  /** Lifetime of access tokens. Default 7200 s. */
  tokenTtlSeconds?: number
  /** How long to wait for the callback's answer before trying again. Default 5000 ms, like WeChat. */
  pushTimeoutMs?: number
  /** Deliveries per push when no answer comes in time. Default 3, like WeChat. */
  pushAttempts?: number
  /**
   * The openid the HTML page scans with unless the person types another, and the phone's user on the
   * web OAuth authorize page when no `wxemu_openid` cookie names one. Default `o_emulator_demo_user`.
   */
  demoOpenid?: string
  /** Clock in epoch milliseconds (token and ticket expiry, CreateTime, push timestamps). Default `Date.now`. */
  now?: () => number
  /**
   * The account's template message ids: `message/template/send` answers 40037 for any other. Default:
   * every non-empty id is the account's.
   */
  templateIds?: string[]
  /**
   * The account's one-time subscription template id: the confirm page refuses, and
   * `message/template/subscribe` answers 40037 for, any other. Default: any non-empty id.
   */
  subscribeTemplateId?: string
  /**
   * Calls each send API (`message/template/send`, `message/template/subscribe`,
   * `message/custom/send`) takes per day (Beijing's, on the emulator's clock) before answering 45009.
   * Default: no limit. `setDailySendQuota` changes it.
   */
  dailySendQuota?: number
}

/** A QR code the emulator created. */
export interface EmulatorTicket {
  /** The ticket WeChat would answer (ends in `==`); exchanged for the image at `showqrcode`. */
  ticket: string
  /** The scene: `scene_str`, or `scene_id` as text. */
  sceneStr: string
  /** What the QR image decodes to: an emulator page that scans this code. */
  url: string
  /** The image, `{emulator}/cgi-bin/showqrcode?ticket=...`. */
  imageUrl: string
  /** Epoch milliseconds; null for a permanent code. */
  expiresAt: number | null
  /** False once expired. */
  live: boolean
}

/** One request the emulator's API received (secrets and tokens are not recorded). */
export interface EmulatorRequest {
  /** Epoch milliseconds, on the emulator's clock. */
  at: number
  /** The HTTP method, `GET` or `POST`. */
  method: string
  /** The path without the query, e.g. `/cgi-bin/qrcode/create`. */
  path: string
  /** The HTTP status answered; 0 when the request was left hanging. */
  status: number
  /** The errcode answered, when it was an API error. */
  errcode?: number
}

/** An API endpoint whose next answer can be replaced by {@link EmulatorFailure}. */
export type EmulatorEndpoint =
  | 'stable_token'
  | 'token'
  | 'qrcode/create'
  | 'showqrcode'
  | 'sns/oauth2/access_token'
  | 'message/template/send'
  | 'message/template/subscribe'
  | 'message/custom/send'

/** A send API of the account, as `messages()` names the channel a message came through. */
export type EmulatorMessageChannel = 'subscribe' | 'template' | 'custom'

/** A message the account sent and WeChat accepted: what the phone's chat shows. */
export interface EmulatorMessage {
  /** When it was accepted, epoch milliseconds on the emulator's clock. */
  at: number
  /** The `msgid` answered. */
  msgid: number
  /** `subscribe` (one-time subscription), `template` or `custom` (customer-service text). */
  channel: EmulatorMessageChannel
  /** Who received it. */
  openid: string
  /** The template id (`subscribe`, `template`); null for `custom`. */
  templateId: string | null
  /** The `scene` of a `subscribe` message; else null. */
  scene: string | null
  /** The `title` of a `subscribe` message; else null. */
  title: string | null
  /** The text the phone shows: the content (`subscribe`), the fields as `key: value` lines (`template`), the text (`custom`, its `<a href>` links tappable on the page). */
  text: string
  /** The fields of a `template` message, `key → value`; else null. */
  data: Record<string, string> | null
  /** The message's `url`, opened when it is tapped (`subscribe`, `template`); null without one. */
  url: string | null
}

/** A one-time subscription confirmation not yet spent. */
export interface EmulatorSubscription {
  /** Who confirmed. */
  openid: string
  /** The template id confirmed. */
  templateId: string
  /** The scene confirmed, as the confirm link carried it. */
  scene: string
  /** When, epoch milliseconds on the emulator's clock. */
  at: number
}

/** A replacement for one answer of an endpoint. */
export type EmulatorFailure =
  /** Answer HTTP 200 with `{errcode, errmsg}`. */
  | {
      /** The WeChat error code to answer, e.g. 45009 (daily quota used up). */
      errcode: number
      /** Its message. Default `emulated failure` (a `rid` is appended, as WeChat does). */
      errmsg?: string
    }
  /** Answer this HTTP status with this body (default empty), e.g. `{ httpStatus: 200, body: '<html>' }` for "not JSON". */
  | {
      /** The HTTP status to answer. */
      httpStatus: number
      /** The body to answer. Default empty. */
      body?: string
    }
  /** Never answer (until `close`): for timeout tests. */
  | {
      /** Leave the request hanging until the emulator closes. */
      hang: true
    }
  /** Answer normally, after a delay: for concurrency tests. */
  | {
      /** Milliseconds to wait before answering normally. */
      delayMs: number
    }

/** Input of `scan`: which code, and who scans it. */
export interface EmulatorScanInput {
  /** The ticket of a code the emulator created. */
  ticket?: string
  /** The scene; used to find the latest live code for it, or pushed as is when there is none. */
  sceneStr?: string
  /** The scanning user's openid. */
  openid: string
  /**
   * Whether the user already follows the account: `true` sends `SCAN` (raw scene), `false` sends
   * `subscribe` with `qrscene_` + scene. Default: whether this openid has followed before in this
   * emulator (the first scan of a new openid subscribes it).
   */
  subscribed?: boolean
}

/** The passive reply the callback sent, decrypted when it came encrypted. */
export interface EmulatorReply {
  /** The reply's type, e.g. `text`. */
  MsgType: string
  /** The user it is addressed to: the openid that scanned. */
  ToUserName: string
  /** The account's original ID (`gh_…`). */
  FromUserName: string
  /** When the reply was made, epoch seconds as text. */
  CreateTime: string
  /** For text replies. */
  Content?: string
  /** True when it came encrypted. */
  encrypted: boolean
}

/** What happened to one push. */
export interface EmulatorPushResult {
  /** Deliveries made (more than 1 when the callback did not answer in time). */
  attempts: number
  /** HTTP status of the callback's answer; null when none came after every attempt. */
  status: number | null
  /** The answer's body; null when none came. */
  body: string | null
  /** The passive reply, or null for `success` / an empty answer / no answer / an unreadable one. */
  reply: EmulatorReply | null
  /** Why WeChat would not accept the answer (the user would see "this account cannot provide service"), or null. */
  replyError: string | null
  /** The pushed message's fields (before encryption). */
  event: Record<string, string>
}

/** One scan the emulator made and pushed to the callback, as its page lists them. */
export interface EmulatorScan {
  /** When it was pushed, epoch milliseconds on the emulator's clock. */
  at: number
  /** The scanned scene. */
  sceneStr: string
  /** Who scanned. */
  openid: string
  /** The code's ticket; null when the scene was pushed without a code the emulator created. */
  ticket: string | null
  /** `SCAN` (the user already followed the account) or `subscribe` (followed through the code). */
  event: 'SCAN' | 'subscribe'
  /** Deliveries made (more than 1 when the callback did not answer in time). */
  attempts: number
  /** HTTP status of the callback's answer; null when none came. */
  status: number | null
  /** The text the account replied (decrypted), or null. */
  reply: string | null
  /** Why WeChat would not accept the answer, or null. */
  replyError: string | null
}

/** A running emulator. */
export interface WechatEmulator {
  /** Base URL, e.g. `http://127.0.0.1:53012`: use it as `apiBaseUrl` (and image base) of `createWechatQrProvider`. */
  readonly url: string
  /** The emulated AppID. */
  readonly appId: string
  /** The ToUserName of pushes (`gh_…`). */
  readonly accountId: string
  /** The options to give `createWechatQrProvider` to use this emulator. */
  qrProviderOptions(): {
    /** The emulated AppID. */
    appId: string
    /** The emulated AppSecret. */
    appSecret: string
    /** The emulator's {@link WechatEmulator.url}: API calls go there. */
    apiBaseUrl: string
    /** The emulator's {@link WechatEmulator.url} too: `showqrcode` images come from there. */
    imageBaseUrl: string
  }
  /**
   * Scans a code as `openid` and pushes the event to the callback URL; resolves with what happened.
   * Rejects with a `WechatEmulatorError`: `unknown_ticket`, `expired_code`, `no_callback_url`,
   * `invalid_argument` (no openid, neither ticket nor sceneStr) or `closed`.
   */
  scan(input: EmulatorScanInput): Promise<EmulatorPushResult>
  /** Pushes a text message from `openid` (it goes to the app's `onMessage`). */
  sendText(input: { openid: string; content: string }): Promise<EmulatorPushResult>
  /**
   * Pushes any message: `FromUserName`, `MsgType` and the rest; `ToUserName` and `CreateTime` are
   * filled in when absent. Rejects with a `WechatEmulatorError` `invalid_argument` without
   * `FromUserName`, `no_callback_url` or `closed`.
   */
  push(fields: Record<string, string | number>): Promise<EmulatorPushResult>
  /**
   * The options to give `createWechatWebOAuth` (of `@scanauth/wechat`) to use this emulator's web
   * OAuth: the authorize page at `{url}/connect/oauth2/authorize` and `sns/oauth2/access_token`.
   */
  webOAuthOptions(): {
    /** The emulated AppID. */
    appId: string
    /** The emulated AppSecret. */
    appSecret: string
    /** The emulator's {@link WechatEmulator.url}: the code is exchanged there. */
    apiBase: string
    /** `{url}/connect/oauth2/authorize`: the authorize page. */
    authorizeBase: string
  }
  /**
   * Opens `url` in the emulated WeChat as `openid` (default: the `demoOpenid`), the way a tap on a
   * link in a chat does: follows the app's redirects (not its final page) until they reach this
   * emulator's authorize page, which issues a code for `openid`; resolves with the address the phone
   * is then sent to: the app's `redirect_uri` with `code` and `state`. Fetch it to get the app's page.
   * When the app answers without sending the phone to the authorize page (an error page, say), resolves
   * with the address that answered. Rejects with a `WechatEmulatorError`: `invalid_argument` (not an
   * http(s) URL, an empty openid), `oauth_refused` (the authorize page refuses the request, the chain
   * leads to the real WeChat, or more than 10 redirects) or `closed`; and with `fetch`'s error when
   * the app cannot be reached.
   */
  openInWechat(url: string, options?: { openid?: string }): Promise<string>
  /** Sets (or with null clears) where pushes go. */
  setCallbackUrl(url: string | null): void
  /** Every code created so far, live or not. */
  tickets(): EmulatorTicket[]
  /** The API requests received, oldest first. */
  requests(): EmulatorRequest[]
  /**
   * The scans made (by `scan`, or by a click on the page) and what the callback answered, newest
   * first; the last 200 are kept. The page lists them, from `GET /emulator/scans`.
   */
  scans(): EmulatorScan[]
  /**
   * Replaces the next `times` (default 1) answers of `endpoint` (`cgi-bin/` prefix optional) with
   * `failure`, e.g. `failNext('qrcode/create', { errcode: 45009, errmsg: 'api freq out of limit' })`.
   * Throws a `WechatEmulatorError` `invalid_argument` for an unknown endpoint or a bad `times`.
   */
  failNext(endpoint: EmulatorEndpoint | `cgi-bin/${EmulatorEndpoint}`, failure: EmulatorFailure, times?: number): void
  /** Makes every access token issued so far invalid (as if another party forced a refresh): calls get 40001. */
  invalidateTokens(): void
  /**
   * The options to give `createWechatReminderNotifier` (of `@scanauth/wechat`) to use this emulator:
   * the send APIs at {@link WechatEmulator.url} and the one-time subscription's confirm page at
   * `{url}/mp/subscribemsg`. Add `subscribe`, `template` as the app configures them.
   */
  reminderNotifierOptions(): {
    /** The emulated AppID. */
    appId: string
    /** The emulated AppSecret. */
    appSecret: string
    /** The emulator's {@link WechatEmulator.url}: the send APIs. */
    apiBase: string
    /** `{url}/mp/subscribemsg`: the confirm page. */
    subscribeConfirmBase: string
  }
  /** The messages the account sent and WeChat accepted, oldest first (the last 500). The page shows them as the chat. */
  messages(): EmulatorMessage[]
  /** The one-time subscription confirmations not yet spent, oldest first. */
  subscriptions(): EmulatorSubscription[]
  /**
   * Sets up a user: `follows` (template messages reach followers only: 43004; unfollowing also closes
   * the customer-service window), `refusesMessages` (the user turned the account's messages off:
   * template messages answer 43101). The user becomes known to the account (else sends answer 40003).
   */
  setUser(openid: string, settings: { follows?: boolean; refusesMessages?: boolean }): void
  /** Changes the daily quota of each send API (null: no limit); see `dailySendQuota`. */
  setDailySendQuota(limit: number | null): void
  /**
   * The phone opens `url` (the subscribemsg confirm link, or an app link that redirects to it) and
   * taps Confirm (default) or Cancel as `openid` (default `demoOpenid`): follows redirects (the web
   * OAuth authorize page answered for `openid` on the way) until the confirm page, answers it, and
   * resolves with where WeChat sends the phone: `redirect_url` with `openid` (on confirm),
   * `template_id`, `action`, `scene` and `reserved`. A Confirm is recorded: one subscribe send for that
   * scene. Rejects with a `WechatEmulatorError` `invalid_argument` (not an http(s) URL, an empty
   * openid), `subscribe_refused` (the page refuses the link, the chain leads to the real WeChat or
   * nowhere, more than 10 redirects), `oauth_refused` or `closed`.
   */
  confirmSubscription(url: string, options?: { openid?: string; action?: 'confirm' | 'cancel' }): Promise<string>
  /** Stops the server, ends hanging requests and aborts pushes in flight. */
  close(): Promise<void>
}
