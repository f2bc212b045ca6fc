/**
 * `startWechatPayEmulator`: a local WeChat Pay API v3 (direct merchant, Native and JSAPI payments
 * and refunds, and a stand-in for WeChat's JSAPI cashier), independent of the Official Account
 * emulator, so an app can emulate either one while the other is real.
 *
 * @module
 */
import { WechatEmulatorError } from '../errors'
import { closeServer } from '../listen'
import { isApiV3Key, randomAlphanumeric } from './aead'
import { BackgroundWork } from './background'
import { MerchantKeys, PlatformKeys } from './keys'
import { applyKnobs, DEFAULT_KNOBS } from './knobs'
import { JSAPI_BRIDGE_PATH } from './bridge'
import { Notifier, WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS } from './notify'
import { defaultOpenidBelongs } from './openids'
import { OrderBook } from './orders'
import { RefundBook } from './refunds'
import { listenPay } from './server'
import type { WechatPayEmulator, WechatPayEmulatorOptions, WechatPayEmulatorRequest, WechatPayKnobs, WechatPayMerchantKey } from './types'

const WHERE = 'startWechatPayEmulator'

/** The options' problems, as `invalid_options`. */
function checkOptions(options: WechatPayEmulatorOptions): void {
  const fail = (message: string): never => {
    throw new WechatEmulatorError('invalid_options', `${WHERE}: ${message}`)
  }
  for (const name of ['mchid', 'appid'] as const) {
    if (typeof options?.[name] !== 'string' || options[name] === '') fail(`${name} is required`)
  }
  if (options.apiV3Key !== undefined && !isApiV3Key(options.apiV3Key)) fail('apiV3Key must be 32 ASCII characters')
  if (options.mode !== undefined && options.mode !== 'public-key' && options.mode !== 'certificate') fail("mode must be 'public-key' or 'certificate'")
  if (options.openidBelongs !== undefined && typeof options.openidBelongs !== 'function') fail('openidBelongs must be a function (appid, openid) => boolean')
  if (options.payerOpenid !== undefined && (typeof options.payerOpenid !== 'string' || options.payerOpenid === '')) fail('payerOpenid must be a non-empty string')
  const schedule = options.retrySchedule
  if (schedule !== undefined && !(Array.isArray(schedule) && schedule.every((ms) => Number.isFinite(ms) && ms >= 0))) {
    fail('retrySchedule must be an array of delays in milliseconds (numbers ≥ 0)')
  }
  for (const name of ['notifyTimeoutMs', 'refundDelayMs', 'clockToleranceSeconds'] as const) {
    const value = options[name]
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) fail(`${name} must be a number ≥ 0`)
  }
}

/**
 * Starts an emulated WeChat Pay merchant on a local port. It generates its own platform key pair
 * (see `verificationKeys`), and a merchant key pair for the test to sign with (`merchantKey`)
 * unless `merchantPublicKeys` are given. Rejects with a `WechatEmulatorError` `invalid_options`.
 *
 * @example
 * ```ts
 * const pay = await startWechatPayEmulator({ mchid: '1900000001', appid: 'wx_dev' })
 * // The app's WeChat Pay client: base URL pay.url, mchid, pay.merchantKey.serial and
 * // pay.merchantKey.privateKeyPem to sign, pay.verificationKeys to verify, pay.apiV3Key to decrypt.
 * // … the app creates a Native order with notify_url http://127.0.0.1:3000/wxpay/notify …
 * const [order] = pay.orders()
 * await pay.pay({ outTradeNo: order.outTradeNo }) // or click "Pay" at `${pay.url}/`
 * await pay.settled() // the TRANSACTION.SUCCESS notification was delivered (see pay.notifications())
 * await pay.close()
 * ```
 */
