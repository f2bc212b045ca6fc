/**
 * A seeded stream of malformed HTTP requests for the fuzz test (`test/fuzz.test.ts`): every method,
 * scanauth's paths and others, query strings with repeated keys, huge values, `%` garbage and
 * escaped lone surrogates, bogus content types and `Authorization` headers, and bodies that are
 * invalid JSON, deeply nested, huge, binary, XML, or carry lone surrogates. The same seed gives the
 * same stream, so a failure can be replayed with `SCANAUTH_FUZZ_SEED`.
 */
import { ROUTES } from '../../packages/core/src/http/routes'

/** A pseudo-random source: numbers in [0, 1), from a seed. */
export type Random = () => number

/** mulberry32: a small, fast 32-bit generator, good enough to pick test inputs (not for secrets). */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One request to send. `path` includes the query string; the header values may hold latin1 bytes. */
export interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  /** Sent with a Content-Length, or in two chunks when `chunked`. */
  body?: Buffer
  chunked?: boolean
}

/** Limits of a stream. */
export interface FuzzLimits {
  /** Largest body generated. The fuzz test goes past every parser's limit; the memory test stays small. */
  maxBodyBytes: number
}

/** scanauth's routes under `/auth` (docs/behaviour.md, B-wire-2), the WeChat callback and WeChat Pay's notify_url. */
/**
 * The JSON routes of core's route table under `/auth` (the event stream is among OTHER_PATHS: a
 * stream that stays open would only wait out the request's time).
 */
export const AUTH_ROUTES: readonly string[] = [
  ...new Set(ROUTES.filter((route) => route.answers[200]?.stream === undefined && route.answers[200]?.body !== 'html').map((route) => `/auth${route.path}`)),
]
export const CALLBACK_PATH = '/wechat/callback'
/** The confirm page of confirm on the phone (B-confirm-11, B-confirm-12): HTML for a phone's browser. */
export const CONFIRM_PATH = `/auth${ROUTES.find((route) => route.mode === 'confirm')?.path ?? '/confirm'}`
export const NOTIFY_PATH = '/wechatpay/notify'

const METHODS = ['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE'] as const

/**
 * Other paths: near misses of ours, traversal, bad escapes, and the app's own routes. No raw bytes
 * above 0x7f in the request line: Node's HTTP parser refuses them (400, connection closed) before
 * any app code runs, so they would test nothing of ours and only race the client's write. The same
 * bytes travel in header values and bodies instead.
 */
const OTHER_PATHS = [
  '/', '/auth', '/auth/', '/auth/nope', '/auth/events', '/AUTH/status', '/auth//status', '/auth/status/', '/auth/status%2f',
  '/auth/%ZZ', '/auth/%ED%A0%80', '/auth/%00', '/auth/..%2F..%2Fetc%2Fpasswd', '/auth/status;x', '//auth/status',
  '/wechat/callback/', '/wechat/callback/x', '/wechat', '/WECHAT/CALLBACK', '/demo/config', '/demo/emulator-scan',
  '/demo/pay', '/demo/qr.svg', '/demo/qr.svg?text=weixin%3A%2F%2Fwxpay%2Fbizpayurl%3Fpr%3Dx', '/wechatpay', '/wechatpay/notify/x', '/api/me', '/healthz', '/index.html', '/app.js', '/%', '/%E0%A4%A', '/auth/%FF%FE',
] as const

const QUERY_KEYS = [
  'scene', 'scene', 'wait', 'signature', 'timestamp', 'nonce', 'echostr', 'encrypt_type', 'msg_signature',
  'device_id', 'points', 'scene[]', 'scene[a]', '__proto__', 'constructor[prototype][x]', '%ED%A0%80', '',
  'ticket', 'ticket', 'code', 'state', 'poll_secret', 'ticket[]',
] as const

const PERCENT_GARBAGE = ['%', '%%', '%G1', '%E0%A4%A', '%ED%A0%80', '%ED%B0%80x', '%F0%9F%98', '%C0%AF', '%FF', '%00', '%u0041', '%25ED%25A0%2580'] as const
const NUMBERISH = ['-1', '0', '1', '30', '31', '1e309', 'NaN', '99999999999999999999', '30.5', '0x1f', ' 5'] as const

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/vnd.api+json',
  'text/xml', 'application/xml', 'text/xml; charset=gbk', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  'text/plain', 'application/octet-stream', 'a/b/c', ';;;', 'application/json; charset=bogus',
] as const

const ENCODINGS = ['gzip', 'deflate', 'br', 'identity', 'x-bogus', 'gzip, gzip'] as const

/** Helpers over a {@link Random}. */
class Dice {
  constructor(readonly random: Random) {}

  int(below: number): number {
    return Math.floor(this.random() * below)
  }

