// OpenTelemetry of the notify_url endpoint: with an SDK registered globally, every notification makes
// a `scanauth.notification` span with its outcome and counts in `scanauth.notifications`; our own
// failures (500) are ERROR, a forgery is not; no attribute carries the payer's openid or the order.
// End to end against the emulator: a purchase (core's `scanauth.purchase`) paid and notified.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SpanStatusCode } from '@opentelemetry/api'
import { sellingAuth } from '@scanauth/testkit'
import { startWechatPayEmulator } from '@scanauth/wechat-emulator'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider, type WechatPayNotificationHandlerOptions } from '../src/index'
import { inMemoryProviders, registerInMemorySdk, spanAttributeText, type InMemorySdk } from '../../core/test/support/telemetry'
import { API_V3_KEY, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID, stranger } from './support/keys'
import { NOW, paidNotification, RecordingAuth, refundNotification } from './support/notify'

let sdk: InMemorySdk
const open: { close(): Promise<void> }[] = []
beforeEach(() => {
  sdk = registerInMemorySdk()
})
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close()
  await sdk.unregister()
})

function setup(overrides: Partial<WechatPayNotificationHandlerOptions> = {}) {
  const auth = new RecordingAuth()
  const handler = createWechatPayNotificationHandler({
    auth,
    verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem },
    apiV3Key: API_V3_KEY,
    now: () => NOW,
    ...overrides,
  })
  return { auth, handler }
}

const attributesOf = (name = 'scanauth.notification') => sdk.spansNamed(name).map((s) => s.attributes)

describe('scanauth.notification', () => {
  it('records each outcome on its span and in the counter; only our own failures are ERROR', async () => {
    const { auth, handler } = setup()
    expect((await handler(paidNotification())).status).toBe(204)
    auth.paymentOutcome = { result: 'rejected', orderId: 'SA2026000001', reason: 'amount_mismatch' }
    expect((await handler(paidNotification())).status).toBe(204)
    expect((await handler(refundNotification())).status).toBe(204)
    expect((await handler(paidNotification({ eventType: 'TRANSACTION.CLOSED' }))).status).toBe(204)
    expect((await handler(paidNotification({ sign: { key: stranger.privateKey } }))).status).toBe(401)
    expect((await handler(paidNotification({ resource: { out_trade_no: 'SA2026000001', trade_state: 'SUCCESS' } }))).status).toBe(400)
    auth.paymentOutcome = new Error('store down: could not save transaction 4200000000202601010001')
    expect((await handler(paidNotification())).status).toBe(500)

    expect(attributesOf()).toEqual([
      { 'scanauth.notification.kind': 'payment', 'scanauth.notification.outcome': 'granted', 'scanauth.notification.event': 'TRANSACTION.SUCCESS', 'http.response.status_code': 204 },
      {
        'scanauth.notification.kind': 'payment',
        'scanauth.notification.outcome': 'rejected',
        'scanauth.notification.event': 'TRANSACTION.SUCCESS',
        'scanauth.rejection': 'amount_mismatch',
        'http.response.status_code': 204,
      },
      { 'scanauth.notification.kind': 'refund', 'scanauth.notification.outcome': 'refunded', 'scanauth.notification.event': 'REFUND.SUCCESS', 'http.response.status_code': 204 },
      { 'scanauth.notification.kind': 'other', 'scanauth.notification.outcome': 'ignored', 'scanauth.notification.event': 'TRANSACTION.CLOSED', 'http.response.status_code': 204 },
      { 'scanauth.notification.kind': 'unknown', 'scanauth.notification.outcome': 'unauthenticated', 'error.type': 'signature_invalid', 'http.response.status_code': 401 },
      {
        'scanauth.notification.kind': 'payment',
        'scanauth.notification.outcome': 'malformed',
        'scanauth.notification.event': 'TRANSACTION.SUCCESS',
        'error.type': 'malformed_body',
        'http.response.status_code': 400,
      },
      { 'scanauth.notification.kind': 'payment', 'scanauth.notification.outcome': 'failed', 'scanauth.notification.event': 'TRANSACTION.SUCCESS', 'error.type': 'Error', 'http.response.status_code': 500 },
    ])
    expect(sdk.spansNamed('scanauth.notification').map((s) => s.status)).toEqual([
      ...Array.from({ length: 6 }, () => ({ code: SpanStatusCode.UNSET })),
      { code: SpanStatusCode.ERROR, message: 'Error' },
    ])
    const counted = await sdk.points('scanauth.notifications')
    expect(counted).toEqual(
      expect.arrayContaining([
        { attributes: { outcome: 'granted', kind: 'payment' }, value: 1 },
        { attributes: { outcome: 'rejected', kind: 'payment' }, value: 1 },
        { attributes: { outcome: 'refunded', kind: 'refund' }, value: 1 },
        { attributes: { outcome: 'ignored', kind: 'other' }, value: 1 },
        { attributes: { outcome: 'unauthenticated', kind: 'unknown' }, value: 1 },
        { attributes: { outcome: 'malformed', kind: 'payment' }, value: 1 },
        { attributes: { outcome: 'failed', kind: 'payment' }, value: 1 },
      ]),
    )
    expect(counted).toHaveLength(7)
    // Never the payer, the order, the transaction, nor an error's message.
    expect(spanAttributeText(sdk.spans()).join('\n')).not.toMatch(/o_payer|SA2026000001|4200000000|store down/)
  })

  it('telemetry: false records nothing; { tracer, meter } records there only', async () => {
    const quiet = setup({ telemetry: false })
    expect((await quiet.handler(paidNotification())).status).toBe(204)
    expect(sdk.spans()).toEqual([])
    expect(await sdk.allPoints()).toEqual([])

    const own = inMemoryProviders()
    const mine = setup({ telemetry: { tracer: own.tracerProvider.getTracer('mine'), meter: own.meterProvider.getMeter('mine') } })
    expect((await mine.handler(paidNotification())).status).toBe(204)
    expect(own.spans().map((s) => s.name)).toEqual(['scanauth.notification'])
    expect(await own.points('scanauth.notifications')).toEqual([{ attributes: { outcome: 'granted', kind: 'payment' }, value: 1 }])
    expect(sdk.spans()).toEqual([])
    expect(() => setup({ telemetry: 'on' as unknown as boolean })).toThrow(/telemetry/)
    expect(() => setup({ telemetry: { tracer: {} as never } })).toThrow(/telemetry\.tracer/)
  })
})

