/**
 * Paid → waiting device: how long after the payer pays does the device that shows the code see
 * `authorized` on its event stream (docs/behaviour.md B-order-7, B-wait-3)? Two channels, measured
 * the same way:
 *
 * - **Native** (issue 18): the device shows a pay code; the order is opened through the device
 *   (`auth.purchase`, a Native order at WeChat Pay).
 * - **JSAPI** (issue 27, `payments.phone`): the phone that scanned opens the plans page and chooses a
 *   plan (`auth.openPhonePay` twice: the WeChat OAuth redirect, then the page with the code WeChat
 *   came back with; `auth.choosePhonePlan`), which opens a JSAPI order for the scene, its payer the
 *   scanner's openid. The open JSAPI order keeps the scene's stream waiting as a Native one does.
 *
 * The app runs here as an application would: an Express 5 app on 127.0.0.1 (a real socket) with
 * `scanAuthRouter` at `/auth` and `wechatPayNotifyMiddleware` at `/wechatpay/notify`, a
 * `createScanAuth` selling `TEST_PLANS` through `createWechatPayProvider` (a real WeChat Pay client,
 * signing its requests and verifying the answers), on the store of the row. WeChat Pay is the
 * emulator in a child process (`bench/push-pay-world.ts`), which also plays the device. On the JSAPI
 * rows WeChat web OAuth is testkit's `TestWebOAuth` (the round trip to WeChat is not what is timed).
 *
 * Setup (not timed): users scan once (their free trials) on a clock eight days behind; then, on the
 * real clock, each sample's user scans a new scene (`need_purchase`) and an order of the scene is
 * opened through the channel of the row (stored, then opened at the emulator over HTTP). The child
 * opens the scene's event stream (first event `need_purchase`; the stream goes on, an order of the
 * scene being open), waits a few milliseconds, and times from just before `pay()` to the arrival of
 * the next event, which must be `authorized`: the emulator seals and signs the notification and POSTs
 * it, the middleware reads the raw body, the handler verifies, decrypts and calls `auth.applyPayment`
 * (the grant commit writes the scene too), the store tells the stream's wait, which reads the status
 * and writes the event to the socket. Samples are sequential.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatPayNotifyMiddleware } from '@scanauth/express'
import { TEST_PLANS, TestWebOAuth } from '@scanauth/testkit'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '@scanauth/wechat-pay'
import { ask, startChild, stopChild } from './child'
import { NO_RATE_LIMITS } from './lib'
import type { PaySampled, PayWorldReady } from './push-pay-world'
import { constantQr, openBenchStore, type StoreKind } from './stores'

const DAY = 24 * 3600 * 1000

/** How the order is opened: through the device (Native pay code) or on the phone that scanned (JSAPI). */
export type PayChannel = 'native' | 'jsapi'

/** The setting of the Native rows in the latency table. */
export const PAY_SETTING = 'pay code paid → event stream (Express, emulator in a child)'
/** The setting of the JSAPI rows in the latency table. */
export const PHONE_SETTING = 'phone paid (JSAPI) → event stream (Express, emulator in a child)'
/** The latency table's setting of each channel. */
export const CHANNEL_SETTING = { native: PAY_SETTING, jsapi: PHONE_SETTING } as const

/** The `trade_type` the emulator must report for an order of each channel. */
const TRADE_TYPE: Record<PayChannel, string> = { native: 'NATIVE', jsapi: 'JSAPI' }

/** A phone's WeChat browser (the phone pages answer `open_in_wechat` to any other, B-phone-3). */
const WECHAT_BROWSER = 'Mozilla/5.0 (iPhone) AppleWebKit/605.1.15 Mobile/15E148 MicroMessenger/8.0.50 NetType/WIFI'

/** The plan every sample buys. */
const PLAN = TEST_PLANS[0]?.id as string

/**
 * The phone that scanned buys `PLAN` for the scene through the plans page: the link of the scan's
 * reply, WeChat OAuth's redirect and its way back with a code for `openid`, the plan chosen with the
 * page's token. Resolves with the JSAPI order's id (`out_trade_no`).
 */
