// Request signing: the message byte for byte, sign → verify round trips with keys generated here
// (the wechatpay-go test key of the reference vectors is not ours to ship), the Authorization header.
import { createPublicKey } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { authorizationHeader, requestSignatureMessage, responseSignatureMessage, signMessage, verifyMessage } from '../src/index'
import { merchant, stranger } from './support/keys'
import { parseAuthorization, verifyMerchantRequest } from './support/pay-side'

const ORDER_BODY =
  '{"appid":"wxd678efh567hg6787","mchid":"1230000109","description":"scanauth 30-day pass","out_trade_no":"SA20250101T1","notify_url":"https://example.com/wxpay/notify","amount":{"total":1990,"currency":"CNY"}}'

describe('request signature message', () => {
  it('is five lines, each ending in \\n, the last included', () => {
    const message = requestSignatureMessage({ method: 'post', canonicalUrl: '/v3/pay/transactions/native', timestamp: 1554208460, nonce: '593BEC0C930BF1AFEB40B4A08C8FB242', body: ORDER_BODY })
    expect(message.toString('utf8')).toBe(`POST\n/v3/pay/transactions/native\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n${ORDER_BODY}\n`)
  })

  it('keeps the query string and ends a GET with an empty body line', () => {
    const message = requestSignatureMessage({ method: 'GET', canonicalUrl: '/v3/pay/transactions/out-trade-no/SA20250101T1?mchid=1230000109', timestamp: '1554208460', nonce: 'N', body: '' })
    expect(message.toString('utf8')).toBe('GET\n/v3/pay/transactions/out-trade-no/SA20250101T1?mchid=1230000109\n1554208460\nN\n\n')
  })

  it('keeps body bytes untouched (UTF-8 Chinese, bytes that are not UTF-8)', () => {
    const bytes = Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d])
    const message = requestSignatureMessage({ method: 'POST', canonicalUrl: '/x', timestamp: 1, nonce: 'n', body: bytes })
    expect([...message.subarray(message.length - 5)]).toEqual([0x7b, 0xff, 0xfe, 0x7d, 0x0a])
    expect(responseSignatureMessage(1, 'n', '支付成功').toString('utf8')).toBe('1\nn\n支付成功\n')
  })

  it('answers with an empty last line for a 204', () => {
    expect(responseSignatureMessage('1722850421', 'd824f2e086d3c1df967785d13fcd22ef', '').toString('utf8')).toBe('1722850421\nd824f2e086d3c1df967785d13fcd22ef\n\n')
  })
})

describe('RSA-SHA256 signatures', () => {
  const message = requestSignatureMessage({ method: 'POST', canonicalUrl: '/v3/pay/transactions/native', timestamp: 1554208460, nonce: '593BEC0C930BF1AFEB40B4A08C8FB242', body: ORDER_BODY })

  it('round-trips sign → verify, and the signature is 256 bytes of base64', () => {
    const signature = signMessage(message, merchant.privateKey)
    expect(Buffer.from(signature, 'base64')).toHaveLength(256)
    expect(verifyMessage(message, signature, merchant.publicKey)).toBe(true)
    // Deterministic: PKCS#1 v1.5 has no randomness, as the reference's fixed vectors rely on.
    expect(signMessage(message, merchant.privateKey)).toBe(signature)
  })

  it('fails for another key, a tampered body, one extra space, a lost trailing newline', () => {
    const signature = signMessage(message, merchant.privateKey)
    expect(verifyMessage(message, signature, stranger.publicKey)).toBe(false)
    const text = message.toString('utf8')
    expect(verifyMessage(text.replace('1990', '1991'), signature, merchant.publicKey)).toBe(false)
    expect(verifyMessage(text.replace('"total":1990', '"total": 1990'), signature, merchant.publicKey)).toBe(false)
    expect(verifyMessage(text.slice(0, -1), signature, merchant.publicKey)).toBe(false)
  })

  it('answers false, never throws, for unreadable signatures', () => {
    for (const bad of ['', 'WECHATPAY/SIGNTEST/abc', 'not base64!', 'QUJD\n', 'A===', 'QUJD']) {
      expect(verifyMessage(message, bad, merchant.publicKey)).toBe(false)
    }
  })
})

describe('Authorization header', () => {
  it('names the five fields WeChat Pay parses, and verifies on its side', () => {
    const signature = signMessage(
      requestSignatureMessage({ method: 'GET', canonicalUrl: '/v3/certificates?algorithm_type=RSA', timestamp: 1680144553, nonce: 'vDit', body: '' }),
      merchant.privateKey,
    )
    const header = authorizationHeader({ mchid: '1230000109', serialNo: 'ABC123', nonce: 'vDit', timestamp: 1680144553, signature })
    expect(header).toBe(`WECHATPAY2-SHA256-RSA2048 mchid="1230000109",nonce_str="vDit",signature="${signature}",timestamp="1680144553",serial_no="ABC123"`)
    expect(parseAuthorization(header)).toEqual({ mchid: '1230000109', nonce_str: 'vDit', signature, timestamp: '1680144553', serial_no: 'ABC123' })
    expect(verifyMerchantRequest('GET', '/v3/certificates?algorithm_type=RSA', Buffer.alloc(0), header, createPublicKey(merchant.publicPem))).toBe(true)
    expect(verifyMerchantRequest('GET', '/v3/certificates', Buffer.alloc(0), header, merchant.publicKey)).toBe(false)
  })
})
