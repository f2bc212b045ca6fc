/**
 * The configuration of both example servers (Express and Koa), read from the environment.
 *
 * Environment:
 *
 * | variable | meaning |
 * |---|---|
 * | `PORT` | port to listen on (default 3000; 0 picks a free one) |
 * | `HOST` | address to listen on (default `127.0.0.1`, this machine only; `0.0.0.0` for every interface) |
 * | `SCANAUTH_STORE` | `sqlite` (default), `memory`, `redis` or `postgres` |
 * | `SCANAUTH_SQLITE_FILE` | SQLite file (default `./data/scanauth.sqlite`; the folder is created) |
 * | `REDIS_URL`, `SCANAUTH_REDIS_PREFIX` | Redis server (default `redis://127.0.0.1:6379`) and key prefix (default `scanauth:`) |
 * | `DATABASE_URL`, `SCANAUTH_PG_SCHEMA` | PostgreSQL database (default `postgres://postgres@127.0.0.1:5432/test`) and the schema of the store's tables (default `scanauth`; created at start) |
 * | `SCANAUTH_SCENE_TTL_SECONDS` | QR code lifetime (default 300; 1 to 2592000, WeChat's 30 days) |
 * | `SCANAUTH_FREE_TRIAL_DAYS` | length of the free trial in days (default 7); fractions work, e.g. `0.0007` ≈ 1 minute, to reach "Purchase needed" quickly |
 * | `SCANAUTH_CREATE_SCENE_PER_MINUTE` | QR codes one client address may ask for per minute (default 30; `0` turns the limit off) |
 * | `SCANAUTH_DAILY_QR_BUDGET` | QR codes the account may create per UTC day, all instances together (default 90000; `0` turns it off) |
 * | `SCANAUTH_PURGE_MINUTES` | minutes between purges of expired scenes, sessions and counters (default 60; `0` turns it off) |
 * | `WECHAT_APP_ID`, `WECHAT_APP_SECRET`, `WECHAT_TOKEN` | the Official Account; without the AppID and AppSecret an emulator is started |
 * | `WECHAT_ENCODING_AES_KEY` | safe-mode key (optional; 43 characters) |
 * | `WECHAT_API_BASE` | API base URL (default WeChat's), e.g. an emulator running elsewhere |
 * | `WECHATPAY_MCHID` | the WeChat Pay merchant id; unset, a WeChat Pay emulator runs in-process when the Official Account is emulated too; beside a real one, no payments (or a refusal to start when `SCANAUTH_PLANS` or `WECHATPAY_NOTIFY_URL` asks for them, unless `SCANAUTH_DEMO=1`) |
 * | `WECHATPAY_APPID` | the AppID bound to the merchant (default `WECHAT_APP_ID`; required when the Official Account is emulated) |
 * | `WECHATPAY_API_V3_KEY` | the APIv3 key (32 ASCII characters) |
 * | `WECHATPAY_PRIVATE_KEY_FILE`, `WECHATPAY_CERT_SERIAL` | the merchant API key (`apiclient_key.pem`, PEM RSA) and its certificate's serial |
 * | `WECHATPAY_PUBLIC_KEY_FILE`, `WECHATPAY_PUBLIC_KEY_ID` | WeChat Pay's public key (PEM RSA) and its id `PUB_KEY_ID_…` (public-key mode) |
 * | `WECHATPAY_API_BASE` | WeChat Pay's API base URL (default `https://api.mch.weixin.qq.com`), e.g. an emulator elsewhere |
 * | `WECHATPAY_NOTIFY_URL` | the `notify_url` WeChat Pay posts to (default the server's own `<address>/wechatpay/notify`; real WeChat Pay needs a public https URL); works with the emulator too |
 * | `SCANAUTH_PLANS` | the catalog, a JSON array as `GET /auth/plans` answers it: `[{"id","description","amount_fen","grant":{"type":"time","days"} or {"type":"points","points"}}]` (default: 30 days ¥19.90, 7 days ¥6.90, 100 points ¥9.90) |
 * | `SCANAUTH_RECONCILE_MINUTES` | minutes between reconciliations of open orders with WeChat Pay (default 1; `0` turns it off) |
 * | `SCANAUTH_CONFIRM` | `scan` (default: a scan signs the device in, as specified) or `link` (confirm on the phone: the scan's reply links to a confirm page behind WeChat web OAuth; docs/security.md) |
 * | `SCANAUTH_PUBLIC_URL` | the public base of this app for links, e.g. `https://app.example` (the confirm page is `<base>/auth/confirm`, the phone pay pages `<base>/auth/m/`; its host must be the account's web authorization domain). Default: the address the server listens at. With a real account and a real merchant, paying on the phone that scanned is on only when it is set (wiring.ts) |
 * | `SCANAUTH_REQUIRE_POLL_SECRET` | `true` gives every scene a `poll_secret` and the session token only to a poll that presents it (default `false`; `@scanauth/client` sends it) |
 * | `SCANAUTH_REMINDERS` | reminders before access ends: the lead days, e.g. `3,1` (fractions work: `0.0005` ≈ 43 s); unset, none. With it `SCANAUTH_REMINDERS_POINTS_BELOW`, `SCANAUTH_REMINDERS_INTERVAL_SECONDS` (default 60; `0`: no timer), `WECHAT_SUBSCRIBE_TEMPLATE_ID`, `WECHAT_TEMPLATE_ID_RENEWAL` and `WECHAT_TEMPLATE_FIELDS_RENEWAL` (reminder-config.ts) |
 * | `SCANAUTH_DEMO` | `1`: the demo routes (and the WeChat Pay emulator beside a real Official Account) whatever is real, with a warning in the log; `0`: the demo routes off. Unset: on only when fully emulated (demo-mode.ts) |
 *
 * In emulator mode, a `WECHAT_TOKEN` and a `WECHAT_ENCODING_AES_KEY` that are set are the emulated
 * account's: pushes you sign yourself (`curl`) are checked with your token, and with your key the
 * emulator pushes in safe mode (without it, in plain mode). Neither set: the emulator's own token and
 * a fresh key each run, safe mode.
 *
 * With `WECHATPAY_MCHID` set, every `WECHATPAY_*` variable but `WECHATPAY_API_BASE` and
 * `WECHATPAY_NOTIFY_URL` is required (`WECHATPAY_APPID` falls back to `WECHAT_APP_ID`), and the key
 * files are read and checked at start; without it, setting any of them but `WECHATPAY_NOTIFY_URL`
 * is a mistake. Amounts are integer fen (1990 = ¥19.90), never yuan.
 *
 * @module
 */
