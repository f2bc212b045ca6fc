// Verification of what WeChat Pay signs: raw bytes only, the skew window's edges, key choice by
// serial across both key modes, and every refusal with its own code.
import { createPrivateKey } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createVerificationKeySet, verifyWechatPaySignature, WechatPayError, type SignedMessage, type VerificationKeys } from '../src/index'
import { signedMessageFromHeaders } from '../src/verify'
import { FIXTURE_CERT_SERIAL, fixtureCertKeyPem, fixtureCertPem, merchant, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID, stranger } from './support/keys'
import { wechatpayHeaders, type SignAs } from './support/pay-side'

const NOW = Date.parse('2026-01-01T00:00:00Z')
const TS = NOW / 1000
const keys: VerificationKeys = { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicKey }
const BODY = '{"code_url":"weixin://wxpay/bizpayurl?pr=JyC91EIz1","说明":"支付"}'

function signed(body: string | Buffer, as: Partial<SignAs> = {}): SignedMessage {
  const headers = wechatpayHeaders(body, { key: platform.privateKey, serial: PLATFORM_SERIAL, timestamp: TS, ...as })
  return signedMessageFromHeaders(headers, body)
}

function codeOf(message: SignedMessage, options: Partial<Parameters<typeof verifyWechatPaySignature>[1]> = {}): string {
  try {
    verifyWechatPaySignature(message, { verificationKeys: keys, now: () => NOW, ...options })
    return 'ok'
  } catch (error) {
    if (error instanceof WechatPayError) return error.code
    throw error
  }
}

describe('verifyWechatPaySignature', () => {
  it('accepts a message signed over its raw bytes, given as text or bytes', () => {
    expect(codeOf(signed(BODY))).toBe('ok')
    expect(codeOf({ ...signed(BODY), body: Buffer.from(BODY) })).toBe('ok')
    expect(codeOf(signed(''))).toBe('ok')
  })

  it('refuses a tampered body, one extra space, and the same JSON re-serialized', () => {
    const message = signed(BODY)
    expect(codeOf({ ...message, body: BODY.replace('JyC91EIz1', 'JyC91EIz2') })).toBe('signature_invalid')
    expect(codeOf({ ...message, body: BODY.replace('","', '", "') })).toBe('signature_invalid')
    expect(codeOf({ ...message, body: `${BODY}\n` })).toBe('signature_invalid')
    const reserialized = JSON.stringify(JSON.parse(BODY), null, 1)
    expect(codeOf({ ...message, body: reserialized })).toBe('signature_invalid')
    // \u escapes instead of the characters: the same JSON value, other bytes.
    expect(codeOf({ ...message, body: BODY.replace('说明', '\\u8bf4\\u660e') })).toBe('signature_invalid')
    expect(codeOf({ ...message, nonce: `${message.nonce}x` })).toBe('signature_invalid')
  })

  it('refuses a WECHATPAY/SIGNTEST/ probe like any bad signature, without crashing on its base64', () => {
    const probe = signed(BODY, { signature: 'WECHATPAY/SIGNTEST/T7Xm2nQyYbCQU1ZrE3y5hx0p9Bu+AuY5/VGPmcbNhCLZYXmiF0n6d==' })
    expect(codeOf(probe)).toBe('signature_invalid')
    expect(codeOf(signed(BODY, { signature: 'WECHATPAY/SIGNTEST/' }))).toBe('signature_invalid')
    expect(codeOf(signed(BODY, { signature: '%%%' }))).toBe('signature_invalid')
  })

  it('allows exactly maxSkewSeconds of skew either way, 300 by default', () => {
    for (const offset of [300, -300, 0]) expect(codeOf(signed(BODY, { timestamp: TS + offset }))).toBe('ok')
    for (const offset of [301, -301, 86_400]) expect(codeOf(signed(BODY, { timestamp: TS + offset }))).toBe('timestamp_out_of_range')
    expect(codeOf(signed(BODY, { timestamp: TS + 60 }), { maxSkewSeconds: 59 })).toBe('timestamp_out_of_range')
    expect(codeOf(signed(BODY, { timestamp: TS + 600 }), { maxSkewSeconds: 600 })).toBe('ok')
    expect(codeOf({ ...signed(BODY), timestamp: '17e8' })).toBe('timestamp_out_of_range')
  })

  it('picks the key by serial: platform certificate and public key in one map', () => {
    expect(codeOf(signed(BODY, { key: payPublicKey.privateKey, serial: PUB_KEY_ID }))).toBe('ok')
    // The right signature under the other key's id does not verify.
    expect(codeOf(signed(BODY, { key: payPublicKey.privateKey, serial: PLATFORM_SERIAL }))).toBe('signature_invalid')
    expect(codeOf(signed(BODY, { key: stranger.privateKey, serial: PLATFORM_SERIAL }))).toBe('signature_invalid')
    expect(codeOf(signed(BODY, { serial: '0000' }))).toBe('unknown_serial')
    expect(codeOf(signed(BODY, { serial: 'PUB_KEY_ID_0000' }))).toBe('unknown_serial')
    // Hex serials match in any case (they are often pasted lower-case).
    expect(codeOf(signed(BODY, { serial: PLATFORM_SERIAL.toLowerCase() }))).toBe('ok')
  })

  it('matches public key ids exactly: another case names no key, whichever side has it', () => {
    const asPayKey = (serial: string) => signed(BODY, { key: payPublicKey.privateKey, serial })
    expect(codeOf(asPayKey(PUB_KEY_ID.toLowerCase()))).toBe('unknown_serial')
    expect(codeOf(asPayKey(`pub_key_id_${PUB_KEY_ID.slice('PUB_KEY_ID_'.length)}`))).toBe('unknown_serial')
    const lowerConfigured = createVerificationKeySet({ [PUB_KEY_ID.toLowerCase()]: payPublicKey.publicKey })
    expect(lowerConfigured.serials).toEqual([PUB_KEY_ID.toLowerCase()])
    expect(lowerConfigured.get(PUB_KEY_ID)).toBeUndefined()
    expect(codeOf(asPayKey(PUB_KEY_ID), { verificationKeys: lowerConfigured })).toBe('unknown_serial')
    expect(codeOf(asPayKey(PUB_KEY_ID.toLowerCase()), { verificationKeys: lowerConfigured })).toBe('ok')
    // Letters after the prefix count too.
    const lettered = createVerificationKeySet({ PUB_KEY_ID_0114abc: payPublicKey.publicKey })
    expect(lettered.get('PUB_KEY_ID_0114abc')).toBeDefined()
    expect(lettered.get('PUB_KEY_ID_0114ABC')).toBeUndefined()
  })

  it('refuses another signature type', () => {
    expect(codeOf({ ...signed(BODY), signatureType: 'WECHATPAY2-SM2-WITH-SM3' })).toBe('unsupported_algorithm')
  })
})

