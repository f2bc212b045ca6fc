// A client wired to the test WeChat Pay of pay-server.ts.
import { ManualClock } from '@scanauth/testkit'
import { createWechatPayClient, type WechatPayClientOptions } from '../../src/index'
import { APPID, MCHID, merchant, MERCHANT_SERIAL, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID } from './keys'
import type { PayServer } from './pay-server'

export function clientFor(server: PayServer, clock: ManualClock, overrides: Partial<WechatPayClientOptions> = {}) {
  return createWechatPayClient({
    mchid: MCHID,
    appid: APPID,
    merchantPrivateKey: merchant.privatePem,
    merchantCertSerial: MERCHANT_SERIAL,
    verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem },
    apiBase: server.url,
    notifyUrl: 'https://example.com/wxpay/notify',
    now: clock.now,
    timeoutMs: 2_000,
    ...overrides,
  })
}
