/**
 * The parent's side of the WeChat Pay in the payment tests: the emulator, a capturing `notify_url`
 * that keeps each notification's exact bytes and headers, and orders opened through core and a real
 * client, then paid by the emulated payer. The captured notifications are what the test hands to
 * its worker processes: real ones, signed and encrypted by the emulator, never built by the test.
 *
 * @module
 */
import { createScanAuth, type ScanAuth, type Store } from '@scanauth/core'
import { TestWebOAuth } from '../web-oauth'
import { listen, type Listening } from '../http/serve'
import { RecordingQrProvider } from '../qr'
import { TEST_PLANS } from '../suites/orders'
import type { CapturedNotification, PaymentEmulator, PaymentEmulatorFactory, PaymentProviderFactory, PaymentWorkerSettings } from './payment-protocol'

/** One order opened through core and paid at the emulator, with the notifications WeChat Pay sent for it. */
export interface PaidOrder {
  /** The order id (`out_trade_no`). */
  orderId: string
  /** The buyer's openid (one buyer per order). */
  openid: string
  /** The emulator's `transaction_id`. */
  transactionId: string
  /** The `TRANSACTION.SUCCESS` notification. */
  notification: CapturedNotification
  /** The same transaction again under a new notification id (the emulator's `duplicateNewId`). */
  newId: CapturedNotification
}

/** The emulator and the capturing `notify_url` of one test file. */
export interface PaymentRig {
  /** The emulator. */
  emulator: PaymentEmulator
  /** What every worker is given. */
  settings: PaymentWorkerSettings
  /**
   * A service over `store` selling {@link TEST_PLANS} through a client of the emulator, on the real
   * clock, also on the phone (`payments.phone`, with {@link PaymentRig.oauth}).
   */
  service(store: Store): ScanAuth
  /** The web OAuth of the phone pages: a test hands out its codes. */
  oauth: TestWebOAuth
  /**
   * Opens `count` orders through `auth`, one new buyer each (a first scan, then a purchase through
   * its scene), pays every one at the emulator, and answers them with their captured notifications.
   */
  paidOrders(auth: ScanAuth, count: number, tag: string): Promise<PaidOrder[]>
  /** Pays orders opened already (a JSAPI order of the phone pages) at the emulator, and answers them with their notifications. */
  payOpened(opened: Array<{ orderId: string; openid: string }>): Promise<PaidOrder[]>
  /** Stops the emulator and the capturing server. */
  close(): Promise<void>
}

/**
 * Starts the emulator and a capturing `notify_url` on 127.0.0.1. The capturing server answers 204,
 * so the emulator goes on to its `duplicateNewId` delivery (switched on here) and never retries:
 * every notification is captured exactly once, and only the workers apply them.
 */
export async function startPaymentRig(startEmulator: PaymentEmulatorFactory, provider: PaymentProviderFactory): Promise<PaymentRig> {
  const captured = new Map<string, CapturedNotification>()
  const capture: Listening = await listen((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const { id } = JSON.parse(body.toString('utf8')) as { id: string }
      captured.set(id, { id, bodyBase64: body.toString('base64'), headers: { ...req.headers } })
      res.writeHead(204).end()
    })
  })
  const emulator = await startEmulator({ mchid: '1900000001', appid: 'wx_scanauth_processes', knobs: { duplicateNewId: true } })
  const merchantKey = emulator.merchantKey
  if (merchantKey === null) throw new Error('the emulator generated no merchant key')
  const settings: PaymentWorkerSettings = {
    client: {
      mchid: emulator.mchid,
      appid: emulator.appid,
      merchantPrivateKey: merchantKey.privateKeyPem,
      merchantCertSerial: merchantKey.serial,
      verificationKeys: { ...emulator.verificationKeys },
      requestSerial: emulator.platformSerial,
      apiBase: emulator.url,
      notifyUrl: `${capture.url}/wxpay/notify`,
    },
    apiV3Key: emulator.apiV3Key,
  }

  /** The capture of the emulator's notification of `kind` for the order, checked to be byte for byte what it sent. */
  const notificationOf = (orderId: string, kind: 'real' | 'duplicate-new-id'): CapturedNotification => {
    const sent = emulator.notifications().filter((n) => n.outTradeNo === orderId && n.kind === kind)
    if (sent.length !== 1) throw new Error(`order ${orderId}: ${sent.length} ${kind} notifications, expected 1`)
    const { id, body } = sent[0] as { id: string; body: string }
    const got = captured.get(id)
    if (got === undefined) throw new Error(`notification ${id} of order ${orderId} never reached notify_url`)
    if (Buffer.from(got.bodyBase64, 'base64').toString('utf8') !== body) throw new Error(`notification ${id} arrived with other bytes than the emulator sent`)
    return got
  }

  const oauth = new TestWebOAuth(emulator.appid)
  const rig: PaymentRig = {
    emulator,
    settings,
    oauth,
    service: (store) =>
      createScanAuth({
        store,
        qr: new RecordingQrProvider(),
        payments: { provider: provider(settings.client), plans: TEST_PLANS, phone: { url: 'https://app.example.test/auth/m/', oauth } },
      }),
    async paidOrders(auth, count, tag) {
      const opened: Array<{ orderId: string; openid: string }> = []
      for (let i = 0; i < count; i++) {
        const openid = `${tag}-buyer-${i}`
        const { sceneStr } = await auth.createScene({ deviceId: `${tag}-tv-${i}` })
        const scan = await auth.handleScan({ sceneStr, openid })
        if (scan.result !== 'authorized') throw new Error(`the first scan of ${openid} answered ${scan.result}`)
        opened.push({ orderId: (await auth.purchase({ sceneStr, plan: 'days-30' })).orderId, openid })
      }
      return rig.payOpened(opened)
    },
    async payOpened(opened) {
      const transactionIds = new Map<string, string>()
      for (const { orderId } of opened) transactionIds.set(orderId, String((await emulator.pay({ outTradeNo: orderId })).transaction_id))
      await emulator.settled()
      return opened.map(({ orderId, openid }) => ({
        orderId,
        openid,
        transactionId: transactionIds.get(orderId) as string,
        notification: notificationOf(orderId, 'real'),
        newId: notificationOf(orderId, 'duplicate-new-id'),
      }))
    },
    async close() {
      await emulator.close()
      await capture.close()
    },
  }
  return rig
}