import { resolve } from 'node:path'
import type { Plan } from '@scanauth/core'
import { ConfigError } from './config-error'
import { emulatedPayRefusal } from './demo-mode'
import { plansFromEnv, wechatPayFromEnv, type WechatPayConfig } from './pay-config'
import { remindersFromEnv, type RemindersConfig } from './reminder-config'

export { ConfigError } from './config-error'
export { DEFAULT_PLANS, WECHAT_PAY_API_BASE, type WechatPayConfig } from './pay-config'
export type { RemindersConfig, ReminderFact } from './reminder-config'

/** Where the store lives. */
export type StoreConfig =
  | { kind: 'memory' }
  | { kind: 'sqlite'; filename: string }
  | { kind: 'redis'; url: string; keyPrefix: string }
  | { kind: 'postgres'; url: string; schema: string }

/**
 * The WeChat side: an emulator started in-process (with the Token and EncodingAESKey given in the
 * environment, if any), or an Official Account (at `apiBaseUrl`, default WeChat's).
 */
export type WechatConfig =
  | { kind: 'emulator'; token?: string; encodingAESKey?: string }
  | { kind: 'account'; appId: string; appSecret: string; token: string; encodingAESKey?: string; apiBaseUrl?: string }

/** Everything an example server needs; {@link configFromEnv} builds it from the environment. */
export interface ExampleConfig {
  port: number
  /** Listen address; default `127.0.0.1` (this machine only: the demo routes sign anyone in). */
  host?: string
  store: StoreConfig
  wechat: WechatConfig
  /** QR code lifetime in seconds (core's default 300 when absent). */
  sceneTtlSeconds?: number
  /** Length of the free trial in days, fractions allowed (core's default 7 when absent). */
  freeTrialDays?: number
  /** `create_scene` calls per client address per minute, or `false` for none (core's default 30 when absent). */
  createScenePerMinute?: number | false
  /** QR codes per UTC day for the account, or `false` for no budget (core's default 90 000 when absent). */
  dailyQrBudget?: number | false
  /**
   * Milliseconds between purges of expired records (`store.purgeExpired` with the service's clock,
   * keeping a day), or `false` for none. Default: an hour.
   */
  purgeEveryMs?: number | false
  /** Where log lines go. Default: standard output. */
  log?: (line: string) => void
  /** The clock of scanauth, in epoch milliseconds (tests move it to show expiry). Default `Date.now`. */
  now?: () => number
  /** The WeChat Pay side. Default: the emulator in-process, which a real Official Account refuses unless `demo` is true. */
  wechatPay?: WechatPayConfig
  /** The catalog (`SCANAUTH_PLANS`). Default {@link DEFAULT_PLANS}. */
  plans?: Plan[]
  /** Milliseconds between reconciliations of open orders (`auth.reconcileOrders()`), or `false` for none. Default: a minute. */
  reconcileEveryMs?: number | false
  /** What a scan means (`SCANAUTH_CONFIRM`): `scan` (default) or `link`, confirm on the phone. */
  confirm?: 'scan' | 'link'
  /** The public base of the app for links (`SCANAUTH_PUBLIC_URL`), without a trailing slash. Default: where the server listens. */
  publicUrl?: string
  /** Poll secrets (`SCANAUTH_REQUIRE_POLL_SECRET`). Default false. */
  requirePollSecret?: boolean
  /**
   * `SCANAUTH_DEMO`: true turns the demo routes on whatever is real (and lets a real Official Account
   * run with the WeChat Pay emulator), with a warning in the log; false turns them off. Absent: on
   * only when fully emulated (demo-mode.ts).
   */
  demo?: boolean
  /**
   * Reminders before access ends (`SCANAUTH_REMINDERS` and the variables beside it,
   * reminder-config.ts): core's `reminders` with `createWechatReminderNotifier`, a pass on a timer.
   * Absent: none.
   */
  reminders?: RemindersConfig
}

