/**
 * Pay code paid → waiting device (issue 18): how long after the payer pays does the device that
 * shows the pay code see `authorized` on its event stream (docs/behaviour.md B-order-7, B-wait-3)?
 *
 * The app runs here as an application would: an Express 5 app on 127.0.0.1 (a real socket) with
 * `scanAuthRouter` at `/auth` and `wechatPayNotifyMiddleware` at `/wechatpay/notify`, a
 * `createScanAuth` selling `TEST_PLANS` through `createWechatPayProvider` (a real WeChat Pay client,
 * signing its requests and verifying the answers), on the store of the row. WeChat Pay is the
 * emulator in a child process (`bench/push-pay-world.ts`), which also plays the device.
 *
 * Setup (not timed): users scan once (their free trials) on a clock eight days behind; then, on the
 * real clock, each sample's user scans a new scene (`need_purchase`) and buys through it
 * (`auth.purchase`: the order stored, then opened at the emulator over HTTP). The child opens the
 * scene's event stream (first event `need_purchase`; the stream goes on, an order of the scene being
 * open), waits a few milliseconds, and times from just before `pay()` to the arrival of the next
 * event, which must be `authorized`: the emulator seals and signs the notification and POSTs it, the
 * middleware reads the raw body, the handler verifies, decrypts and calls `auth.applyPayment` (the
 * grant commit writes the scene too), the store tells the stream's wait, which reads the status and
 * writes the event to the socket. Samples are sequential.
 *
 * @module
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { createScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatPayNotifyMiddleware } from '@scanauth/express'
import { TEST_PLANS } from '@scanauth/testkit'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '@scanauth/wechat-pay'
import { ask, startChild, stopChild } from './child'
import { NO_RATE_LIMITS } from './lib'
import type { PaySampled, PayWorldReady } from './push-pay-world'
import { constantQr, openBenchStore } from './stores'

const DAY = 24 * 3600 * 1000

/** The setting of these rows in the latency table. */
export const PAY_SETTING = 'pay code paid → event stream (Express, emulator in a child)'

/** Measures `samples` pay → `authorized` latencies (µs) on a store of `kind`, after `warmup` unrecorded ones. */
export async function payLatencySamples(kind: 'sqlite' | 'redis', samples: number, warmup: number): Promise<number[]> {
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
    const auth = createScanAuth({
      store: opened.store,
      qr: constantQr,
      now: () => Date.now() + offset,
      sceneTtlSeconds: 3600,
      rateLimits: NO_RATE_LIMITS,
      payments: { provider: createWechatPayProvider(client), plans: TEST_PLANS },
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
      const { orderId } = await auth.purchase({ sceneStr, plan: TEST_PLANS[0]?.id as string })
      const sampled = await ask<PaySampled>(child, { type: 'sample', port, sceneStr, outTradeNo: orderId }, 'sampled')
      if (sampled.us < 0 || sampled.first !== 'need_purchase' || sampled.last !== 'authorized') {
        throw new Error(`pay bench: the device saw ${sampled.first} then ${sampled.last} (${sampled.us} µs)`)
      }
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
