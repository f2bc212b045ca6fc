// The WeChat Pay emulator's platform keys (rotation, both naming modes, the previous key's share of
// notifications), its options checks, and its independence from the Official Account emulator.
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatEmulator, startWechatPayEmulator, WechatEmulatorError, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { merchantClient, nativeOrder, notifyEndpoint, verifyWechatpay } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787' }
const resources = closer()
afterEach(() => resources.closeAll())

async function start(options: Partial<WechatPayEmulatorOptions> = {}) {
  return resources.add(await startWechatPayEmulator({ ...MERCHANT, ...options }))
}

/** Pays a new order and resolves with the notification the endpoint received. */
async function payOnce(emulator: Awaited<ReturnType<typeof start>>, endpoint: Awaited<ReturnType<typeof notifyEndpoint>>) {
  const order = nativeOrder(emulator, endpoint.url)
  await merchantClient(emulator)('POST', '/v3/pay/transactions/native', order)
  await emulator.pay({ outTradeNo: order.out_trade_no as string })
  await emulator.settled()
  return endpoint.received.at(-1)!
}

describe('platform key rotation', () => {
  it('a new serial signs from now on; the old key is kept in verificationKeys unless retired', async () => {
    const emulator = await start()
    const endpoint = await notifyEndpoint(resources)
    const old = emulator.platformSerial
    const before = await payOnce(emulator, endpoint)
    expect(before.headers['wechatpay-serial']).toBe(old)

    const next = await emulator.rotatePlatformKey()
    expect(next).not.toBe(old)
    expect(next).toMatch(/^PUB_KEY_ID_/)
    expect(Object.keys(emulator.verificationKeys)).toEqual([old, next])
    const after = await payOnce(emulator, endpoint)
    expect(after.headers['wechatpay-serial']).toBe(next)
    expect(verifyWechatpay(after.headers, after.body, emulator.verificationKeys)).toBe(true)
    // A verifier holding only the old key cannot verify the new notification.
    expect(verifyWechatpay(after.headers, after.body, { [old]: emulator.verificationKeys[old]! })).toBe(false)

    const rotated = (await (await fetch(`${emulator.url}/emulator/rotate-key`, { method: 'POST', body: JSON.stringify({ retireOld: true }) })).json()) as { serial: string; verificationKeys: Record<string, string> }
    expect(Object.keys(rotated.verificationKeys)).toEqual([rotated.serial])
    expect(emulator.platformSerial).toBe(rotated.serial)
    const asked = await merchantClient(emulator)('GET', `/v3/pay/transactions/out-trade-no/SA000001?mchid=${MERCHANT.mchid}`, undefined, { wechatpaySerial: next })
    expect(asked.json.code).toBe('SYSTEM_ERROR')
  })

  it('previousKeyShare: 1 keeps signing notifications with the previous key after a rotation (a migration ramp)', async () => {
    const emulator = await start({ mode: 'certificate', knobs: { previousKeyShare: 1 } })
    const endpoint = await notifyEndpoint(resources)
    const old = emulator.platformSerial
    expect(old).toMatch(/^[0-9A-F]{40}$/)
    expect((await payOnce(emulator, endpoint)).headers['wechatpay-serial']).toBe(old) // no previous key yet
    await emulator.rotatePlatformKey()
    const received = await payOnce(emulator, endpoint)
    expect(received.headers['wechatpay-serial']).toBe(old)
    expect(verifyWechatpay(received.headers, received.body, emulator.verificationKeys)).toBe(true)
    expect(emulator.notifications().at(-1)!.serial).toBe(old)
  })
})