/** The longest free trial core accepts (`createScanAuth`'s `freeTrialDays`: at most 100 years). */
const MAX_FREE_TRIAL_DAYS = 100 * 365.25

/** The longest scene lifetime core accepts (`createScanAuth`'s `sceneTtlSeconds`: WeChat's 30 days). */
const MAX_SCENE_TTL_SECONDS = 2_592_000

/** The listen address when `HOST` is not set: this machine only. */
export const DEFAULT_HOST = '127.0.0.1'

/** The shape of an EncodingAESKey, as `@scanauth/wechat` checks it: 43 base64 characters. */
const ENCODING_AES_KEY = /^[A-Za-z0-9+/]{43}$/

/** The PostgreSQL database when `DATABASE_URL` is not set: the local server of the development setup. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'

/**
 * The names `PostgresStore` accepts for its schema (its `schema` option): checked here too, so that a
 * bad `SCANAUTH_PG_SCHEMA` stops the start naming the variable rather than the option.
 */
const PG_SCHEMA = /^[a-z_][a-z0-9_]{0,39}$/

/** Reads the configuration from environment variables (see the table at the top of this file). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const value = (name: string) => (env[name]?.trim() ? env[name].trim() : undefined)
  // The range is core's, so a value core would refuse stops the start here, with the variable's name.
  const integer = (name: string, fallback: number | undefined, min: number, max: number) => {
    const raw = value(name)
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not "${raw}"`)
    return n
  }

  const days = (name: string) => {
    const raw = value(name)
    if (raw === undefined) return undefined
    const n = Number(raw)
    // Plain decimals only ("7", "0.5", ".0007"): no exponents, hex or "Infinity".
    if (!/^(\d+\.?\d*|\.\d+)$/.test(raw) || !(n > 0) || n > MAX_FREE_TRIAL_DAYS) {
      throw new ConfigError(`${name} must be a number of days above 0 and at most ${MAX_FREE_TRIAL_DAYS} (e.g. 7, or 0.0007 for about a minute), not "${raw}"`)
    }
    return n
  }

  const kind = value('SCANAUTH_STORE') ?? 'sqlite'
  let store: StoreConfig
  if (kind === 'memory') store = { kind }
  else if (kind === 'sqlite') store = { kind, filename: resolve(value('SCANAUTH_SQLITE_FILE') ?? './data/scanauth.sqlite') }
  else if (kind === 'redis') store = { kind, url: value('REDIS_URL') ?? 'redis://127.0.0.1:6379', keyPrefix: value('SCANAUTH_REDIS_PREFIX') ?? 'scanauth:' }
  else if (kind === 'postgres') store = { kind, url: databaseUrl(value('DATABASE_URL')), schema: pgSchema(value('SCANAUTH_PG_SCHEMA')) }
  else throw new ConfigError(`SCANAUTH_STORE must be sqlite, memory, redis or postgres, not "${kind}"`)

  const account = { appId: value('WECHAT_APP_ID'), appSecret: value('WECHAT_APP_SECRET'), token: value('WECHAT_TOKEN') }
  const encodingAESKey = value('WECHAT_ENCODING_AES_KEY')
  if (encodingAESKey !== undefined && !ENCODING_AES_KEY.test(encodingAESKey)) {
    throw new ConfigError(`WECHAT_ENCODING_AES_KEY must be 43 characters from [A-Za-z0-9] (the account's EncodingAESKey), not ${encodingAESKey.length} characters`)
  }
  // Emulator mode takes a given Token and key for the emulated account rather than ignoring them.
  let wechat: WechatConfig = { kind: 'emulator' }
  if (account.token !== undefined) wechat.token = account.token
  if (encodingAESKey !== undefined) wechat.encodingAESKey = encodingAESKey
  if (account.appId !== undefined || account.appSecret !== undefined) {
    const missing = Object.entries({ WECHAT_APP_ID: account.appId, WECHAT_APP_SECRET: account.appSecret, WECHAT_TOKEN: account.token })
      .filter(([, v]) => v === undefined)
      .map(([k]) => k)
    if (missing.length > 0) throw new ConfigError(`${missing.join(', ')} must be set too (or unset WECHAT_APP_ID and WECHAT_APP_SECRET to use the emulator)`)
    wechat = {
      kind: 'account',
      appId: account.appId as string,
      appSecret: account.appSecret as string,
      token: account.token as string,
      encodingAESKey,
      apiBaseUrl: value('WECHAT_API_BASE'),
    }
  } else if (value('WECHAT_API_BASE') !== undefined) {
    throw new ConfigError('WECHAT_API_BASE needs WECHAT_APP_ID, WECHAT_APP_SECRET and WECHAT_TOKEN')
  }

  const demo = demoFlag(value('SCANAUTH_DEMO'))
  // The Official Account's AppID is the merchant's by default only when the account is real.
  let wechatPay = wechatPayFromEnv(value, wechat.kind === 'account' ? wechat.appId : undefined)
  // A real account without a merchant gets no payments rather than the emulator, which would pay any
  // order for nothing (demo-mode.ts); a variable that asks for payments makes it a mistake instead.
  if (wechat.kind === 'account' && wechatPay.kind === 'emulator' && demo !== true) {
    const wanted = ['SCANAUTH_PLANS', 'WECHATPAY_NOTIFY_URL'].filter((name) => value(name) !== undefined)
    if (wanted.length > 0) throw new ConfigError(emulatedPayRefusal(wanted))
    wechatPay = { kind: 'none' }
  }

  return {
    port: integer('PORT', 3000, 0, 65535) as number,
    host: value('HOST') ?? DEFAULT_HOST,
    store,
    wechat,
    sceneTtlSeconds: integer('SCANAUTH_SCENE_TTL_SECONDS', undefined, 1, MAX_SCENE_TTL_SECONDS),
    freeTrialDays: days('SCANAUTH_FREE_TRIAL_DAYS'),
    // 0 turns a limit off (core's `false`); the upper bound is core's.
    createScenePerMinute: limitOrOff(integer('SCANAUTH_CREATE_SCENE_PER_MINUTE', undefined, 0, 1_000_000_000)),
    dailyQrBudget: limitOrOff(integer('SCANAUTH_DAILY_QR_BUDGET', undefined, 0, 1_000_000_000)),
    purgeEveryMs: minutesOrOff(integer('SCANAUTH_PURGE_MINUTES', undefined, 0, 7 * 24 * 60)),
    wechatPay,
    plans: plansFromEnv(value('SCANAUTH_PLANS')),
    reconcileEveryMs: minutesOrOff(integer('SCANAUTH_RECONCILE_MINUTES', undefined, 0, 24 * 60)),
    confirm: confirmMode(value('SCANAUTH_CONFIRM')),
    publicUrl: publicUrl(value('SCANAUTH_PUBLIC_URL')),
    requirePollSecret: flag('SCANAUTH_REQUIRE_POLL_SECRET', value('SCANAUTH_REQUIRE_POLL_SECRET')),
    demo,
    ...withReminders(remindersFromEnv(value)),
  }
}

/** `{ reminders }` when they are configured, else nothing (the config stays without the key). */
function withReminders(reminders: RemindersConfig | undefined): { reminders?: RemindersConfig } {
  return reminders === undefined ? {} : { reminders }
}

