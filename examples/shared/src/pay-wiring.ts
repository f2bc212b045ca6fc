/**
 * The WeChat Pay side of an example server: the payment provider core sells through, the
 * notification handler mounted at `POST /wechatpay/notify`, and, without a merchant configured, the
 * WeChat Pay emulator in-process (independent of the Official Account's: either may be emulated
 * while the other is real).
 *
 * The client needs its `notify_url`, which by default is the server's own address, known only once it
 * listens. So core gets a provider that hands each call to the client built by `listening(baseUrl)`;
 * the options are checked at start all the same (a throwaway client is built from them), so a
 * configuration WeChat Pay's client would refuse stops the start, not the first purchase.
 *
 * @module
 */
import type { PaymentMerchant, PaymentProvider, ScanAuth } from '@scanauth/core'
import {
  createWechatPayClient,
  createWechatPayNotificationHandler,
  createWechatPayProvider,
  type VerificationKeys,
  type WechatPayClientOptions,
  type WechatPayNotificationHandler,
  type WechatPayRejection,
} from '@scanauth/wechat-pay'
import { startWechatPayEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { ConfigError, type ExampleConfig } from './config'

/** The emulated merchant id (any value works: the emulator and this server share it). */
export const EMULATED_MCHID = '1900000001'

/** The path of the notification endpoint, where both example apps mount it. */
export const NOTIFY_PATH = '/wechatpay/notify'

/** The WeChat Pay side, ready for `createScanAuth` and the app's routes. */
export interface PaySide {
  /** The provider for core's `payments` option; its calls work once {@link PaySide.listening} ran. */
  provider: PaymentProvider
  /** The in-process WeChat Pay emulator, or null with a real merchant. */
  emulator: WechatPayEmulator | null
  /** The start-up line's account of which WeChat Pay is used (never a secret). */
  says: string
  /** The `notify_url` handler for `auth`, logging what it refuses. */
  notificationHandler(auth: Pick<ScanAuth, 'applyPayment' | 'applyRefund'>): WechatPayNotificationHandler
  /** Builds the client with its notify URL (`WECHATPAY_NOTIFY_URL`, else `<baseUrl>/wechatpay/notify`) and logs it. */
  listening(baseUrl: string): void
  /** Closes the emulator, if one was started. */
  close(): Promise<void>
}

/** Client options without the notify URL, and what the notification handler needs. */
interface Merchant {
  client: Omit<WechatPayClientOptions, 'notifyUrl'>
  verificationKeys: VerificationKeys
  apiV3Key: string
}

/**
 * Starts the WeChat Pay side for `config`. `oaAppId` is the Official Account's AppID (the emulated
 * one in emulator mode), which the WeChat Pay emulator binds its merchant to.
 */
export async function startPaySide(config: ExampleConfig, oaAppId: string, log: (line: string) => void): Promise<PaySide> {
  const pay = config.wechatPay ?? { kind: 'emulator' }
  if (pay.kind === 'none') throw new Error('startPaySide: payments are off (wechatPay none)') // wiring.ts does not call it then
  let emulator: WechatPayEmulator | null = null
  let merchant: Merchant
  let says: string
  if (pay.kind === 'emulator') {
    emulator = await startWechatPayEmulator({ mchid: EMULATED_MCHID, appid: oaAppId, now: config.now, port: 0, host: '127.0.0.1' })
    const key = emulator.merchantKey
    if (key === null) throw new Error('the WeChat Pay emulator made no merchant key') // it always does without merchantPublicKeys
    merchant = {
      client: {
        mchid: emulator.mchid,
        appid: emulator.appid,
        merchantPrivateKey: key.privateKeyPem,
        merchantCertSerial: key.serial,
        verificationKeys: emulator.verificationKeys,
        requestSerial: emulator.platformSerial,
        apiBase: emulator.url,
        now: config.now,
      },
      verificationKeys: emulator.verificationKeys,
      apiV3Key: emulator.apiV3Key,
    }
    says = `WeChat Pay emulator at ${emulator.url} (merchant ${emulator.mchid})`
  } else {
    // Public-key mode: answers and notifications are signed with the key of WECHATPAY_PUBLIC_KEY_ID.
    const verificationKeys = { [pay.publicKeyId]: pay.publicKeyPem }
    merchant = {
      client: {
        mchid: pay.mchid,
        appid: pay.appid,
        merchantPrivateKey: pay.merchantPrivateKeyPem,
        merchantCertSerial: pay.merchantCertSerial,
        verificationKeys,
        requestSerial: pay.publicKeyId,
        apiBase: pay.apiBaseUrl,
        now: config.now,
      },
      verificationKeys,
      apiV3Key: pay.apiV3Key,
    }
    says = `WeChat Pay merchant ${pay.mchid} (AppID ${pay.appid}) via ${pay.apiBaseUrl}`
  }

  const close = async () => {
    await emulator?.close()
  }
  try {
    // The throwaway client: its options are checked now, with a notify URL of the right form.
    createWechatPayClient({ ...merchant.client, notifyUrl: pay.notifyUrl ?? `https://127.0.0.1${NOTIFY_PATH}` })
  } catch (error) {
    await close()
    throw new ConfigError(`WeChat Pay refused the WECHATPAY_* settings: ${error instanceof Error ? error.message : String(error)}`)
  }

  let provider: PaymentProvider | null = null
  const ready = (): PaymentProvider => {
    if (provider === null) throw new Error('WeChat Pay is not ready yet: the server is not listening')
    return provider
  }
  const merchantId: PaymentMerchant = { mchid: merchant.client.mchid, appid: merchant.client.appid }

  return {
    provider: {
      merchant: merchantId,
      createNativeOrder: (order) => ready().createNativeOrder(order),
      // Paying on the phone that scanned (payments.phone): WeChat Pay JSAPI, for the person the page identified.
      createJsapiOrder: (order) => {
        const current = ready()
        if (current.createJsapiOrder === undefined) throw new Error('the WeChat Pay provider cannot open JSAPI orders')
        return current.createJsapiOrder(order)
      },
      queryOrder: (outTradeNo) => ready().queryOrder(outTradeNo),
      closeOrder: (outTradeNo) => ready().closeOrder(outTradeNo),
    },
    emulator,
    says,
    notificationHandler: (auth) =>
      createWechatPayNotificationHandler({
        auth,
        verificationKeys: merchant.verificationKeys,
        apiV3Key: merchant.apiV3Key,
        now: config.now,
        onRejected: (rejection) => log(`WeChat Pay notification rejected: ${describeRejection(rejection)}`),
        onError: (error, answer) => log(`WeChat Pay notification answered ${answer.status}: ${error instanceof Error ? error.message : String(error)}`),
      }),
    listening(baseUrl) {
      const notifyUrl = pay.notifyUrl ?? `${baseUrl}${NOTIFY_PATH}`
      provider = createWechatPayProvider(createWechatPayClient({ ...merchant.client, notifyUrl }))
      // Real WeChat Pay posts only to a public https address; an emulator is happy with ours.
      const note =
        pay.kind === 'merchant' && !notifyUrl.startsWith('https://')
          ? ` (real WeChat Pay needs a public https URL: set WECHATPAY_NOTIFY_URL${pay.notifyUrl === undefined ? '' : ' to one'})`
          : ''
      log(`WeChat Pay notifications to ${notifyUrl}${note}`)
    },
    close,
  }
}

/**
 * The notification endpoint when payments are off (`wechatPay` `none`): nothing is sold, so there is
 * nothing to notify about. 404 `FAIL`, before the body is looked at.
 */
export const paymentsOffNotify: WechatPayNotificationHandler = async () => ({
  status: 404,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify({ code: 'FAIL', message: 'payments are off on this server' }),
})

/** One line for an authentic notification core would not apply (another merchant, amount, order). */
function describeRejection(rejection: WechatPayRejection): string {
  const outcome = rejection.outcome
  const reason = outcome.result === 'rejected' ? outcome.reason : outcome.result
  return `${rejection.kind} of order ${outcome.orderId}: ${reason}`
}