  chance(p: number): boolean {
    return this.random() < p
  }

  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)] as T
  }

  ascii(length: number): string {
    let out = ''
    for (let i = 0; i < length; i++) out += String.fromCharCode(32 + this.int(95))
    return out
  }

  hex(length: number): string {
    let out = ''
    for (let i = 0; i < length; i++) out += '0123456789abcdef'[this.int(16)]
    return out
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length)
    for (let i = 0; i < length; i++) out[i] = this.int(256)
    return out
  }
}

/** A random scene string of the right shape (no such scene exists). */
const sceneStr = (d: Dice) => `pc_${d.hex(32)}`

function queryValue(d: Dice): string {
  switch (d.int(8)) {
    case 0: return sceneStr(d)
    case 1: return encodeURIComponent(d.ascii(d.int(40)))
    case 2: return 'a'.repeat(1000 + d.int(5000)) // huge, yet under the 16 KiB header limit of Node's parser
    case 3: return d.pick(PERCENT_GARBAGE) + d.pick(['', 'x', sceneStr(d)])
    case 4: return d.pick(NUMBERISH).replace(' ', '%20')
    case 5: return ''
    case 6: return d.pick(['%ED%A0%80', d.hex(43), 'A'.repeat(43), `${d.hex(42)}%ED%A0%80`]) // a lone surrogate's UTF-8 bytes, escaped; ticket-shaped values
    default: return encodeURIComponent(d.pick(['客厅', '😀', 'e\u0301', 'pc_', 'null', 'true']))
  }
}

function queryString(d: Dice): string {
  if (d.chance(0.15)) return ''
  if (d.chance(0.05)) return d.pick(['?', '?&&=&', '?=', '?scene', '?%'])
  const parts: string[] = []
  for (let n = d.int(7); n >= 0; n--) {
    const key = d.pick(QUERY_KEYS)
    parts.push(d.chance(0.1) ? key : `${key}=${queryValue(d)}`)
  }
  let query = `?${parts.join('&')}`
  if (query.length > 7000) query = query.slice(0, 7000) // keep the request line under Node's header limit
  return query
}

/** A JSON value that is wrong in some way for any field it lands in. */
function jsonValue(d: Dice, depth = 0): string {
  switch (d.int(depth > 2 ? 6 : 9)) {
    case 0: return JSON.stringify(d.ascii(d.int(200)))
    case 1: return JSON.stringify(d.pick(['客厅的电视', '😀'.repeat(65), 'e\u0301', 'tab\there', '', 'x'.repeat(129)]))
    case 2: return d.pick(['"\\ud800"', '"a\\udfff"', '"\\udfff\\ud800"', '"\\u0000"', '"ok\\ud83d"'])
    case 3: return d.pick(['0', '-1', '1.5', '1e308', '9007199254740993', '-0', '1e-400'])
    case 4: return d.pick(['null', 'true', 'false'])
    case 5: return JSON.stringify(sceneStr(d))
    case 6: return `[${Array.from({ length: d.int(4) }, () => jsonValue(d, depth + 1)).join(',')}]`
    case 7: return jsonObject(d, depth + 1)
    default: return '{"__proto__":{"polluted":true}}'
  }
}

function jsonObject(d: Dice, depth = 0): string {
  const fields = ['device_id', 'points', 'scene_str', 'openid', 'idempotency_key', 'scene', 'plan', 'order_id', 'event_type', 'resource', '__proto__', 'constructor', d.ascii(5)]
  const entries = Array.from({ length: 1 + d.int(4) }, () => `${JSON.stringify(d.pick(fields))}:${jsonValue(d, depth)}`)
  return `{${entries.join(',')}}`
}

const INVALID_JSON = ['{', '{"device_id"', '{"device_id": "a"', 'nul', '{"a":1}garbage', "{'a':1}", '\ufeff{"device_id":"x"}', '', ' ', '[]', '"str"', '123', 'null', '{"a":1,}', '{"a":01}'] as const

function xmlBody(d: Dice): string {
  const field = (name: string, value: string) => (d.chance(0.8) ? `<${name}><![CDATA[${value}]]></${name}>` : '')
  switch (d.int(6)) {
    case 0:
      return `<xml>${field('ToUserName', 'gh_x')}${field('FromUserName', d.pick(['o_fuzz', '\ud800', '']))}<CreateTime>${d.pick(NUMBERISH)}</CreateTime>${field('MsgType', d.pick(['event', 'text', '']))}${field('Event', d.pick(['SCAN', 'subscribe', 'unsubscribe']))}${field('EventKey', d.pick([sceneStr(d), `qrscene_${sceneStr(d)}`, '']))}${field('MsgId', d.hex(8))}</xml>`
    case 1: return `<xml><ToUserName>gh_x</ToUserName><Encrypt><![CDATA[${d.pick([d.ascii(64), Buffer.from(d.bytes(48)).toString('base64'), ''])}]]></Encrypt></xml>`
    case 2: return '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><xml><Content>&b;&b;&b;</Content></xml>'
    case 3: return d.pick(['<xml><a>', '<xml>', '</xml>', '<xml><![CDATA[</xml>', '<?xml version="1.0"?>', '<xml/>'])
    case 4: return `${'<a>'.repeat(1000 + d.int(4000))}${'</a>'.repeat(d.int(2) * 5000)}`
    default: return `<xml>${d.ascii(d.int(300)).replace(/[<>]/g, '')}</xml>`
  }
}

