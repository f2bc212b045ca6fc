/**
 * WeChat Pay's side of the `WECHATPAY2-SHA256-RSA2048` scheme: reading a merchant's
 * `Authorization` header and checking its signature, and signing what WeChat sends back (answers
 * and notifications). RSASSA-PKCS1-v1_5 with SHA-256 throughout, from `node:crypto`.
 *
 * @module
 */
import { createSign, createVerify, randomBytes, type KeyObject } from 'node:crypto'

/** The only signature scheme of APIv3, in `Authorization` and `Wechatpay-Signature-Type`. */
export const SIGNATURE_SCHEME = 'WECHATPAY2-SHA256-RSA2048'

/** The prefix of WeChat's deliberately wrong probe signatures. */
export const PROBE_PREFIX = 'WECHATPAY/SIGNTEST/'

/** The five parameters of an `Authorization` header. */
export interface AuthorizationParams {
  mchid: string
  nonce_str: string
  signature: string
  timestamp: string
  serial_no: string
}

/** The parameters of `Authorization`, or why it cannot be read. */
export function parseAuthorization(header: string | undefined): AuthorizationParams | { error: string } {
  if (header === undefined || header === '') return { error: 'the Authorization header is missing' }
  const space = header.indexOf(' ')
  if (space < 0 || header.slice(0, space) !== SIGNATURE_SCHEME) return { error: `the Authorization scheme must be ${SIGNATURE_SCHEME}` }
  // SDKs put the pairs in different orders, so read them as a set: k="v" separated by commas.
  const pairs = new Map<string, string>()
  const pattern = /\s*([a-z_]+)="([^"]*)"\s*(,|$)/gy
  const rest = header.slice(space + 1)
  let match: RegExpExecArray | null
  while (pattern.lastIndex < rest.length && (match = pattern.exec(rest)) !== null) {
    const [, name, value] = match
    if (pairs.has(name!)) return { error: `the Authorization parameter ${name} appears twice` }
    pairs.set(name!, value!)
  }
  if (pattern.lastIndex !== rest.length) return { error: 'the Authorization parameters must be k="v" pairs separated by commas' }
  const names = ['mchid', 'nonce_str', 'signature', 'timestamp', 'serial_no'] as const
  for (const name of names) {
    if (!pairs.get(name)) return { error: `the Authorization parameter ${name} is missing` }
  }
  return Object.fromEntries(names.map((name) => [name, pairs.get(name)!])) as unknown as AuthorizationParams
}

/** Lines joined the way both directions sign them: each one ends with `\n`, the last one too. */
export function signedMessage(lines: Array<string | Buffer>): Buffer {
  return Buffer.concat(lines.flatMap((line) => [typeof line === 'string' ? Buffer.from(line, 'utf8') : line, Buffer.from('\n')]))
}

/** Base64 RSA-SHA256 (PKCS#1 v1.5) of `message`. */
export function rsaSign(message: Buffer, privateKey: KeyObject): string {
  return createSign('RSA-SHA256').update(message).sign(privateKey, 'base64')
}

/** Whether `signature` (base64) is `publicKey`'s signature of `message`; false for anything unreadable. */
export function rsaVerify(message: Buffer, signature: string, publicKey: KeyObject): boolean {
  // Strict base64 first: Node's decoder skips junk, which would let a mangled value slip through.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false
  try {
    return createVerify('RSA-SHA256').update(message).verify(publicKey, signature, 'base64')
  } catch {
    return false
  }
}

/** A probe signature: the prefix WeChat uses, then random base64 that no key produced. */
export function probeSignature(): string {
  return PROBE_PREFIX + randomBytes(192).toString('base64')
}

/** A random nonce for `Wechatpay-Nonce`: 32 hex characters, like WeChat's. */
export function signatureNonce(): string {
  return randomBytes(16).toString('hex')
}

/** The `Wechatpay-*` headers of a body sent by WeChat (answer or notification). */
export function wechatpayHeaders(body: Buffer, key: { id: string; privateKey: KeyObject }, timestamp: number, options: { probe?: boolean } = {}): Record<string, string> {
  const nonce = signatureNonce()
  const stamp = String(timestamp)
  return {
    'wechatpay-nonce': nonce,
    'wechatpay-timestamp': stamp,
    'wechatpay-serial': key.id,
    'wechatpay-signature': options.probe ? probeSignature() : rsaSign(signedMessage([stamp, nonce, body]), key.privateKey),
    'wechatpay-signature-type': SIGNATURE_SCHEME,
  }
}
