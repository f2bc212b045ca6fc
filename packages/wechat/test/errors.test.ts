// WechatError is the one class to catch: every error the package throws is one, with the code its
// kind documents. The API failures (api_error, http_error) are reached against the emulator in
// qr-provider.test.ts; the codes here need no server.
import { describe, expect, it } from 'vitest'
import {
  createWechatCallback,
  createWechatQrProvider,
  decodeAesKey,
  decryptMessage,
  encryptMessage,
  parseXml,
  WechatCryptoError,
  WechatError,
  WechatXmlError,
  type WechatCallbackOptions,
  type WechatErrorCode,
  type WechatQrProviderOptions,
} from '../src/index'
import { VECTOR } from './helpers'

/** The error `run` throws or rejects with, checked to be a WechatError with `code` and no endpoint. */
async function wechatError(code: WechatErrorCode, run: () => unknown): Promise<WechatError> {
  let caught: unknown
  try {
    await run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(WechatError)
  const error = caught as WechatError
  expect(error.code).toBe(code)
  expect(error.endpoint).toBeUndefined()
  return error
}

describe('invalid_options', () => {
  const account: WechatQrProviderOptions = { appId: 'wx_app', appSecret: 'secret' }

  it('createWechatQrProvider names the option that is wrong', async () => {
    const cases: Array<[Partial<WechatQrProviderOptions>, string]> = [
      [{ appId: '' }, 'createWechatQrProvider: appId is required'],
      [{ appSecret: undefined as never }, 'createWechatQrProvider: appSecret is required'],
      [{ tokenEndpoint: 'other' as never }, "createWechatQrProvider: tokenEndpoint must be 'stable' or 'classic'"],
      [{ timeoutMs: 0 }, 'createWechatQrProvider: timeoutMs must be positive'],
    ]
    for (const [options, message] of cases) {
      const error = await wechatError('invalid_options', () => createWechatQrProvider({ ...account, ...options }))
      expect({ name: error.name, message: error.message }).toEqual({ name: 'WechatError', message })
    }
  })

  it('createWechatCallback names the option that is wrong', async () => {
    const base: WechatCallbackOptions = { auth: { handleScan: async () => ({ result: 'invalid' }) }, token: 'tok', appId: 'wx_app' }
    const cases: Array<[Partial<WechatCallbackOptions>, string]> = [
      [{ auth: {} as never }, 'createWechatCallback: auth must have handleScan()'],
      [{ token: '' }, 'createWechatCallback: token is required'],
      [{ appId: '' }, 'createWechatCallback: appId is required'],
      [{ requireEncryption: true }, 'createWechatCallback: requireEncryption needs encodingAESKey'],
      [{ encodingAESKey: 'short' }, 'createWechatCallback: encodingAESKey must be 43 characters from [A-Za-z0-9] (the base64 alphabet)'],
      [{ encodingAESKey: VECTOR.encodingAESKey, previousEncodingAESKey: '!'.repeat(43) }, 'createWechatCallback: previousEncodingAESKey must be'],
      [{ replayWindowSeconds: 0 }, 'createWechatCallback: replayWindowSeconds must be a positive number or false'],
      [{ maxBodyBytes: 1.5 }, 'createWechatCallback: maxBodyBytes must be a positive integer'],
      [{ replyDeadlineMs: -1 }, 'createWechatCallback: replyDeadlineMs must be positive'],
    ]
    for (const [options, start] of cases) {
      const error = await wechatError('invalid_options', () => createWechatCallback({ ...base, ...options }))
      expect(error.message.startsWith(start)).toBe(true)
    }
  })

  it('decodeAesKey refuses a key that is not 43 base64 characters', async () => {
    await wechatError('invalid_options', () => decodeAesKey(VECTOR.encodingAESKey.slice(1)))
  })
})

describe('invalid_argument', () => {
  it('createQr refuses a scene WeChat cannot carry and a lifetime that is not positive, before any request', async () => {
    // An address nothing listens on: the arguments are refused before a token is asked for.
    const provider = createWechatQrProvider({ appId: 'wx_app', appSecret: 'secret', apiBaseUrl: 'http://127.0.0.1:9/' })
    const tooLong = await wechatError('invalid_argument', () => provider.createQr({ sceneStr: 'x'.repeat(65), expiresInSeconds: 300 }))
    expect(tooLong.message).toBe('sceneStr must be 1 to 64 characters (WeChat scene_str limit)')
    await wechatError('invalid_argument', () => provider.createQrCode({ sceneStr: '', expiresInSeconds: 300 }))
    await wechatError('invalid_argument', () => provider.createQr({ sceneStr: 'pc_1', expiresInSeconds: 0 }))
  })

  it('encryptMessage refuses a random prefix that is not 16 bytes', async () => {
    await wechatError('invalid_argument', () => encryptMessage(decodeAesKey(VECTOR.encodingAESKey), 'wx', '<xml/>', Buffer.alloc(15)))
  })
})

describe('crypto_error and xml_error', () => {
  it('a payload that does not decrypt is a WechatCryptoError, code crypto_error', async () => {
    const error = await wechatError('crypto_error', () => decryptMessage(decodeAesKey(VECTOR.encodingAESKey), Buffer.alloc(32).toString('base64')))
    expect(error).toBeInstanceOf(WechatCryptoError)
    expect(error.name).toBe('WechatCryptoError')
  })

  it('XML with a DTD is a WechatXmlError, code xml_error', async () => {
    const error = await wechatError('xml_error', () => parseXml('<!DOCTYPE x [<!ENTITY a "b">]><xml><A>&a;</A></xml>'))
    expect(error).toBeInstanceOf(WechatXmlError)
    expect(error.name).toBe('WechatXmlError')
  })
})