export async function startWechatPayEmulator(options: WechatPayEmulatorOptions): Promise<WechatPayEmulator> {
  checkOptions(options)
  const { mchid, appid } = options
  const now = options.now ?? Date.now
  const mode = options.mode ?? 'public-key'
  const apiV3Key = options.apiV3Key ?? randomAlphanumeric(32)
  const payerOpenid = options.payerOpenid ?? 'o_emulator_payer'
  let knobs: WechatPayKnobs = applyKnobs({ ...DEFAULT_KNOBS }, options.knobs ?? {}, 'invalid_options', WHERE)

  const merchantKeys = new MerchantKeys()
  for (const [serial, pem] of Object.entries(options.merchantPublicKeys ?? {})) merchantKeys.add(serial, pem, 'invalid_options', WHERE)
  const generate = options.generateMerchantKey ?? options.merchantPublicKeys === undefined
  const merchantKey: WechatPayMerchantKey | null = generate ? await merchantKeys.generate() : null
  const platformKeys = await PlatformKeys.create(mode, mchid)

  const closing = new AbortController()
  const work = new BackgroundWork()
  const log: WechatPayEmulatorRequest[] = []
  const orders = new OrderBook(now)
  const notifier = new Notifier({
    apiV3Key,
    keys: platformKeys,
    knobs: () => knobs,
    retrySchedule: options.retrySchedule ?? WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS,
    timeoutMs: options.notifyTimeoutMs ?? 5000,
    now,
    work,
    closed: closing.signal,
  })
  const refunds = new RefundBook({
    orders,
    mchid,
    now,
    delayMs: options.refundDelayMs ?? 1000,
    work,
    closed: closing.signal,
    succeeded: ({ url, outTradeNo, outRefundNo, resource }) =>
      notifier.send({ eventType: 'REFUND.SUCCESS', summary: '退款成功', originalType: 'refund', resource, url, outTradeNo, outRefundNo }),
  })

  const pay: WechatPayEmulator['pay'] = async (input) => {
    if (closing.signal.aborted) throw new WechatEmulatorError('closed', 'pay: the emulator is closed')
    if (typeof input !== 'object' || input === null) throw new WechatEmulatorError('invalid_argument', 'pay: an input { outTradeNo } or { codeUrl } is required')
    const { openid } = input
    if (openid !== undefined && (typeof openid !== 'string' || openid === '')) throw new WechatEmulatorError('invalid_argument', 'pay: openid must be a non-empty string')
    const order = orders.pay({ outTradeNo: input.outTradeNo, codeUrl: input.codeUrl, prepayId: input.prepayId }, openid, payerOpenid)
    const transaction = orders.transaction(order)
    notifier.send({
      eventType: 'TRANSACTION.SUCCESS',
      summary: '支付成功',
      originalType: 'transaction',
      resource: transaction,
      url: order.input.notifyUrl,
      outTradeNo: order.input.outTradeNo,
      outRefundNo: null,
    })
    return transaction
  }
  const setKnobs = (change: unknown): WechatPayKnobs => {
    knobs = applyKnobs(knobs, change, 'invalid_argument', 'setKnobs')
    return { ...knobs }
  }

  const { server, url } = await listenPay(
    {
      api: { mchid, appid, orders, refunds, openidBelongs: options.openidBelongs ?? defaultOpenidBelongs },
      merchantKeys,
      platformKeys,
      toleranceSeconds: options.clockToleranceSeconds ?? 300,
      payerOpenid,
      now,
      knobs: () => ({ ...knobs }),
      log,
      orders: () => orders.views(),
      refunds: () => refunds.views(),
      notifications: () => notifier.log(),
      pay,
      setKnobs,
      rotate: (retireOld) => platformKeys.rotate(retireOld),
    },
    options.port ?? 0,
    options.host ?? '127.0.0.1',
  )

  return {
    url,
    jsapiBridgeUrl: `${url}${JSAPI_BRIDGE_PATH}`,
    mchid,
    appid,
    apiV3Key,
    mode,
    merchantKey,
    get platformSerial() {
      return platformKeys.current().id
    },
    get verificationKeys() {
      return platformKeys.verificationKeys()
    },
    clientOptions() {
      if (merchantKey === null) {
        throw new WechatEmulatorError('no_merchant_key', 'clientOptions: the emulator has no merchant key of its own to sign with (merchantPublicKeys was given without generateMerchantKey)')
      }
      return {
        mchid,
        appid,
        merchantPrivateKey: merchantKey.privateKeyPem,
        merchantCertSerial: merchantKey.serial,
        verificationKeys: platformKeys.verificationKeys(),
        ...(mode === 'public-key' ? { requestSerial: platformKeys.current().id } : {}),
        apiBase: url,
      }
    },
    addMerchantKey: (serial, publicKeyPem) => merchantKeys.add(serial, publicKeyPem, 'invalid_argument', 'addMerchantKey'),
    pay,
    orders: () => orders.views(),
    refunds: () => refunds.views(),
    notifications: () => notifier.log(),
    requests: () => log.map((entry) => ({ ...entry })),
    knobs: () => ({ ...knobs }),
    setKnobs,
    rotatePlatformKey: (rotation) => platformKeys.rotate(rotation?.retireOld === true),
    settled: () => work.settled(),
    async close() {
      closing.abort()
      await closeServer(server)
      await work.settled()
    },
  }
}
