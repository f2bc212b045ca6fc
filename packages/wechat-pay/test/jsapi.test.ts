// The cashier's parameters (`getBrandWCPayRequest`): the string to sign pinned to the reference's
// example byte for byte, paySign checked against a key generated here and against Node's own
// RSA-SHA256 of those bytes (PKCS#1 v1.5 is deterministic), the defaults, and every refusal.
import { createSign, createVerify, generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { jsapiPayParameters, jsapiPaySignMessage, WechatPayError } from '../src/index'

// Reference phone-pay-reminders-admin.md §1.3 (WeChat's own example).
const APP_ID = 'wx8888888888888888'
const TIME_STAMP = '1414561699'
const NONCE_STR = '5K8264ILTKCH16CQ2502SI8ZNMTM67VS'
const PREPAY_ID = 'wx201410272009395522657a690389285100'
const REFERENCE_MESSAGE = 'wx8888888888888888\n1414561699\n5K8264ILTKCH16CQ2502SI8ZNMTM67VS\nprepay_id=wx201410272009395522657a690389285100\n'

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

describe('jsapiPaySignMessage', () => {
  it("is the reference's four lines, each ending in \\n, signType not among them", () => {
    const message = jsapiPaySignMessage({ appId: APP_ID, timeStamp: TIME_STAMP, nonceStr: NONCE_STR, package: `prepay_id=${PREPAY_ID}` })
    expect(message.equals(Buffer.from(REFERENCE_MESSAGE, 'utf8'))).toBe(true)
    expect(message.at(-1)).toBe(0x0a)
  })
})

describe('jsapiPayParameters', () => {
  it('signs the reference example: verifies with the public key and equals node:crypto RSA-SHA256 of the bytes', () => {
    const parameters = jsapiPayParameters({ appId: APP_ID, prepayId: PREPAY_ID, privateKey: privatePem, timeStamp: TIME_STAMP, nonceStr: NONCE_STR })
    expect(parameters).toEqual({
      appId: APP_ID,
      timeStamp: TIME_STAMP,
      nonceStr: NONCE_STR,
      package: `prepay_id=${PREPAY_ID}`,
      signType: 'RSA',
      paySign: expect.stringMatching(/^[A-Za-z0-9+/]{342}==$/),
    })
    expect(createVerify('RSA-SHA256').update(REFERENCE_MESSAGE, 'utf8').verify(publicKey, parameters.paySign, 'base64')).toBe(true)
    expect(parameters.paySign).toBe(createSign('RSA-SHA256').update(REFERENCE_MESSAGE, 'utf8').sign(privateKey, 'base64'))
    // The key as a KeyObject or a Buffer signs the same.
    expect(jsapiPayParameters({ appId: APP_ID, prepayId: PREPAY_ID, privateKey, timeStamp: TIME_STAMP, nonceStr: NONCE_STR }).paySign).toBe(parameters.paySign)
    expect(jsapiPayParameters({ appId: APP_ID, prepayId: PREPAY_ID, privateKey: Buffer.from(privatePem), timeStamp: TIME_STAMP, nonceStr: NONCE_STR }).paySign).toBe(parameters.paySign)
  })

  it('defaults timeStamp to now in seconds and nonceStr to 32 random letters and digits', () => {
    const before = Math.floor(Date.now() / 1000)
    const a = jsapiPayParameters({ appId: APP_ID, prepayId: PREPAY_ID, privateKey: privatePem })
    const b = jsapiPayParameters({ appId: APP_ID, prepayId: PREPAY_ID, privateKey: privatePem })
    expect(a.timeStamp).toMatch(/^\d{10}$/)
    expect(Number(a.timeStamp)).toBeGreaterThanOrEqual(before)
    expect(Number(a.timeStamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    expect(a.nonceStr).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(a.nonceStr).not.toBe(b.nonceStr)
    const message = jsapiPaySignMessage(a)
    expect(createVerify('RSA-SHA256').update(message).verify(publicKey, a.paySign, 'base64')).toBe(true)
  })

  it('refuses what the cashier would refuse or what would change the signed lines', () => {
    const base = { appId: APP_ID, prepayId: PREPAY_ID, privateKey: privatePem }
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ appId: '' }, /appId/],
      [{ appId: 'wx8888\n8888' }, /appId/],
      [{ prepayId: '' }, /prepayId/],
      [{ prepayId: `${PREPAY_ID}\nx` }, /prepayId/],
      [{ prepayId: 'p'.repeat(119) }, /prepayId/],
      [{ timeStamp: String(Date.now()) }, /seconds.*not milliseconds/],
      [{ timeStamp: 1414561699 }, /timeStamp/],
      [{ timeStamp: '' }, /timeStamp/],
      [{ nonceStr: 'n'.repeat(33) }, /nonceStr/],
      [{ nonceStr: 'a b' }, /nonceStr/],
    ]
    for (const [change, message] of cases) {
      let error: unknown
      try {
        jsapiPayParameters({ ...base, ...change } as never)
      } catch (e) {
        error = e
      }
      expect(error, JSON.stringify(change)).toBeInstanceOf(WechatPayError)
      expect((error as WechatPayError).code).toBe('invalid_argument')
      expect((error as WechatPayError).message).toMatch(message)
    }
    expect(() => jsapiPayParameters({ ...base, privateKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() })).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    )
    expect(() => jsapiPayParameters({ ...base, privateKey: publicKey })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
  })
})
