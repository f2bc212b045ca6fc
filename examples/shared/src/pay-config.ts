/**
 * The WeChat Pay half of the configuration (`WECHATPAY_*` and `SCANAUTH_PLANS`), read by
 * `configFromEnv` (config.ts, whose header table lists every variable).
 *
 * Without `WECHATPAY_MCHID` the server runs the WeChat Pay emulator in-process; with it, WeChat Pay is
 * real (or an emulator elsewhere, at `WECHATPAY_API_BASE`) and every other variable it needs is
 * required and checked here, so a mistake stops the start naming the variable instead of failing at
 * the first purchase or, worse, at the first notification. Key files are read here too: a path that
 * cannot be read, or a file that is not a PEM key, is a configuration mistake like any other.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { isPlanAmountFen, isPlanDays, isPlanDescription, isPlanPoints, PLAN_ID_PATTERN, type Plan, type PlanGrant } from '@scanauth/core'
import { ConfigError } from './config-error'

/** WeChat Pay's API host, where a real merchant's requests go unless `WECHATPAY_API_BASE` says otherwise. */
export const WECHAT_PAY_API_BASE = 'https://api.mch.weixin.qq.com'

/**
 * The WeChat Pay side: an emulator started in-process, a merchant (real WeChat Pay, or an emulator
 * elsewhere at `apiBaseUrl`) in public-key mode, or none at all (`none`: payments off, what a real
 * Official Account without `WECHATPAY_MCHID` or `SCANAUTH_PLANS` gets; see demo-mode.ts).
 * `notifyUrl` absent: the server's own `<listening address>/wechatpay/notify`, known once it listens.
 */
export type WechatPayConfig =
  | { kind: 'none' }
  | { kind: 'emulator'; notifyUrl?: string }
  | {
      kind: 'merchant'
      /** `WECHATPAY_MCHID`. */
      mchid: string
      /** `WECHATPAY_APPID`, else `WECHAT_APP_ID`: the AppID bound to the merchant. */
      appid: string
      /** `WECHATPAY_API_V3_KEY`: 32 ASCII characters; notifications are encrypted with it. */
      apiV3Key: string
      /** The PEM text of `WECHATPAY_PRIVATE_KEY_FILE` (`apiclient_key.pem`). */
      merchantPrivateKeyPem: string
      /** `WECHATPAY_CERT_SERIAL`: the merchant API certificate's serial. */
      merchantCertSerial: string
      /** `WECHATPAY_PUBLIC_KEY_ID` (`PUB_KEY_ID_…`): names the key below, and asks WeChat Pay to sign answers with it. */
      publicKeyId: string
      /** The PEM text of `WECHATPAY_PUBLIC_KEY_FILE`: WeChat Pay's public key (`pub_key.pem`). */
      publicKeyPem: string
      /** `WECHATPAY_API_BASE`, default {@link WECHAT_PAY_API_BASE}. */
      apiBaseUrl: string
      /** `WECHATPAY_NOTIFY_URL`. */
      notifyUrl?: string
    }

/**
 * The catalog when `SCANAUTH_PLANS` is not set: two time passes and a points pack, priced like a
 * small subscription, so the demo page has something to offer.
 */
export const DEFAULT_PLANS: readonly Plan[] = Object.freeze([
  { id: 'days-30', description: '30 days of access', amountFen: 1990, grant: { type: 'time', days: 30 } },
  { id: 'days-7', description: '7 days of access', amountFen: 690, grant: { type: 'time', days: 7 } },
  { id: 'points-100', description: '100 points', amountFen: 990, grant: { type: 'points', points: 100 } },
])

/** The variables that only mean something with a real merchant (`WECHATPAY_NOTIFY_URL` works with the emulator too). */
const MERCHANT_ONLY = [
  'WECHATPAY_APPID',
  'WECHATPAY_API_V3_KEY',
  'WECHATPAY_PRIVATE_KEY_FILE',
  'WECHATPAY_CERT_SERIAL',
  'WECHATPAY_PUBLIC_KEY_FILE',
  'WECHATPAY_PUBLIC_KEY_ID',
  'WECHATPAY_API_BASE',
] as const