/** `SCANAUTH_DEMO`: `1` or `0` (`true`, `false`); unset is undefined (the demo routes only when fully emulated). */
function demoFlag(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined
  if (raw === '1' || raw === 'true') return true
  if (raw === '0' || raw === 'false') return false
  throw new ConfigError(`SCANAUTH_DEMO must be 1 (the demo routes on, whatever is real) or 0 (off), not "${raw}"`)
}

/** `SCANAUTH_CONFIRM`: `scan` or `link`. */
function confirmMode(raw: string | undefined): 'scan' | 'link' {
  if (raw === undefined || raw === 'scan') return 'scan'
  if (raw === 'link') return 'link'
  throw new ConfigError(`SCANAUTH_CONFIRM must be scan (a scan signs in) or link (confirm on the phone), not "${raw}"`)
}

/** `SCANAUTH_PUBLIC_URL`: an http(s) base without a query, kept without its trailing slash. */
function publicUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`SCANAUTH_PUBLIC_URL must be an http(s) URL such as https://app.example, not "${raw}"`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`SCANAUTH_PUBLIC_URL must be an http(s) URL without a query, such as https://app.example, not "${raw}"`)
  }
  return raw.replace(/\/+$/, '')
}

/** A true/false variable. */
function flag(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === 'false' || raw === '0') return false
  if (raw === 'true' || raw === '1') return true
  throw new ConfigError(`${name} must be true or false, not "${raw}"`)
}