describe('signed parts from headers', () => {
  const headers = wechatpayHeaders(BODY, { key: platform.privateKey, serial: PLATFORM_SERIAL, timestamp: TS })

  it('reads headers in any case and refuses a missing, empty or repeated one', () => {
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
    expect(signedMessageFromHeaders(lower, BODY).serial).toBe(PLATFORM_SERIAL)
    for (const name of ['Wechatpay-Timestamp', 'Wechatpay-Nonce', 'Wechatpay-Signature', 'Wechatpay-Serial']) {
      const { [name]: _dropped, ...rest } = headers
      expect(() => signedMessageFromHeaders(rest, BODY)).toThrow(expect.objectContaining({ code: 'missing_header' }))
      expect(() => signedMessageFromHeaders({ ...rest, [name]: '' }, BODY)).toThrow(expect.objectContaining({ code: 'missing_header' }))
    }
    expect(() => signedMessageFromHeaders({ ...headers, 'Wechatpay-Signature': ['a', 'b'] }, BODY)).toThrow(expect.objectContaining({ code: 'missing_header' }))
    expect(() => signedMessageFromHeaders({ ...headers, 'wechatpay-signature': 'x' }, BODY)).toThrow(/repeated/)
  })
})

describe('verification keys', () => {
  it('accept a PEM public key, a KeyObject and an X.509 platform certificate', () => {
    const set = createVerificationKeySet({ [FIXTURE_CERT_SERIAL.toLowerCase()]: fixtureCertPem, [PUB_KEY_ID]: payPublicKey.publicKey, A1: platform.publicPem })
    expect(set.serials).toEqual([FIXTURE_CERT_SERIAL, PUB_KEY_ID, 'A1'])
    const headers = wechatpayHeaders(BODY, { key: createPrivateKey(fixtureCertKeyPem), serial: FIXTURE_CERT_SERIAL, timestamp: TS })
    expect(() => verifyWechatPaySignature(signedMessageFromHeaders(headers, BODY), { verificationKeys: set, now: () => NOW })).not.toThrow()
  })

  it('refuse private keys, garbage, an empty map, and a certificate filed under another serial', () => {
    const refused = (keys: VerificationKeys) => expect(() => createVerificationKeySet(keys)).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    refused({ A1: merchant.privatePem })
    refused({ A1: merchant.privateKey })
    refused({ A1: 'not a key' })
    refused({})
    refused({ '0123': fixtureCertPem })
  })
})

