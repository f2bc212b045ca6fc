// WeChat Pay's side of the wire, written independently of the package's own code with node:crypto
// alone: signing an answer or notification, encrypting a resource, checking a merchant request.
// If the package and this file disagreed on a byte, the tests would fail.
import { createCipheriv, createSign, createVerify, randomBytes, type KeyObject } from 'node:crypto'

export interface SignAs {
  key: KeyObject
  serial: string
  /** Unix seconds. */
  timestamp: number
  nonce?: string
  /** Replace the signature (e.g. a probe). */
  signature?: string
}

/** The `Wechatpay-*` headers of a signed answer or notification over `body` (exact bytes). */
export function wechatpayHeaders(body: Buffer | string, as: SignAs): Record<string, string> {
  const nonce = as.nonce ?? randomBytes(16).toString('hex')
  const message = Buffer.concat([Buffer.from(`${as.timestamp}\n${nonce}\n`), Buffer.from(body), Buffer.from('\n')])
  const signature = as.signature ?? createSign('sha256').update(message).sign(as.key).toString('base64')
  return {
    'Wechatpay-Timestamp': String(as.timestamp),
    'Wechatpay-Nonce': nonce,
    'Wechatpay-Signature': signature,
    'Wechatpay-Serial': as.serial,
    'Wechatpay-Signature-Type': 'WECHATPAY2-SHA256-RSA2048',
  }
}

/** AES-256-GCM as WeChat Pay encrypts a resource: base64(ciphertext ‖ tag). */
export function encryptResource(apiV3Key: string, nonce: string, associatedData: string, plaintext: string): string {
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'ascii'), Buffer.from(nonce, 'utf8'))
  cipher.setAAD(Buffer.from(associatedData, 'utf8'))
  return Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64')
}

export interface NotificationInput {
  eventType: string
  resource: Record<string, unknown>
  originalType?: string
  associatedData?: string
  apiV3Key: string
  sign: SignAs
  id?: string
  /** Serialize the envelope yourself (spaces, key order, Chinese). */
  spacing?: number
}

/** A complete notification: its headers and raw body, as WeChat Pay would POST it. */
export function notification(input: NotificationInput): { headers: Record<string, string>; body: Buffer } {
  const nonce = randomBytes(6).toString('hex') // 12 characters
  const associatedData = input.associatedData ?? input.originalType ?? 'transaction'
  const envelope = {
    id: input.id ?? `EV-${randomBytes(8).toString('hex')}`,
    create_time: '2026-01-01T08:00:00+08:00',
    resource_type: 'encrypt-resource',
    event_type: input.eventType,
    summary: input.eventType.startsWith('REFUND') ? '退款成功' : '支付成功',
    resource: {
      original_type: input.originalType ?? 'transaction',
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext: encryptResource(input.apiV3Key, nonce, associatedData, JSON.stringify(input.resource)),
      associated_data: associatedData,
      nonce,
    },
  }
  const body = Buffer.from(JSON.stringify(envelope, null, input.spacing), 'utf8')
  return { headers: wechatpayHeaders(body, input.sign), body }
}

/** The fields of a merchant `Authorization` header, parsed order-free as WeChat Pay does. */
export function parseAuthorization(header: string): Record<string, string> {
  const match = /^WECHATPAY2-SHA256-RSA2048 (.*)$/.exec(header)
  if (!match?.[1]) throw new Error(`not a WECHATPAY2 Authorization: ${header}`)
  return Object.fromEntries([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
}

/** True when the merchant request's Authorization verifies over the raw request line and body. */
export function verifyMerchantRequest(method: string, urlPath: string, body: Buffer, authorization: string, merchantKey: KeyObject): boolean {
  const a = parseAuthorization(authorization)
  const message = Buffer.concat([Buffer.from(`${method}\n${urlPath}\n${a.timestamp}\n${a.nonce_str}\n`), body, Buffer.from('\n')])
  return createVerify('sha256').update(message).verify(merchantKey, Buffer.from(a.signature ?? '', 'base64'))
}
