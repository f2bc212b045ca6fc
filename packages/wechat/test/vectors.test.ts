// The official test vectors of the WeChat platform (reference §3.1 and §4), and the properties of our
// own signature and AES code around them.
import { createDecipheriv, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { computeSignature, decodeAesKey, decryptMessage, encryptMessage, verifyMsgSignature, verifySignature } from '../src/index'
import { pkcs7Pad, pkcs7Unpad, WechatCryptoError } from '../src/crypto'
import { WechatError } from '../src/errors'
import { signaturesMatch } from '../src/signature'
import { VECTOR } from './helpers'

describe('signature (official vectors)', () => {
  it('URL verification: token AAAAA', () => {
    expect(computeSignature('AAAAA', '1714036504', '1514711492')).toBe('f464b24fc39322e44b38aa78f5edd27bd1441696')
    expect(verifySignature({ token: 'AAAAA', timestamp: '1714036504', nonce: '1514711492', signature: 'f464b24fc39322e44b38aa78f5edd27bd1441696' })).toBe(true)
  })

  it('plain signature of the safe-mode vector', () => {
    expect(computeSignature(VECTOR.token, VECTOR.timestamp, VECTOR.nonce)).toBe(VECTOR.signature)
  })

  it('msg_signature covers the Encrypt text', () => {
    expect(computeSignature(VECTOR.token, VECTOR.timestamp, VECTOR.nonce, VECTOR.encrypt)).toBe(VECTOR.msgSignature)
    const input = { token: VECTOR.token, timestamp: VECTOR.timestamp, nonce: VECTOR.nonce, encrypt: VECTOR.encrypt, msgSignature: VECTOR.msgSignature }
    expect(verifyMsgSignature(input)).toBe(true)
    expect(verifyMsgSignature({ ...input, encrypt: `${VECTOR.encrypt.slice(0, -4)}AAA=` })).toBe(false)
  })

  it('the part order does not matter (sorted), any change does', () => {
    expect(computeSignature('1514711492', 'AAAAA', '1714036504')).toBe('f464b24fc39322e44b38aa78f5edd27bd1441696')
    expect(computeSignature('AAAAA', '1714036505', '1514711492')).not.toBe('f464b24fc39322e44b38aa78f5edd27bd1441696')
  })

  it('comparison: case-insensitive hex, unequal lengths refused', () => {
    expect(signaturesMatch(VECTOR.signature.toUpperCase(), VECTOR.signature)).toBe(true)
    expect(signaturesMatch(VECTOR.signature.slice(1), VECTOR.signature)).toBe(false)
    expect(signaturesMatch('', VECTOR.signature)).toBe(false)
  })
})

describe('AES (official vector)', () => {
  const key = decodeAesKey(VECTOR.encodingAESKey)

  it('decodes the EncodingAESKey to 32 bytes', () => {
    expect(key.length).toBe(32)
    expect(() => decodeAesKey('short')).toThrow(WechatError)
    expect(() => decodeAesKey(`${VECTOR.encodingAESKey.slice(0, 42)}!`)).toThrow(/encodingAESKey must be 43 characters/)
  })

  it('decrypts the official Encrypt to the official message and appid', () => {
    expect(decryptMessage(key, VECTOR.encrypt)).toEqual({ message: VECTOR.message, appId: VECTOR.appId })
  })

  it('encrypting with the same 16 random bytes gives back the official ciphertext', () => {
    // The first plaintext block is the random prefix: recover it by decrypting the first block alone.
    const data = Buffer.from(VECTOR.encrypt, 'base64')
    const iv = key.subarray(0, 16)
    const d = createDecipheriv('aes-256-cbc', key, iv)
    d.setAutoPadding(false)
    const random = Buffer.concat([d.update(data.subarray(0, 16)), d.final()])
    expect(encryptMessage(key, VECTOR.appId, VECTOR.message, random)).toBe(VECTOR.encrypt)
  })

  it('round trip, for every padding length 1..32 and multi-byte text', () => {
    for (let extra = 0; extra < 32; extra++) {
      const message = `<xml><Content><![CDATA[你好 ${'x'.repeat(extra)}]]></Content></xml>`
      const encrypted = encryptMessage(key, VECTOR.appId, message)
      expect(decryptMessage(key, encrypted)).toEqual({ message, appId: VECTOR.appId })
    }
  })

  it('a wrong key or tampered text fails with WechatCryptoError, never returning garbage silently', () => {
    const encrypted = encryptMessage(key, VECTOR.appId, VECTOR.message)
    const other = decodeAesKey('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg')
    const attempt = () => decryptMessage(other, encrypted)
    // A wrong key almost always breaks the padding; if it does not, the appid cannot match.
    try {
      expect(attempt().appId).not.toBe(VECTOR.appId)
    } catch (error) {
      expect(error).toBeInstanceOf(WechatCryptoError)
    }
    expect(() => decryptMessage(key, 'not base64!')).toThrow(WechatCryptoError)
    expect(() => decryptMessage(key, Buffer.alloc(15).toString('base64'))).toThrow(WechatCryptoError)
  })

  it('PKCS#7 on 32-byte blocks: a full block when aligned, every pad byte checked', () => {
    expect(pkcs7Pad(Buffer.alloc(32)).length).toBe(64)
    expect(pkcs7Pad(Buffer.alloc(32)).at(-1)).toBe(32)
    expect(pkcs7Pad(Buffer.alloc(30)).subarray(30)).toEqual(Buffer.from([2, 2]))
    expect(pkcs7Unpad(pkcs7Pad(Buffer.from('abc')))).toEqual(Buffer.from('abc'))
    expect(() => pkcs7Unpad(Buffer.from([1, 2, 3, 3, 2, 3]))).toThrow(WechatCryptoError)
    expect(() => pkcs7Unpad(Buffer.concat([Buffer.alloc(32), Buffer.from([33])]))).toThrow(WechatCryptoError)
  })

  it('a pad of 17..32 decrypts (the case Node auto-padding gets wrong)', () => {
    // 16 random + 4 length + 1 byte message + 11 appid = 32 bytes → a whole pad block of 32.
    const encrypted = encryptMessage(key, 'wx12345678a', 'x', randomBytes(16))
    expect(Buffer.from(encrypted, 'base64').length).toBe(64)
    expect(decryptMessage(key, encrypted)).toEqual({ message: 'x', appId: 'wx12345678a' })
  })
})