/** Our notify_url: the handler behind a plain Node server, fed the raw body. */
async function notifyServer(handler: ReturnType<typeof createWechatPayNotificationHandler>): Promise<string> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const answer = await handler({ headers: req.headers, body: Buffer.concat(chunks) })
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/wxpay/notify`
}

describe('against the WeChat Pay emulator', () => {
  it('purchase → pay → notification: scanauth.purchase, scanauth.notification granted, the device authorized', async () => {
    const pay = await startWechatPayEmulator({ mchid: '1900000109', appid: 'wx_otel_e2e', refundDelayMs: 0 })
    open.push(pay)
    // The server needs the handler, the handler the service, the service the server's address.
    const mounted: { handler?: ReturnType<typeof createWechatPayNotificationHandler> } = {}
    const notifyUrl = await notifyServer((request) => (mounted.handler as NonNullable<typeof mounted.handler>)(request))
    const selling = sellingAuth({ provider: createWechatPayProvider(createWechatPayClient({ ...pay.clientOptions(), notifyUrl })) })
    mounted.handler = createWechatPayNotificationHandler({ auth: selling.auth, verificationKeys: pay.verificationKeys, apiV3Key: pay.apiV3Key })

    const purchase = await selling.buy()
    expect(attributesOf('scanauth.purchase')).toEqual([{ 'scanauth.plan': 'days-30', 'scanauth.purchase.by': 'scene' }])
    await pay.pay({ outTradeNo: purchase.orderId })
    await pay.settled()
    expect(await selling.outcome(purchase)).toEqual({ order: 'paid', device: 'authorized', grants: 1 })
    expect(attributesOf()).toEqual([
      { 'scanauth.notification.kind': 'payment', 'scanauth.notification.outcome': 'granted', 'scanauth.notification.event': 'TRANSACTION.SUCCESS', 'http.response.status_code': 204 },
    ])
    expect(await sdk.points('scanauth.notifications')).toEqual([{ attributes: { outcome: 'granted', kind: 'payment' }, value: 1 }])
    expect(await sdk.points('scanauth.scans')).toEqual(
      expect.arrayContaining([
        { attributes: { result: 'authorized' }, value: 1 },
        { attributes: { result: 'need_purchase' }, value: 1 },
      ]),
    )
    const names = new Set(sdk.spans().map((s) => s.name))
    for (const name of ['scanauth.create_scene', 'scanauth.scan', 'scanauth.purchase', 'scanauth.notification', 'scanauth.status']) expect(names).toContain(name)
    expect(spanAttributeText(sdk.spans()).join('\n')).not.toMatch(new RegExp(`${purchase.openid}|${purchase.sceneStr}|${purchase.orderId}`))
  })
})