/**
 * `DATABASE_URL` as node-postgres reads it: a `postgres://` or `postgresql://` URL (a Unix socket
 * goes in its `host` parameter). Anything else stops here, since node-postgres would take a typo for
 * a host name and fail later with a less helpful message. The value is never echoed: it may hold a
 * password.
 */
function databaseUrl(raw: string | undefined): string {
  if (raw === undefined) return DEFAULT_DATABASE_URL
  let protocol: string | undefined
  try {
    protocol = new URL(raw).protocol
  } catch {
    protocol = undefined
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL, e.g. postgres://user:password@127.0.0.1:5432/database')
  }
  return raw
}

/** `SCANAUTH_PG_SCHEMA`, default `scanauth`: a name `PostgresStore` takes as it is. */
function pgSchema(raw: string | undefined): string {
  if (raw === undefined) return 'scanauth'
  if (!PG_SCHEMA.test(raw)) throw new ConfigError(`SCANAUTH_PG_SCHEMA must be 1 to 40 characters of a-z, 0-9 and _, not starting with a digit, not "${raw}"`)
  return raw
}

/** A limit read from the environment: absent stays absent (core's default), 0 is off. */
function limitOrOff(value: number | undefined): number | false | undefined {
  return value === 0 ? false : value
}

/** A number of minutes as milliseconds; `0` means off (`false`); absent stays absent (the default). */
function minutesOrOff(minutes: number | undefined): number | false | undefined {
  if (minutes === undefined) return undefined
  return minutes === 0 ? false : minutes * 60_000
}