function body(d: Dice, limits: FuzzLimits): Buffer | undefined {
  const huge = (n: number) => Math.min(n, limits.maxBodyBytes)
  switch (d.int(12)) {
    case 0: return undefined
    case 1:
    case 2: return Buffer.from(jsonObject(d))
    case 3: return Buffer.from(d.pick(INVALID_JSON))
    case 4: {
      const depth = Math.floor(huge(2 + d.int(40_000)) / 2)
      return Buffer.from(d.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(Math.floor(depth / 3))}1${'}'.repeat(Math.floor(depth / 3))}`)
    }
    case 5: {
      // Past the 16 KiB of createHttpHandler, often past express.json()'s 100 KB, rarely past Koa's 1 MB.
      const size = huge(d.chance(0.03) ? 1_100_000 : 16_000 + d.int(200_000))
      return Buffer.from(`{"device_id":"${'a'.repeat(Math.max(0, size - 16))}"}`)
    }
    case 6: return d.bytes(1 + d.int(huge(4096)))
    case 7:
    case 8: return Buffer.from(xmlBody(d))
    case 9: return Buffer.concat([Buffer.from('{"device_id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","openid":"'), Buffer.from([0xed, 0xb0, 0x80]), Buffer.from('"}')])
    case 10:
      return Buffer.from(d.chance(0.5)
        ? `device_id=${queryValue(d)}&device_id=x&scene=%ED%A0%80&points=${d.pick(NUMBERISH)}`
        // The confirm page's form: a ticket of the right shape or not, a CSRF token, a decision.
        : `ticket=${queryValue(d)}&csrf=${queryValue(d)}&decision=${d.pick(['confirm', 'deny', '', 'CONFIRM', 'confirm&decision=deny', '%ED%A0%80'])}`)
    default: return Buffer.from(jsonObject(d), 'utf16le')
  }
}

function headers(d: Dice): Record<string, string> {
  const out: Record<string, string> = {}
  if (d.chance(0.8)) out['content-type'] = d.pick(CONTENT_TYPES)
  if (d.chance(0.5)) {
    out.authorization = d.pick([
      'Bearer', 'Bearer ', `Bearer ${d.hex(43)}`, `Bearer ${'x'.repeat(4000)}`, 'Basic Zm9vOmJhcg==', 'bearer\ttoken',
      'Bearer a b c', 'Bearer \u00ed\u00a0\u0080', 'Bearer %ED%A0%80', 'Bearer\u00ff', 'Token abc',
    ])
  }
  if (d.chance(0.1)) out['content-encoding'] = d.pick(ENCODINGS)
  if (d.chance(0.1)) out['x-forwarded-for'] = d.pick(['1.2.3.4', 'garbage', '::1, 10.0.0.1', '\u00ff'.repeat(10)])
  if (d.chance(0.1)) out.accept = d.pick(['text/event-stream', '*/*', 'application/xml', ';;'])
  if (d.chance(0.2)) {
    // WeChat Pay's signature headers, each wrong in its own way (a probe, a stale time, no such key).
    out['wechatpay-timestamp'] = d.pick(NUMBERISH).trim() || '0'
    out['wechatpay-nonce'] = d.pick([d.hex(32), '', '\u00ff'])
    out['wechatpay-signature'] = d.pick([`WECHATPAY/SIGNTEST/${d.hex(20)}`, Buffer.from(d.bytes(256)).toString('base64'), '!!!', ''])
    out['wechatpay-serial'] = d.pick([`PUB_KEY_ID_${d.hex(24)}`, d.hex(16).toUpperCase(), ''])
    if (d.chance(0.5)) out['wechatpay-signature-type'] = d.pick(['WECHATPAY2-SHA256-RSA2048', 'HMAC-SHA256'])
  }
  return out
}

/** The next request of the stream. */
export function nextRequest(random: Random, limits: FuzzLimits): FuzzRequest {
  const d = new Dice(random)
  const method = d.pick(METHODS)
  const route = d.chance(0.75) ? d.pick([...AUTH_ROUTES, CALLBACK_PATH, CALLBACK_PATH, NOTIFY_PATH, NOTIFY_PATH, CONFIRM_PATH]) : d.pick(OTHER_PATHS)
  const request: FuzzRequest = { method, path: `${route}${queryString(d)}`, headers: headers(d) }
  // GET and HEAD mostly without a body, as clients send them; sometimes with one anyway.
  const withBody = method === 'HEAD' ? false : method === 'GET' ? d.chance(0.1) : d.chance(0.9)
  if (withBody) {
    request.body = body(d, limits)
    request.chunked = request.body !== undefined && d.chance(0.1)
  }
  return request
}