// That a client built from clientOptions() really opens orders is @scanauth/wechat-pay's e2e test:
// this package's tests sign by hand and do not depend on the client.
describe('clientOptions', () => {
  it('hands over the handle: the generated merchant key, the keys of the moment, requestSerial in public-key mode only', async () => {
    const emulator = await start()
    const key = emulator.merchantKey!
    const options = emulator.clientOptions()
    expect(options).toEqual({
      mchid: MERCHANT.mchid,
      appid: MERCHANT.appid,
      merchantPrivateKey: key.privateKeyPem,
      merchantCertSerial: key.serial,
      verificationKeys: emulator.verificationKeys,
      requestSerial: emulator.platformSerial,
      apiBase: emulator.url,
    })
    await emulator.rotatePlatformKey({ retireOld: true })
    expect(emulator.clientOptions()).toMatchObject({ verificationKeys: emulator.verificationKeys, requestSerial: emulator.platformSerial })
    // What was handed over before is a snapshot: rotating does not reach into a client's settings.
    expect(options.requestSerial).not.toBe(emulator.platformSerial)
    expect(Object.keys(options.verificationKeys)).not.toContain(emulator.platformSerial)

    const certificate = await start({ mode: 'certificate' })
    expect(certificate.clientOptions()).not.toHaveProperty('requestSerial')
  })

  it('throws no_merchant_key when the emulator has no merchant key of its own', async () => {
    const emulator = await start({ merchantPublicKeys: { AA01: (await start()).merchantKey!.publicKeyPem } })
    expect(() => emulator.clientOptions()).toThrow(expect.objectContaining({ name: 'WechatEmulatorError', code: 'no_merchant_key' }))
  })
})

describe('options and arguments', () => {
  it('refuses bad options with invalid_options naming the option', async () => {
    const cases: Array<[Partial<WechatPayEmulatorOptions>, RegExp]> = [
      [{ mchid: '' }, /mchid is required/],
      [{ appid: undefined as never }, /appid is required/],
      [{ apiV3Key: 'too-short' }, /apiV3Key must be 32 ASCII characters/],
      [{ apiV3Key: '０123456789abcdef0123456789abcde' }, /apiV3Key/],
      [{ mode: 'other' as never }, /mode/],
      [{ retrySchedule: [15, -1] }, /retrySchedule/],
      [{ notifyTimeoutMs: Number.NaN }, /notifyTimeoutMs/],
      [{ merchantPublicKeys: { AA: 'not a pem' } }, /serial AA is not a PEM/],
      [{ knobs: { probeFirst: 'yes' as never } }, /probeFirst must be a boolean/],
    ]
    for (const [options, message] of cases) {
      const error = await startWechatPayEmulator({ ...MERCHANT, ...options }).then(
        (emulator) => (resources.add(emulator), null),
        (e: unknown) => e,
      )
      expect(error, String(message)).toBeInstanceOf(WechatEmulatorError)
      expect((error as WechatEmulatorError).code).toBe('invalid_options')
      expect((error as WechatEmulatorError).message).toMatch(message)
    }
  })

  it('refuses bad arguments with invalid_argument, and everything after close with closed', async () => {
    const emulator = await start()
    expect(() => emulator.setKnobs({ previousKeyShare: 2 })).toThrow(expect.objectContaining({ code: 'invalid_argument' }))
    expect(() => emulator.setKnobs({ nope: true } as never)).toThrow(/unknown knob nope/)
    expect(() => emulator.addMerchantKey('AA', 'nope')).toThrow(expect.objectContaining({ code: 'invalid_argument' }))
    await expect(emulator.pay({})).rejects.toMatchObject({ code: 'invalid_argument' })
    await expect(emulator.pay({ outTradeNo: 'SA_NONE' })).rejects.toMatchObject({ code: 'unknown_order' })
    await emulator.close()
    await expect(emulator.pay({ outTradeNo: 'SA_NONE' })).rejects.toMatchObject({ code: 'closed' })
  })

  it('close() ends retries in progress', async () => {
    const emulator = await start({ retrySchedule: [60_000] })
    const endpoint = await notifyEndpoint(resources, () => 500)
    const order = nativeOrder(emulator, endpoint.url)
    await merchantClient(emulator)('POST', '/v3/pay/transactions/native', order)
    await emulator.pay({ outTradeNo: order.out_trade_no as string })
    while (endpoint.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const started = Date.now()
    await emulator.close()
    expect(Date.now() - started).toBeLessThan(1000)
    expect(emulator.notifications()[0]!.state).toBe('gave-up')
  })
})

describe('independence', () => {
  it('runs next to the Official Account emulator, each on its own server', async () => {
    const oa = resources.add(await startWechatEmulator({ appId: MERCHANT.appid, appSecret: 's', token: 't' }))
    const pay = await start()
    expect(pay.url).not.toBe(oa.url)
    expect((await fetch(`${oa.url}/v3/pay/transactions/native`, { method: 'POST' })).status).toBe(404)
    expect((await fetch(`${pay.url}/cgi-bin/token`)).status).toBe(404)
  })
})
