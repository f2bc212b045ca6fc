/**
 * Safe-mode message encryption (消息加解密), written from the platform's published description:
 *
 * - `AESKey = base64(EncodingAESKey + "=")`: 43 characters give 32 bytes, so AES-256; IV = the key's
 *   first 16 bytes; mode CBC.
 * - Plaintext = 16 random bytes ‖ message byte length (4 bytes, big-endian) ‖ message (UTF-8) ‖ appid.
 * - Padding is PKCS#7 on **32-byte** blocks. Node's built-in padding works on 16-byte blocks, so it is
 *   switched off (`setAutoPadding(false)`) and done here by hand; with auto padding, any valid message
 *   whose pad is 17–32 fails with `bad decrypt`.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { WechatError } from './errors'

/** The block size WeChat pads to (PKCS#7 with K = 32). */
const PAD_BLOCK = 32
// WeChat generates keys from [A-Za-z0-9]; any 43 base64 characters decode to a 32-byte key, so the rest
// of the base64 alphabet is accepted too (a key made with randomBytes().toString('base64') works).
const ENCODING_AES_KEY = /^[A-Za-z0-9+/]{43}$/

/** A safe-mode payload that could not be decrypted or unpacked (code `crypto_error`). The push is rejected with 400. */
export class WechatCryptoError extends WechatError {
  constructor(message: string) {
    super('crypto_error', message)
    this.name = 'WechatCryptoError'
  }
}

/** True when `value` has the shape of an EncodingAESKey: 43 base64 characters (WeChat's are `[A-Za-z0-9]`). */
export function isEncodingAesKey(value: unknown): value is string {
  return typeof value === 'string' && ENCODING_AES_KEY.test(value)
}

/** Turns the 43-character EncodingAESKey into the 32-byte AES key. Throws a {@link WechatError} `invalid_options` on a bad key. */
export function decodeAesKey(encodingAESKey: string): Buffer {
  if (!isEncodingAesKey(encodingAESKey)) {
    throw new WechatError('invalid_options', 'encodingAESKey must be 43 characters from [A-Za-z0-9] (the base64 alphabet)')
  }
  return Buffer.from(`${encodingAESKey}=`, 'base64')
}

/** Appends PKCS#7 padding to a multiple of 32 bytes (a whole block of 0x20 when already aligned). */
export function pkcs7Pad(data: Buffer): Buffer {
  const pad = PAD_BLOCK - (data.length % PAD_BLOCK)
  return Buffer.concat([data, Buffer.alloc(pad, pad)])
}

/** Removes PKCS#7 padding of 1–32 bytes, checking every pad byte. */
export function pkcs7Unpad(data: Buffer): Buffer {
  const pad = data.at(-1)
  if (pad === undefined || pad < 1 || pad > PAD_BLOCK || pad > data.length) throw new WechatCryptoError('bad padding')
  for (let i = data.length - pad; i < data.length; i++) {
    if (data[i] !== pad) throw new WechatCryptoError('bad padding')
  }
  return data.subarray(0, data.length - pad)
}

/**
 * Encrypts an XML message for `appId` and returns the base64 text for `<Encrypt>`.
 *
 * @param key - the 32-byte key from {@link decodeAesKey}
 * @param random - the 16 leading random bytes; only tests pass it, to make the output reproducible
 */
export function encryptMessage(key: Buffer, appId: string, message: string, random: Buffer = randomBytes(16)): string {
  if (random.length !== 16) throw new WechatError('invalid_argument', 'random must be 16 bytes')
  const body = Buffer.from(message, 'utf8')
  const length = Buffer.alloc(4)
  length.writeUInt32BE(body.length, 0)
  const plain = pkcs7Pad(Buffer.concat([random, length, body, Buffer.from(appId, 'utf8')]))
  const cipher = createCipheriv('aes-256-cbc', key, key.subarray(0, 16))
  cipher.setAutoPadding(false)
  return Buffer.concat([cipher.update(plain), cipher.final()]).toString('base64')
}

/** What {@link decryptMessage} found inside an `<Encrypt>` text. */
export interface DecryptedMessage {
  /** The inner XML message. */
  message: string
  /** The appid the sender appended; the caller must compare it with its own. */
  appId: string
}

/**
 * Decrypts the base64 text of `<Encrypt>` and unpacks it. Throws {@link WechatCryptoError} on anything
 * malformed (bad base64, wrong length, bad padding, a length field that does not fit); a wrong key
 * almost always shows up as bad padding or a nonsense length.
 */
export function decryptMessage(key: Buffer, encrypted: string): DecryptedMessage {
  // Buffer.from(base64) silently skips invalid characters, so check the alphabet first.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encrypted)) throw new WechatCryptoError('Encrypt is not base64')
  const data = Buffer.from(encrypted, 'base64')
  if (data.length === 0 || data.length % 16 !== 0) throw new WechatCryptoError('Encrypt has a bad length')
  const decipher = createDecipheriv('aes-256-cbc', key, key.subarray(0, 16))
  decipher.setAutoPadding(false)
  let plain: Buffer
  try {
    plain = pkcs7Unpad(Buffer.concat([decipher.update(data), decipher.final()]))
  } catch (error) {
    if (error instanceof WechatCryptoError) throw error
    throw new WechatCryptoError('decryption failed')
  }
  if (plain.length < 20) throw new WechatCryptoError('decrypted payload is too short')
  const length = plain.readUInt32BE(16)
  if (20 + length > plain.length) throw new WechatCryptoError('decrypted length field is out of range')
  return {
    message: plain.subarray(20, 20 + length).toString('utf8'),
    appId: plain.subarray(20 + length).toString('utf8'),
  }
}
