/**
 * Authenticating and opening a push: query parameters, signature, timestamp window, body limits,
 * safe-mode decryption and the appid check. Everything here either returns what the push says or
 * throws a {@link PushRejection} with the 4xx to answer, before anything is processed or stored.
 *
 * @module
 */
import type { ResolvedCallbackOptions, WechatCallbackRequest } from './callback-options'
import { WechatCryptoError, decryptMessage } from './crypto'
import { asMessage, type WechatMessage } from './message'
import { verifyMsgSignature, verifySignature } from './signature'
import { WechatXmlError, parseXml, textField } from './xml'

/** A push refused with a 4xx status; `detail` becomes the plain-text body. */
export class PushRejection extends Error {
  readonly status: number

  constructor(status: number, detail: string) {
    super(detail)
    this.name = 'PushRejection'
    this.status = status
  }
}

/** The query parameters WeChat signs and sends, first value of each. */
export interface PushQuery {
  signature?: string
  timestamp?: string
  nonce?: string
  echostr?: string
  encrypt_type?: string
  msg_signature?: string
}

const QUERY_NAMES = ['signature', 'timestamp', 'nonce', 'echostr', 'encrypt_type', 'msg_signature'] as const

/** Reads the parameters we use from a plain object or `URLSearchParams`. */
export function readQuery(query: WechatCallbackRequest['query'] | undefined): PushQuery {
  const out: PushQuery = {}
  for (const name of QUERY_NAMES) {
    let value: unknown
    if (query instanceof URLSearchParams) value = query.get(name) ?? undefined
    else if (query !== null && typeof query === 'object') value = Object.hasOwn(query, name) ? query[name] : undefined
    if (Array.isArray(value)) value = value[0]
    if (typeof value === 'string') out[name] = value
  }
  return out
}

/**
 * The signed parameters, checked before anything else of the request is looked at (B-wx-1):
 * `signature` over token, timestamp and nonce; the timestamp's and the nonce's form (they become
 * parts of Store keys); the timestamp in the window.
 */
export function authenticate(query: PushQuery, config: ResolvedCallbackOptions): { timestamp: string; nonce: string } {
  const { signature, timestamp, nonce } = query
  if (signature === undefined || timestamp === undefined || nonce === undefined) {
    throw new PushRejection(401, 'signature, timestamp and nonce are required')
  }
  if (!verifySignature({ token: config.token, timestamp, nonce, signature })) throw new PushRejection(401, 'invalid signature')
  if (!/^\d{1,12}$/.test(timestamp)) throw new PushRejection(400, 'invalid timestamp')
  // WeChat's nonces are digits; this alphabet keeps the replay keys (replay.ts) short and plain.
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nonce)) throw new PushRejection(400, 'invalid nonce')
  if (config.replayWindowMs !== null && Math.abs(config.now() - Number(timestamp) * 1000) > config.replayWindowMs) {
    throw new PushRejection(403, 'timestamp is outside the accepted window')
  }
  return { timestamp, nonce }
}

/** A POST body as it arrived: the exact bytes (hashed for the replay records) and their text. */
export interface RawBody {
  bytes: Buffer
  text: string
}

/**
 * The raw body, checked after the signature (B-wx-3): one over the limit is 413 (also when the
 * adapter that read it stopped at its own limit: `tooLarge`), a parser's object 415 (it cannot be
 * checked), an empty body 400, and text that cannot be XML (JSON, a form) 415. What remains is
 * parsed by {@link openPush}.
 */
export function readBody(body: unknown, maxBodyBytes: number, tooLarge = false): RawBody {
  if (tooLarge) throw new PushRejection(413, 'body is too large')
  let bytes: Buffer
  if (typeof body === 'string') {
    if (Buffer.byteLength(body, 'utf8') > maxBodyBytes) throw new PushRejection(413, 'body is too large')
    bytes = Buffer.from(body, 'utf8')
  } else if (body instanceof Uint8Array) {
    bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  } else if (body === undefined || body === null) {
    throw new PushRejection(400, 'body is empty')
  } else {
    throw new PushRejection(415, 'the raw XML body is required: a body parser turned it into an object (mount the WeChat callback before it)')
  }
  if (bytes.length > maxBodyBytes) throw new PushRejection(413, 'body is too large')
  if (bytes.length === 0) throw new PushRejection(400, 'body is empty')
  const text = bytes.toString('utf8')
  // WeChat pushes are XML documents; anything else (JSON, a form) is another media type.
  if (!/^[\s\uFEFF]*</.test(text)) throw new PushRejection(415, 'the body is not XML')
  return { bytes, text }
}

/** An opened push: the message, and the key that decrypted it (the reply must then be encrypted with it). */
export interface OpenedPush {
  message: WechatMessage
  key: Buffer | null
}

/**
 * Reads the message out of the body.
 *
 * - `encrypt_type=aes` (safe or compatible mode): `msg_signature` must cover the `Encrypt` text, the
 *   text must decrypt under one of our keys, and the appid inside must be ours. The plaintext fields
 *   of compatible mode are ignored then: only the ciphertext is authenticated. Without a configured
 *   key, compatible mode falls back to its plaintext fields.
 * - Otherwise the body is the plain message, refused when `requireEncryption` is on: by default
 *   whenever a key is configured (B-wx-2).
 */
export function openPush(query: PushQuery, text: string, config: ResolvedCallbackOptions): OpenedPush {
  const outer = parseOrReject(text)
  const encrypt = textField(outer, 'Encrypt')
  if (query.encrypt_type?.toLowerCase() === 'aes') {
    if (config.keys.length === 0) {
      const plain = asMessage(outer)
      if (plain === null) throw new PushRejection(400, 'encrypted push, but no encodingAESKey is configured')
      return { message: plain, key: null }
    }
    if (encrypt === undefined || encrypt === '') throw new PushRejection(400, 'Encrypt is missing')
    if (query.msg_signature === undefined) throw new PushRejection(401, 'msg_signature is required')
    const signed = verifyMsgSignature({ token: config.token, timestamp: query.timestamp ?? '', nonce: query.nonce ?? '', encrypt, msgSignature: query.msg_signature })
    if (!signed) throw new PushRejection(401, 'invalid msg_signature')
    const { xml, key } = decryptWithAnyKey(encrypt, config)
    const message = asMessage(parseOrReject(xml))
    if (message === null) throw new PushRejection(400, 'the decrypted XML is not a WeChat message')
    return { message, key }
  }
  if (config.requireEncryption) throw new PushRejection(403, 'plain pushes are refused: encryption is required')
  const message = asMessage(outer)
  if (message === null) {
    throw new PushRejection(400, encrypt !== undefined ? 'encrypted body without encrypt_type=aes' : 'the XML is not a WeChat message')
  }
  return { message, key: null }
}

function parseOrReject(text: string) {
  try {
    return parseXml(text)
  } catch (error) {
    if (error instanceof WechatXmlError) throw new PushRejection(400, error.message)
    throw error
  }
}

/** Tries the current key, then the previous one; a wrong appid is 403, undecryptable text 400. */
function decryptWithAnyKey(encrypt: string, config: ResolvedCallbackOptions): { xml: string; key: Buffer } {
  let wrongAppId = false
  for (const key of config.keys) {
    try {
      const { message, appId } = decryptMessage(key, encrypt)
      if (appId === config.appId) return { xml: message, key }
      wrongAppId = true
    } catch (error) {
      if (!(error instanceof WechatCryptoError)) throw error
    }
  }
  if (wrongAppId) throw new PushRejection(403, 'the message is for another appid')
  throw new PushRejection(400, 'Encrypt could not be decrypted')
}
