// parseWechatPayNotification: raw bytes in, a verified and decrypted notification out, or a refusal
// with the code that decides the HTTP answer.
import { describe, expect, it } from 'vitest'
import { parseWechatPayNotification, WechatPayError, type ParseNotificationOptions } from '../src/index'
import { API_V3_KEY, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID, stranger } from './support/keys'
import { NOW, paidNotification, refundNotification, transactionResource } from './support/notify'
import { wechatpayHeaders } from './support/pay-side'

const options: ParseNotificationOptions = {
  verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem },
  apiV3Key: API_V3_KEY,
  now: () => NOW,
}

function codeOf(request: { headers: Record<string, string>; body: Buffer | string }, overrides: Partial<ParseNotificationOptions> = {}): string {
  try {
    parseWechatPayNotification(request, { ...options, ...overrides })
    return 'ok'
  } catch (error) {
    if (error instanceof WechatPayError) return error.code
    throw error
  }
}

describe('parseWechatPayNotification', () => {
  it('verifies, decrypts and types a payment notification', () => {
    const sent = paidNotification({ id: 'EV-2018022511223320873' })
    const parsed = parseWechatPayNotification(sent, options)
    expect(parsed).toEqual({
      id: 'EV-2018022511223320873',
      eventType: 'TRANSACTION.SUCCESS',
      createTime: '2026-01-01T08:00:00+08:00',
      resourceType: 'encrypt-resource',
      summary: '支付成功',
      originalType: 'transaction',
      resource: transactionResource(),
      serial: PLATFORM_SERIAL,
    })
  })

  it('accepts both key modes from one map, text or bytes, with any AAD including none', () => {
    expect(parseWechatPayNotification(paidNotification({ publicKeyMode: true }), options).serial).toBe(PUB_KEY_ID)
    const sent = paidNotification({ associatedData: '' })
    expect(parseWechatPayNotification({ headers: sent.headers, body: sent.body.toString('utf8') }, options).resource.out_trade_no).toBe('SA2026000001')
    expect(parseWechatPayNotification(refundNotification(), options)).toMatchObject({ eventType: 'REFUND.SUCCESS', originalType: 'refund', resource: { refund_status: 'SUCCESS' } })
    // A pretty-printed envelope is fine as long as those are the bytes that were signed.
    expect(codeOf(paidNotification({ spacing: 2 }))).toBe('ok')
  })

  it('refuses a missing header instead of skipping verification', () => {
    const sent = paidNotification()
    for (const name of Object.keys(sent.headers).filter((h) => h !== 'Wechatpay-Signature-Type')) {
      const { [name]: _dropped, ...headers } = sent.headers
      expect(codeOf({ headers, body: sent.body })).toBe('missing_header')
    }
    expect(codeOf({ headers: {}, body: sent.body })).toBe('missing_header')
  })

  it('refuses forged, re-serialized, probed, stale and unknown-key notifications', () => {
    const sent = paidNotification()
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(sent.body.toString('utf8')), null, 2))
    expect(codeOf({ headers: sent.headers, body: reserialized })).toBe('signature_invalid')
    expect(codeOf({ headers: sent.headers, body: Buffer.concat([sent.body, Buffer.from(' ')]) })).toBe('signature_invalid')
    expect(codeOf(paidNotification({ sign: { key: stranger.privateKey } }))).toBe('signature_invalid')
    expect(codeOf(paidNotification({ sign: { signature: 'WECHATPAY/SIGNTEST/QWxhZGRpbjpvcGVuIHNlc2FtZQ==' } }))).toBe('signature_invalid')
    expect(codeOf(paidNotification({ sign: { timestamp: NOW / 1000 - 300 } }))).toBe('ok')
    expect(codeOf(paidNotification({ sign: { timestamp: NOW / 1000 - 301 } }))).toBe('timestamp_out_of_range')
    expect(codeOf(paidNotification({ sign: { timestamp: NOW / 1000 + 301 } }))).toBe('timestamp_out_of_range')
    expect(codeOf(paidNotification({ sign: { timestamp: NOW / 1000 - 3600 } }), { maxSkewSeconds: 3600 })).toBe('ok')
    expect(codeOf(paidNotification({ sign: { serial: 'PUB_KEY_ID_0114232134912410000000000000009999' } }))).toBe('unknown_serial')
  })

  it('refuses a wrong APIv3 key with decryption_failed, and one of the wrong length up front', () => {
    expect(codeOf(paidNotification(), { apiV3Key: 'scanauthTestApiV3Key000000000002' })).toBe('decryption_failed')
    expect(codeOf(paidNotification(), { apiV3Key: 'testMchAPIv3Key0' })).toBe('invalid_options')
  })

  it('refuses malformed bodies (only once they verify) and foreign algorithms', () => {
    const signedBody = (body: string) => ({ headers: wechatpayHeaders(body, { key: platform.privateKey, serial: PLATFORM_SERIAL, timestamp: NOW / 1000 }), body })
    expect(codeOf(signedBody('not json'))).toBe('malformed_body')
    expect(codeOf(signedBody('[]'))).toBe('malformed_body')
    expect(codeOf(signedBody('{"id":"EV-1","event_type":"TRANSACTION.SUCCESS"}'))).toBe('malformed_body')
    expect(codeOf(signedBody('{"id":"EV-1","event_type":"X","resource":{"algorithm":"AEAD_AES_128_GCM","nonce":"n","ciphertext":"AAAA"}}'))).toBe('unsupported_algorithm')
    // Unsigned garbage is refused for its signature first: nothing is parsed before that.
    expect(codeOf({ headers: { ...signedBody('{}').headers }, body: 'not json' })).toBe('signature_invalid')
  })
})