async function buyOnPhone(auth: ScanAuth, oauth: TestWebOAuth, payUrl: string, openid: string): Promise<string> {
  const ticket = new URL(payUrl).searchParams.get('ticket') ?? ''
  const first = await auth.openPhonePay({ ticket, userAgent: WECHAT_BROWSER })
  if (first.step !== 'authorize') throw new Error(`phone bench: the first visit answered ${first.step}, not the OAuth redirect`)
  const location = new URL(first.location)
  // WeChat sends the phone back to the redirect address (the ticket in its query) with a code and the state.
  const back = new URL(location.searchParams.get('redirect_uri') ?? '')
  const state = location.searchParams.get('state') ?? ''
  const page = await auth.openPhonePay({ ...Object.fromEntries(back.searchParams), code: oauth.issueCode(openid), state, userAgent: WECHAT_BROWSER })
  if (page.step !== 'plans') throw new Error(`phone bench: the page answered ${page.step}, not the plans`)
  const chosen = await auth.choosePhonePlan({ csrf: page.view.csrf, plan: PLAN })
  if (chosen.step !== 'cashier') throw new Error(`phone bench: choosing a plan answered ${chosen.step}, not the cashier`)
  if (chosen.cashier.deviceLabel === null) throw new Error('phone bench: the JSAPI order is not for the waiting device')
  return chosen.cashier.orderId
}

/**
 * Measures `samples` paid → `authorized` latencies (µs) on a store of `kind`, the orders opened
 * through `channel`, after `warmup` unrecorded ones.
 */
export async function payLatencySamples(kind: StoreKind, channel: PayChannel, samples: number, warmup: number): Promise<number[]> {
  const opened = await openBenchStore(kind)
  const { child, ready } = await startChild<PayWorldReady>('push-pay-world.ts', [])
  const app = express()
  const server = createServer(app).listen(0, '127.0.0.1')
  try {
    await once(server, 'listening')
    const port = (server.address() as AddressInfo).port
    // The users' first scans happen eight days back, so that their trials are over when they buy.
    let offset = -8 * DAY
    const client = createWechatPayClient({
      mchid: ready.mchid,
      appid: ready.appid,
      merchantPrivateKey: ready.merchantKey.privateKeyPem,
      merchantCertSerial: ready.merchantKey.serial,
      verificationKeys: ready.verificationKeys,
      requestSerial: ready.platformSerial,
      notifyUrl: `http://127.0.0.1:${port}/wechatpay/notify`,
      apiBase: ready.url,
    })
    const oauth = new TestWebOAuth(ready.appid)
    const phone = channel === 'jsapi' ? { phone: { url: `http://127.0.0.1:${port}/auth/m/`, oauth } } : {}
    const auth = createScanAuth({
      store: opened.store,
      qr: constantQr,
      now: () => Date.now() + offset,
      sceneTtlSeconds: 3600,
      rateLimits: NO_RATE_LIMITS,
      payments: { provider: createWechatPayProvider(client), plans: TEST_PLANS, ...phone },
    })
    const handler = createWechatPayNotificationHandler({ auth, verificationKeys: ready.verificationKeys, apiV3Key: ready.apiV3Key })
    // Before any body parser, as the middleware asks: it reads the raw bytes itself.
    app.use('/wechatpay/notify', wechatPayNotifyMiddleware(handler))
    app.use('/auth', scanAuthRouter(auth))

    const tag = Date.now().toString(36)
    const openid = (i: number) => `paybench-${tag}-${i}`
    for (let i = 0; i < warmup + samples; i++) {
      const { sceneStr } = await auth.createScene({ deviceId: `trial-${i}` })
      await auth.handleScan({ sceneStr, openid: openid(i) })
    }
    offset = 0
    const out: number[] = []
    for (let i = 0; i < warmup + samples; i++) {
      const { sceneStr } = await auth.createScene({ deviceId: `pay-${i}` })
      const scan = await auth.handleScan({ sceneStr, openid: openid(i) })
      if (scan.result !== 'need_purchase') throw new Error(`pay bench: the scan answered ${scan.result}`)
      let orderId: string
      if (channel === 'native') {
        orderId = (await auth.purchase({ sceneStr, plan: PLAN })).orderId
      } else {
        if (scan.payUrl === undefined) throw new Error('phone bench: the need_purchase scan has no pay link (payments.phone)')
        orderId = await buyOnPhone(auth, oauth, scan.payUrl, openid(i))
      }
      const sampled = await ask<PaySampled>(child, { type: 'sample', port, sceneStr, outTradeNo: orderId }, 'sampled')
      if (sampled.us < 0 || sampled.first !== 'need_purchase' || sampled.last !== 'authorized') {
        throw new Error(`pay bench (${channel}): the device saw ${sampled.first} then ${sampled.last} (${sampled.us} µs)`)
      }
      if (sampled.tradeType !== TRADE_TYPE[channel]) throw new Error(`pay bench (${channel}): the emulator paid a ${sampled.tradeType} order`)
      if (i >= warmup) out.push(sampled.us)
    }
    return out
  } finally {
    server.closeAllConnections()
    server.close()
    await stopChild(child)
    await opened.close()
  }
}
