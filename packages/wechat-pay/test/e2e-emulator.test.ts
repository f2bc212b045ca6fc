// End to end against @scanauth/wechat-emulator's WeChat Pay: our client opens a Native order, the
// emulated payer pays, the emulator posts a signed, encrypted notification to our handler over a
// real socket, and the handler hands it to `auth` (a recording stand-in: core has its own tests).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startWechatPayEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '../src/index'
import { RecordingAuth } from './support/notify'

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close()
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

async function setup(mode: 'public-key' | 'certificate') {
  const pay: WechatPayEmulator = await startWechatPayEmulator({ mchid: '1900000001', appid: 'wx_pay_e2e', mode, refundDelayMs: 0 })
  open.push(pay)
  const auth = new RecordingAuth()
  const errors: unknown[] = []
  const notifyUrl = await notifyServer(
    createWechatPayNotificationHandler({ auth, verificationKeys: pay.verificationKeys, apiV3Key: pay.apiV3Key, onError: (e) => errors.push(e) }),
  )
  // clientOptions() asks for answers signed with the PUB_KEY_ID_… in public-key mode only: in
  // certificate mode the client goes without requestSerial, as a merchant's does.
  const client = createWechatPayClient({ ...pay.clientOptions(), notifyUrl })
  return { pay, auth, errors, client }
}

describe.each(['public-key', 'certificate'] as const)('against the WeChat Pay emulator (%s mode)', (mode) => {
  it('native order → pay → signed notification → auth.applyPayment, then query and close agree', async () => {
    const { pay, auth, errors, client } = await setup(mode)
    const provider = createWechatPayProvider(client)
    const outTradeNo = `SAE2E${mode === 'certificate' ? 'C' : 'P'}0001`
    const { codeUrl } = await provider.createNativeOrder({ outTradeNo, description: 'scanauth 30-day pass', amountFen: 1990, expiresAt: Date.now() + 15 * 60_000 })
    expect(codeUrl).toMatch(/^weixin:\/\/wxpay\/bizpayurl\?pr=/)
    expect(await provider.queryOrder(outTradeNo)).toMatchObject({ outTradeNo, tradeState: 'NOTPAY', transactionId: null })

    await pay.pay({ outTradeNo })
    await pay.settled()
    expect(errors).toEqual([])
    expect(auth.payments).toEqual([
      expect.objectContaining({ mchid: pay.mchid, appid: pay.appid, outTradeNo, tradeState: 'SUCCESS', amount: { total: 1990, currency: 'CNY' } }),
    ])
    expect(pay.notifications().filter((n) => n.kind === 'real').map((n) => n.state)).toEqual(['accepted'])
    const queried = await provider.queryOrder(outTradeNo)
    expect(queried).toMatchObject({ tradeState: 'SUCCESS', transactionId: auth.payments[0]?.transactionId })
    expect(await provider.closeOrder(outTradeNo)).toBe('paid')
  })

  it('refund → REFUND.SUCCESS notification → auth.applyRefund', async () => {
    const { pay, auth, client } = await setup(mode)
    const outTradeNo = 'SAE2EREFUND01'
    await client.createNativeOrder({ outTradeNo, description: 'd', amountFen: 500 })
    await pay.pay({ outTradeNo })
    const refund = await client.refund({ outTradeNo, outRefundNo: 'RSAE2E01', refundFen: 500, totalFen: 500, reason: 'test' })
    expect(refund).toMatchObject({ out_refund_no: 'RSAE2E01', out_trade_no: outTradeNo })
    await pay.settled()
    expect(auth.refunds).toEqual([expect.objectContaining({ outTradeNo, outRefundNo: 'RSAE2E01', refundStatus: 'SUCCESS', amount: { refund: 500, total: 500 } })])
    expect(await client.queryRefund('RSAE2E01')).toMatchObject({ status: 'SUCCESS' })
    expect(await client.queryRefund('RSAE2E99')).toBeNull()
  })
})

describe('emulator knobs', () => {
  it('a probe signature is refused with 401 and the real notification still applies once', async () => {
    const { pay, auth, client } = await setup('public-key')
    pay.setKnobs({ probeFirst: true })
    await client.createNativeOrder({ outTradeNo: 'SAE2EPROBE01', description: 'd', amountFen: 1 })
    await pay.pay({ outTradeNo: 'SAE2EPROBE01' })
    await pay.settled()
    const probe = pay.notifications().find((n) => n.kind === 'probe')
    expect(probe?.attempts[0]?.status).toBe(401)
    expect(auth.payments).toHaveLength(1)
  })
})