/** WeChat Pay's `mchid` and `appid` are short ids of letters and digits; anything else is a paste error. */
const MCHID = /^[0-9A-Za-z_-]{1,32}$/
const APPID = /^[0-9A-Za-z_-]{1,32}$/
/** The merchant certificate serial: WeChat issues 40 hex digits; any run of letters and digits passes. */
const CERT_SERIAL = /^[0-9A-Za-z]{1,64}$/
/** A WeChat Pay public key id, as the merchant platform shows it. */
const PUBLIC_KEY_ID = /^PUB_KEY_ID_[0-9A-Za-z_]{1,64}$/
/** WeChat Pay's APIv3 key: exactly 32 printable ASCII characters. */
const API_V3_KEY = /^[\x21-\x7e]{32}$/

/** Reads one variable, trimmed; undefined when unset or blank. */
export type EnvReader = (name: string) => string | undefined

/**
 * The WeChat Pay side from the environment. `wechatAppId` is `WECHAT_APP_ID` (the Official Account's
 * AppID, the default of `WECHATPAY_APPID`), undefined when the Official Account is emulated.
 */
export function wechatPayFromEnv(value: EnvReader, wechatAppId: string | undefined): WechatPayConfig {
  const notifyUrl = notifyUrlOf(value('WECHATPAY_NOTIFY_URL'))
  const mchid = value('WECHATPAY_MCHID')
  if (mchid === undefined) {
    const stray = MERCHANT_ONLY.filter((name) => value(name) !== undefined)
    if (stray.length > 0) {
      throw new ConfigError(`${stray.join(', ')} ${stray.length === 1 ? 'needs' : 'need'} WECHATPAY_MCHID (a real merchant): set it, or unset ${stray.length === 1 ? 'it' : 'them'} to use the WeChat Pay emulator`)
    }
    return notifyUrl === undefined ? { kind: 'emulator' } : { kind: 'emulator', notifyUrl }
  }
  if (!MCHID.test(mchid)) throw new ConfigError(`WECHATPAY_MCHID must be the merchant id (1 to 32 letters and digits), not "${mchid}"`)

  const appid = value('WECHATPAY_APPID') ?? wechatAppId
  const required = {
    WECHATPAY_APPID: appid,
    WECHATPAY_API_V3_KEY: value('WECHATPAY_API_V3_KEY'),
    WECHATPAY_PRIVATE_KEY_FILE: value('WECHATPAY_PRIVATE_KEY_FILE'),
    WECHATPAY_CERT_SERIAL: value('WECHATPAY_CERT_SERIAL'),
    WECHATPAY_PUBLIC_KEY_FILE: value('WECHATPAY_PUBLIC_KEY_FILE'),
    WECHATPAY_PUBLIC_KEY_ID: value('WECHATPAY_PUBLIC_KEY_ID'),
  }
  const missing = Object.entries(required)
    .filter(([, v]) => v === undefined)
    .map(([k]) => (k === 'WECHATPAY_APPID' ? 'WECHATPAY_APPID (or WECHAT_APP_ID with a real Official Account)' : k))
  if (missing.length > 0) {
    throw new ConfigError(`with WECHATPAY_MCHID set, WeChat Pay is real: ${missing.join(', ')} must be set too (or unset WECHATPAY_MCHID to use the WeChat Pay emulator)`)
  }
  const r = required as Record<keyof typeof required, string>
  if (!APPID.test(r.WECHATPAY_APPID)) {
    const from = value('WECHATPAY_APPID') === undefined ? 'WECHAT_APP_ID (the default of WECHATPAY_APPID)' : 'WECHATPAY_APPID'
    throw new ConfigError(`${from} must be the AppID bound to the merchant (1 to 32 letters and digits), not "${r.WECHATPAY_APPID}"`)
  }
  // The key is a secret: its length is said, never the key.
  if (!API_V3_KEY.test(r.WECHATPAY_API_V3_KEY)) {
    throw new ConfigError(`WECHATPAY_API_V3_KEY must be the APIv3 key, 32 ASCII characters without spaces, not ${r.WECHATPAY_API_V3_KEY.length} characters`)
  }
  if (!CERT_SERIAL.test(r.WECHATPAY_CERT_SERIAL)) {
    throw new ConfigError(`WECHATPAY_CERT_SERIAL must be the serial of the merchant API certificate (hex digits, e.g. 40 of them), not "${r.WECHATPAY_CERT_SERIAL}"`)
  }
  if (!PUBLIC_KEY_ID.test(r.WECHATPAY_PUBLIC_KEY_ID)) {
    throw new ConfigError(`WECHATPAY_PUBLIC_KEY_ID must be WeChat Pay's public key id, PUB_KEY_ID_ and digits, not "${r.WECHATPAY_PUBLIC_KEY_ID}"`)
  }
  const merchantPrivateKeyPem = keyFile('WECHATPAY_PRIVATE_KEY_FILE', r.WECHATPAY_PRIVATE_KEY_FILE, 'private')
  const publicKeyPem = keyFile('WECHATPAY_PUBLIC_KEY_FILE', r.WECHATPAY_PUBLIC_KEY_FILE, 'public')
  const config: WechatPayConfig = {
    kind: 'merchant',
    mchid,
    appid: r.WECHATPAY_APPID,
    apiV3Key: r.WECHATPAY_API_V3_KEY,
    merchantPrivateKeyPem,
    merchantCertSerial: r.WECHATPAY_CERT_SERIAL,
    publicKeyId: r.WECHATPAY_PUBLIC_KEY_ID,
    publicKeyPem,
    apiBaseUrl: apiBaseOf(value('WECHATPAY_API_BASE')),
  }
  if (notifyUrl !== undefined) config.notifyUrl = notifyUrl
  return config
}

