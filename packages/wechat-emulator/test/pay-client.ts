// Test helper: the merchant's side of WeChat Pay, written here from the reference (§4–§6) and not
// shared with the emulator, so the tests check the emulator against an independent reading of the
// rules: sign requests, verify answers and notifications, decrypt notification resources.
import { createDecipheriv, createPrivateKey, createPublicKey, createSign, createVerify, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WechatPayEmulator } from '../src/index'

/** The lines of a signed message, each followed by "\n". */
function joinLines(lines: string[]): string {
  return lines.map((line) => `${line}\n`).join('')
}

/** Options of one signed call; everything defaults to what a correct merchant sends. */
export interface CallOptions {
  /** Unix seconds in the Authorization header. */
  timestamp?: number
  nonce?: string
  privateKeyPem?: string
  serial?: string
  mchid?: string
  /** Sent as the request's Wechatpay-Serial (which platform key should sign the answer). */
  wechatpaySerial?: string
  /** Signs this body but sends `body` (a tampered request). */
  signedBody?: string
  /** Replaces the whole Authorization header. */
  authorization?: string | null
  /** Reverses the order of the k="v" pairs (SDKs differ). */
  reversePairs?: boolean
}

/** The Authorization header for a request, per reference §4. */
export function authorization(input: { method: string; target: string; body: string; mchid: string; serial: string; privateKeyPem: string; timestamp: number; nonce: string; reversePairs?: boolean | undefined }): string {
  const message = joinLines([input.method, input.target, String(input.timestamp), input.nonce, input.body])
  const signature = createSign('RSA-SHA256').update(message, 'utf8').sign(createPrivateKey(input.privateKeyPem), 'base64')
  const pairs = [`mchid="${input.mchid}"`, `nonce_str="${input.nonce}"`, `signature="${signature}"`, `timestamp="${input.timestamp}"`, `serial_no="${input.serial}"`]
  if (input.reversePairs) pairs.reverse()
  return `WECHATPAY2-SHA256-RSA2048 ${pairs.join(',')}`
}

/** Whether Wechatpay-* headers sign `body` with one of `keys` (by Wechatpay-Serial). */
export function verifyWechatpay(headers: IncomingHttpHeaders | Headers, body: string, keys: Record<string, string>): boolean {
  const get = (name: string) => (headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined))
  const serial = get('wechatpay-serial')
  const signature = get('wechatpay-signature')
  const timestamp = get('wechatpay-timestamp')
  const nonce = get('wechatpay-nonce')
  if (!serial || !signature || !timestamp || !nonce || get('wechatpay-signature-type') !== 'WECHATPAY2-SHA256-RSA2048') return false
  const pem = keys[serial]
  if (pem === undefined) return false
  try {
    return createVerify('RSA-SHA256').update(joinLines([timestamp, nonce, body]), 'utf8').verify(createPublicKey(pem), signature, 'base64')
  } catch {
    return false
  }
}

/** AES-256-GCM opening of a notification resource with the APIv3 key (reference §6). */
export function decryptResource(apiV3Key: string, resource: { ciphertext: string; nonce: string; associated_data?: string }): Record<string, unknown> {
  const sealed = Buffer.from(resource.ciphertext, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(resource.nonce, 'utf8'))
  decipher.setAAD(Buffer.from(resource.associated_data ?? '', 'utf8'))
  decipher.setAuthTag(sealed.subarray(sealed.length - 16))
  const plain = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()])
  return JSON.parse(plain.toString('utf8')) as Record<string, unknown>
}

/** What a signed call got back. */
export interface CallResult {
  status: number
  headers: Headers
  text: string
  json: Record<string, unknown>
  /** Whether the answer's Wechatpay-* signature verifies with the emulator's verificationKeys. */
  verified: boolean
}

/** A merchant client for the emulator: signed calls with the generated merchant key. */
export function merchantClient(emulator: WechatPayEmulator, clock: () => number = Date.now) {
  const key = emulator.merchantKey!
  return async function call(method: string, target: string, body?: unknown, options: CallOptions = {}): Promise<CallResult> {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'scanauth-test/1.0' }
    if (text !== '') headers['content-type'] = 'application/json'
    if (options.wechatpaySerial !== undefined) headers['wechatpay-serial'] = options.wechatpaySerial
    if (options.authorization !== null) {
      headers.authorization =
        options.authorization ??
        authorization({
          method,
          target,
          body: options.signedBody ?? text,
          mchid: options.mchid ?? emulator.mchid,
          serial: options.serial ?? key.serial,
          privateKeyPem: options.privateKeyPem ?? key.privateKeyPem,
          timestamp: options.timestamp ?? Math.floor(clock() / 1000),
          nonce: options.nonce ?? randomBytes(16).toString('hex').toUpperCase(),
          reversePairs: options.reversePairs,
        })
    }
    const res = await fetch(`${emulator.url}${target}`, { method, headers, body: method === 'GET' ? undefined : text })
    const answer = await res.text()
    return {
      status: res.status,
      headers: res.headers,
      text: answer,
      json: answer === '' ? {} : (JSON.parse(answer) as Record<string, unknown>),
      verified: verifyWechatpay(res.headers, answer, emulator.verificationKeys),
    }
  }
}

/** One notification the app's endpoint received. */
export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/**
 * A local notify endpoint; `answer(n, received)` decides each status (1-based count), or returns
 * 'hang' to never answer.
 */
export async function notifyEndpoint(resources: { add<T extends { close(): unknown }>(r: T): T }, answer: (n: number, received: Received) => number | 'hang' = () => 204) {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(entry)
      const status = answer(received.length, entry)
      if (status === 'hang') return
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(status < 300 ? '' : JSON.stringify({ code: 'FAIL', message: 'test says no' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/wxpay/notify`, received }
}

/** A valid Native order body for `emulator`. */
export function nativeOrder(emulator: WechatPayEmulator, notifyUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    appid: emulator.appid,
    mchid: emulator.mchid,
    description: 'scanauth 30-day pass',
    out_trade_no: `SA${randomBytes(8).toString('hex')}`,
    notify_url: notifyUrl,
    amount: { total: 1990, currency: 'CNY' },
    ...extra,
  }
}

/** A valid JSAPI order body for `emulator`: a Native order's fields plus `payer.openid`. */
export function jsapiOrder(emulator: WechatPayEmulator, notifyUrl: string, openid: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...nativeOrder(emulator, notifyUrl), payer: { openid }, ...extra }
}

/** The cashier's parameters as a merchant signs them (reference phone-pay-reminders-admin.md §1.3), written here from the rule. */
export function cashierParameters(input: { appId: string; prepayId: string; privateKeyPem: string; timeStamp: string; nonceStr?: string }) {
  const nonceStr = input.nonceStr ?? randomBytes(16).toString('hex')
  const pkg = `prepay_id=${input.prepayId}`
  const paySign = createSign('RSA-SHA256').update(joinLines([input.appId, input.timeStamp, nonceStr, pkg]), 'utf8').sign(createPrivateKey(input.privateKeyPem), 'base64')
  return { appId: input.appId, timeStamp: input.timeStamp, nonceStr, package: pkg, signType: 'RSA', paySign }
}
