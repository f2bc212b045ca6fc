// The WeChat Pay emulator's building blocks against the reference's vectors and edge cases:
// AES-256-GCM sealing, the Authorization parser, RFC 3339 times.
import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sealResource, sealWithNonce } from '../src/pay/aead'
import { parseAuthorization, rsaSign, rsaVerify, signedMessage } from '../src/pay/signature'
import { parseRfc3339, wechatTime } from '../src/pay/time'
import { decryptResource } from './pay-client'

describe('AES-256-GCM', () => {
  it('matches the reference vector (key as ASCII bytes, nonce as bytes, tag appended)', () => {
    expect(sealWithNonce('0123456789abcdef0123456789abcdef', '0123456789ab', 'Hello World', 'certificate')).toBe('0cyLVizqz3SHaUezNKP+u3JwdpSEgeYtnMEa')
  })

  it('seals with a fresh 12-character nonce each time, opened by the merchant side', () => {
    const key = 'abcdefghijklmnopqrstuvwxyz012345'
    const a = sealResource(key, '{"x":1}', 'transaction')
    const b = sealResource(key, '{"x":1}', 'transaction')
    expect(a.nonce).toMatch(/^[0-9A-Za-z]{12}$/)
    expect(a.nonce).not.toBe(b.nonce)
    expect(decryptResource(key, { ...a, associated_data: 'transaction' })).toEqual({ x: 1 })
  })
})

describe('Authorization', () => {
  it('reads the five pairs in any order and refuses malformed headers', () => {
    const pairs = 'mchid="1900009191",nonce_str="593BEC0C",signature="c2ln",timestamp="1554208460",serial_no="1DDE55AD"'
    const expected = { mchid: '1900009191', nonce_str: '593BEC0C', signature: 'c2ln', timestamp: '1554208460', serial_no: '1DDE55AD' }
    expect(parseAuthorization(`WECHATPAY2-SHA256-RSA2048 ${pairs}`)).toEqual(expected)
    expect(parseAuthorization(`WECHATPAY2-SHA256-RSA2048 ${pairs.split(',').reverse().join(', ')}`)).toEqual(expected)
    expect(parseAuthorization(undefined)).toMatchObject({ error: expect.stringMatching(/missing/) })
    expect(parseAuthorization(`WECHATPAY2-SHA256-RSA2048 ${pairs},mchid="2"`)).toMatchObject({ error: expect.stringMatching(/twice/) })
    expect(parseAuthorization(`WECHATPAY2-SHA256-RSA2048 ${pairs} junk`)).toMatchObject({ error: expect.stringMatching(/pairs/) })
    expect(parseAuthorization(`WECHATPAY2-SHA256-RSA2048 mchid="1"`)).toMatchObject({ error: expect.stringMatching(/nonce_str is missing/) })
    expect(parseAuthorization(`Basic ${pairs}`)).toMatchObject({ error: expect.stringMatching(/scheme/) })
  })

  it('signs and verifies "line\\n" messages; a non-base64 signature never verifies', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const message = signedMessage(['1554208460', 'nonce', ''])
    expect(message.toString()).toBe('1554208460\nnonce\n\n')
    const signature = rsaSign(message, privateKey)
    expect(rsaVerify(message, signature, publicKey)).toBe(true)
    expect(rsaVerify(signedMessage(['1554208460', 'nonce', ' ']), signature, publicKey)).toBe(false)
    expect(rsaVerify(message, `WECHATPAY/SIGNTEST/${signature}`, publicKey)).toBe(false)
  })
})

describe('RFC 3339', () => {
  it('parses offsets, refuses impossible dates and missing offsets; writes Beijing time', () => {
    expect(parseRfc3339('2018-06-08T10:34:56+08:00')).toBe(Date.parse('2018-06-08T02:34:56Z'))
    expect(parseRfc3339('2018-06-08T02:34:56.5Z')).toBe(Date.parse('2018-06-08T02:34:56.500Z'))
    for (const bad of ['2018-06-08T10:34:56', '2018-06-08 10:34:56+08:00', '2018-02-30T10:00:00+08:00', '2018-13-01T00:00:00Z', '']) {
      expect(parseRfc3339(bad), bad).toBeNull()
    }
    expect(wechatTime(Date.parse('2026-03-01T08:00:00.900Z'))).toBe('2026-03-01T16:00:00+08:00')
  })
})