/**
 * A key file's PEM text, checked to be the kind of RSA key it should be: the merchant's private key
 * (`apiclient_key.pem`) or WeChat Pay's public key (`pub_key.pem`). Swapped files are the common
 * mistake, so each says what it got.
 */
function keyFile(name: string, path: string, kind: 'private' | 'public'): string {
  const file = resolve(path)
  let pem: string
  try {
    pem = readFileSync(file, 'utf8')
  } catch (error) {
    const reason = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error))
    throw new ConfigError(`${name}: cannot read ${file} (${reason})`)
  }
  const expected = kind === 'private' ? "a PEM private key (the merchant's apiclient_key.pem)" : "a PEM public key (WeChat Pay's pub_key.pem)"
  if (!pem.includes('-----BEGIN ')) throw new ConfigError(`${name}: ${file} is not ${expected}`)
  if (kind === 'public' && pem.includes('PRIVATE KEY-----')) throw new ConfigError(`${name}: ${file} is a private key, not ${expected}`)
  let key: KeyObject
  try {
    key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem)
  } catch {
    throw new ConfigError(`${name}: ${file} is not ${expected}`)
  }
  if (key.asymmetricKeyType !== 'rsa') throw new ConfigError(`${name}: ${file} is a ${key.asymmetricKeyType} key; WeChat Pay keys are RSA`)
  return pem
}

/** `WECHATPAY_API_BASE`: an http(s) URL, default WeChat Pay's; a trailing slash is dropped. */
function apiBaseOf(raw: string | undefined): string {
  if (raw === undefined) return WECHAT_PAY_API_BASE
  const url = httpUrl(raw)
  if (url === undefined) throw new ConfigError(`WECHATPAY_API_BASE must be an http(s) URL such as ${WECHAT_PAY_API_BASE}, not "${raw}"`)
  return raw.replace(/\/+$/, '')
}

/** `WECHATPAY_NOTIFY_URL`: what WeChat Pay accepts as `notify_url` (absolute, no query string, at most 255 characters). */
function notifyUrlOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const url = httpUrl(raw)
  if (url === undefined || url.search !== '' || url.hash !== '' || raw.length > 255) {
    throw new ConfigError(`WECHATPAY_NOTIFY_URL must be an absolute http(s) URL (https for real WeChat Pay) without a query string, at most 255 characters (e.g. https://example.com/wechatpay/notify), not "${raw}"`)
  }
  return raw
}

function httpUrl(raw: string): URL | undefined {
  try {
    const url = new URL(raw)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined
  } catch {
    return undefined
  }
}

