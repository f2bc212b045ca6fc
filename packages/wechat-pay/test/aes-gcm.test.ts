// AEAD_AES_256_GCM: the reference's vector, round trips, and every way decryption must refuse.
import { describe, expect, it } from 'vitest'
import { decryptAesGcm, encryptAesGcm, WechatPayError } from '../src/index'
import { encryptResource } from './support/pay-side'

const VECTOR = { apiV3Key: '0123456789abcdef0123456789abcdef', nonce: '0123456789ab', associatedData: 'certificate' }
const VECTOR_CIPHERTEXT = '0cyLVizqz3SHaUezNKP+u3JwdpSEgeYtnMEa'

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    if (error instanceof WechatPayError) return error.code
    throw error
  }
  return undefined
}

describe('AES-256-GCM', () => {
  it('matches the pinned vector both ways', () => {
    expect(encryptAesGcm({ ...VECTOR, plaintext: 'Hello World' })).toBe(VECTOR_CIPHERTEXT)
    expect(decryptAesGcm({ ...VECTOR, ciphertext: VECTOR_CIPHERTEXT }).toString('utf8')).toBe('Hello World')
  })

  it('decrypts what WeChat Pay’s side encrypts, with an empty or absent AAD', () => {
    const key = 'scanauthTestApiV3Key000000000001'
    const ciphertext = encryptResource(key, 'Kj7QIyUiYx1q', '', '{"mchid":"1230000109","交易":"成功"}')
    expect(JSON.parse(decryptAesGcm({ apiV3Key: key, nonce: 'Kj7QIyUiYx1q', ciphertext }).toString('utf8'))).toEqual({ mchid: '1230000109', 交易: '成功' })
    expect(decryptAesGcm({ apiV3Key: key, nonce: 'Kj7QIyUiYx1q', associatedData: '', ciphertext }).toString('utf8')).toContain('1230000109')
  })

  it('refuses a wrong APIv3 key, AAD, nonce or altered ciphertext with decryption_failed', () => {
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, apiV3Key: '0123456789abcdef0123456789abcdeX', ciphertext: VECTOR_CIPHERTEXT }))).toBe('decryption_failed')
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, associatedData: 'transaction', ciphertext: VECTOR_CIPHERTEXT }))).toBe('decryption_failed')
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, nonce: '0123456789ac', ciphertext: VECTOR_CIPHERTEXT }))).toBe('decryption_failed')
    const altered = Buffer.from(VECTOR_CIPHERTEXT, 'base64')
    altered[0] = (altered[0] ?? 0) ^ 1
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, ciphertext: altered.toString('base64') }))).toBe('decryption_failed')
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, ciphertext: 'AAAA' }))).toBe('decryption_failed')
    expect(codeOf(() => decryptAesGcm({ ...VECTOR, ciphertext: 'not base64 at all!' }))).toBe('decryption_failed')
  })

  it('refuses keys that are not 32 ASCII bytes, naming the length', () => {
    for (const apiV3Key of ['testMchAPIv3Key0', '0123456789abcdef0123456789abcdef0', '0123456789abcdef0123456789abcde\u00e9', '']) {
      expect(codeOf(() => decryptAesGcm({ ...VECTOR, apiV3Key, ciphertext: VECTOR_CIPHERTEXT }))).toBe('invalid_argument')
    }
    expect(() => decryptAesGcm({ ...VECTOR, apiV3Key: 'testMchAPIv3Key0', ciphertext: VECTOR_CIPHERTEXT })).toThrow(/32-character APIv3 key .*got 16 bytes/)
  })
})