/** The fields a plan of `SCANAUTH_PLANS` has, in the shape `GET /auth/plans` answers. */
const PLAN_FIELDS = ['id', 'description', 'amount_fen', 'grant']

/**
 * `SCANAUTH_PLANS`: a JSON array of plans as `GET /auth/plans` answers them (`id`, `description`,
 * `amount_fen`, `grant`), turned into core's plans. Undefined when unset (the default catalog).
 * Each mistake names the plan's index and field. The rules are core's (B-order-1: `isPlanAmountFen`,
 * `isPlanDescription`, `isPlanDays`, `isPlanPoints`); they are asked here only so that a mistake is
 * told with this variable's names instead of `createScanAuth`'s option names.
 */
export function plansFromEnv(raw: string | undefined): Plan[] | undefined {
  if (raw === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (error) {
    throw new ConfigError(`SCANAUTH_PLANS must be a JSON array of plans: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new ConfigError('SCANAUTH_PLANS must be a JSON array of at least one plan, e.g. [{"id":"days-30","description":"30 days","amount_fen":1990,"grant":{"type":"time","days":30}}]')
  }
  const seen = new Set<string>()
  return parsed.map((entry: unknown, index) => {
    const plan = planOf(entry, `SCANAUTH_PLANS[${index}]`)
    if (seen.has(plan.id)) throw new ConfigError(`SCANAUTH_PLANS[${index}].id "${plan.id}" is used by an earlier plan: ids must be unique`)
    seen.add(plan.id)
    return plan
  })
}

function planOf(entry: unknown, at: string): Plan {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ConfigError(`${at} must be an object with ${PLAN_FIELDS.join(', ')}`)
  const fields = entry as Record<string, unknown>
  const unknown = Object.keys(fields).find((key) => !PLAN_FIELDS.includes(key))
  if (unknown !== undefined) throw new ConfigError(`${at} has an unknown field "${unknown}" (a plan has ${PLAN_FIELDS.join(', ')})`)
  const { id, description, amount_fen: fen } = fields
  if (typeof id !== 'string' || !PLAN_ID_PATTERN.test(id)) throw new ConfigError(`${at}.id must be 1 to 64 characters of 0-9 A-Z a-z _ . -`)
  if (!isPlanDescription(description) || description.trim() === '') {
    throw new ConfigError(`${at}.description must be a text of 1 to 127 bytes of UTF-8 (42 Chinese characters): WeChat Pay shows it to the payer`)
  }
  // Fen, never yuan: 19.9 is a mistake to point out, not a price to round (B-order-1).
  if (!isPlanAmountFen(fen)) {
    throw new ConfigError(`${at}.amount_fen must be a positive whole number of fen (1990 for ¥19.90), not ${JSON.stringify(fen) ?? 'missing'}`)
  }
  return { id, description, amountFen: fen, grant: grantOf(fields.grant, `${at}.grant`) }
}

function grantOf(value: unknown, at: string): PlanGrant {
  const grant = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<string, unknown>
  if (grant.type === 'time') {
    const extra = Object.keys(grant).find((key) => key !== 'type' && key !== 'days')
    if (extra !== undefined) throw new ConfigError(`${at} has an unknown field "${extra}" (a time grant has type and days)`)
    const days = grant.days
    if (!isPlanDays(days)) {
      throw new ConfigError(`${at}.days must be a number of days above 0 and at most 36525 that comes to whole seconds, not ${JSON.stringify(days) ?? 'missing'}`)
    }
    return { type: 'time', days }
  }
  if (grant.type === 'points') {
    const extra = Object.keys(grant).find((key) => key !== 'type' && key !== 'points')
    if (extra !== undefined) throw new ConfigError(`${at} has an unknown field "${extra}" (a points grant has type and points)`)
    const points = grant.points
    if (!isPlanPoints(points)) {
      throw new ConfigError(`${at}.points must be a positive whole number, not ${JSON.stringify(points) ?? 'missing'}`)
    }
    return { type: 'points', points }
  }
  throw new ConfigError(`${at} must be {"type":"time","days":…} or {"type":"points","points":…}`)
}
