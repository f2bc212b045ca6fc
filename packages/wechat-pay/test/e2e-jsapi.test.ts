// JSAPI end to end against @scanauth/wechat-emulator's WeChat Pay over real sockets: the client opens
// a JSAPI order for a payer (re-entry answers the same prepay_id), the provider answers the cashier's
// parameters signed with the merchant key, the emulated cashier (POST /emulator/jsapi/pay, what its
// WeixinJSBridge stand-in posts) pays, and the signed notification reaches our handler and core's
// applyPayment, which grants.
import { createPublicKey, createVerify } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JsapiPayParameters, PaymentProvider } from '@scanauth/core'
import { sellingAuth } from '@scanauth/testkit'
import { startWechatPayEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider, jsapiPaySignMessage, WechatPayError } from '../src/index'

const PAYER = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o'
const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close()
})

/** Our notify_url: `handle` behind a plain Node server, fed the raw body. */
async function notifyServer(handle: (request: { headers: Record<string, unknown>; body: Buffer }) => Promise<{ status: number; headers: Record<string, string>; body: string }>): Promise<string> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const answer = await handle({ headers: req.headers, body: Buffer.concat(chunks) })
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  open.push({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/wxpay/notify`
}

async function emulator(): Promise<WechatPayEmulator> {
  const pay = await startWechatPayEmulator({ mchid: '1900000001', appid: 'wx_jsapi_e2e', payerOpenid: PAYER })
  open.push(pay)
  return pay
}

/** The emulated cashier's Pay button, as the bridge posts it; `viewer` is the phone user's cookie. */
async function payAtCashier(pay: WechatPayEmulator, parameters: JsapiPayParameters, viewer?: string) {
  const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8' }
  if (viewer !== undefined) headers.cookie = `wxemu_openid=${viewer}`
  const res = await fetch(`${pay.url}/emulator/jsapi/pay`, { method: 'POST', headers, body: JSON.stringify(parameters) })
  return (await res.json()) as { err_msg: string; reason?: string }
}

describe('client.createJsapiOrder', () => {
  it('sends the Native body plus payer.openid and answers the prepay_id; re-entry answers the same one', async () => {
    const pay = await emulator()
    const client = createWechatPayClient({ ...pay.clientOptions(), notifyUrl: 'http://127.0.0.1:9/wxpay/notify' })
    const input = { outTradeNo: 'SAJSAPI00001', description: 'scanauth 30-day pass', amountFen: 1990, expiresAt: Date.now() + 15 * 60_000, attach: 'phone', payerOpenid: PAYER }
    const { prepayId } = await client.createJsapiOrder(input)
    expect(prepayId).toMatch(/^wx\d{14}[0-9a-f]{22}$/)
    expect(await client.createJsapiOrder(input)).toEqual({ prepayId })
    expect(pay.orders()).toMatchObject([{ outTradeNo: input.outTradeNo, tradeType: 'JSAPI', payer: PAYER, total: 1990, description: input.description, prepayId }])
    expect(await client.queryOrder(input.outTradeNo)).toMatchObject({ trade_state: 'NOTPAY', attach: 'phone' })

    // Another payer on the same out_trade_no is other parameters: WeChat Pay refuses the re-entry.
    const used = await client.createJsapiOrder({ ...input, payerOpenid: 'o_someone_else' }).catch((e: unknown) => e)
    expect(used).toMatchObject({ code: 'http_error', status: 403, wechatCode: 'OUT_TRADE_NO_USED' })
    // An openid of another app, as the emulator marks one.
    const stranger = await client.createJsapiOrder({ ...input, outTradeNo: 'SAJSAPI00002', payerOpenid: 'other-app:o_1' }).catch((e: unknown) => e)
    expect(stranger).toMatchObject({ code: 'http_error', status: 400, wechatCode: 'PARAM_ERROR', wechatMessage: 'appid和openid不匹配' })
  })

  it('refuses a bad payer openid (and the Native fields) before anything is sent', async () => {
    const pay = await emulator()
    const client = createWechatPayClient({ ...pay.clientOptions(), notifyUrl: 'http://127.0.0.1:9/wxpay/notify' })
    const base = { outTradeNo: 'SAJSAPI00003', description: 'd', amountFen: 1, payerOpenid: PAYER }
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ payerOpenid: '' }, /payerOpenid must be 1–128/],
      [{ payerOpenid: 'o'.repeat(129) }, /payerOpenid must be 1–128/],
      [{ payerOpenid: 'o_1\n' }, /control characters/],
      [{ payerOpenid: 42 }, /payerOpenid/],
      [{ payerOpenid: undefined }, /payerOpenid/],
      [{ amountFen: 19.9 }, /integer fen/],
      [{ outTradeNo: 'SA1' }, /6–32/],
    ]
    for (const [change, message] of cases) {
      const error = await client.createJsapiOrder({ ...base, ...change } as never).catch((e: unknown) => e)
      expect(error, JSON.stringify(change)).toBeInstanceOf(WechatPayError)
      expect(error).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(message) })
    }
    expect(pay.requests()).toEqual([])
    // 128 characters is the limit, not past it.
    await client.createJsapiOrder({ ...base, payerOpenid: 'o'.repeat(128) })
    expect(pay.requests()).toHaveLength(1)
  })
})

describe('provider.createJsapiOrder', () => {
  it("answers the cashier's parameters, signed for the appid; again for the same order on re-entry", async () => {
    const pay = await emulator()
    const provider = createWechatPayProvider(createWechatPayClient({ ...pay.clientOptions(), notifyUrl: 'http://127.0.0.1:9/wxpay/notify' }))
    const request = { outTradeNo: 'SAJSAPI00010', description: 'scanauth 30-day pass', amountFen: 1990, expiresAt: Date.now() + 15 * 60_000, payerOpenid: PAYER }
    const first = await provider.createJsapiOrder!(request)
    const again = await provider.createJsapiOrder!(request)
    const merchantKey = createPublicKey(pay.merchantKey!.publicKeyPem)
    for (const parameters of [first, again]) {
      expect(parameters).toMatchObject({ appId: pay.appid, signType: 'RSA', package: `prepay_id=${pay.orders()[0]!.prepayId}` })
      expect(Math.abs(Number(parameters.timeStamp) - Date.now() / 1000)).toBeLessThan(5)
      expect(parameters.nonceStr).toMatch(/^[0-9A-Za-z]{32}$/)
      expect(createVerify('RSA-SHA256').update(jsapiPaySignMessage(parameters)).verify(merchantKey, parameters.paySign, 'base64')).toBe(true)
    }
    expect(again.package).toBe(first.package)
    expect(pay.orders()).toHaveLength(1)
    // The same time_expire went out as the Native order's would.
    expect(pay.orders()[0]!.expiresAt).toBe(Math.floor(request.expiresAt / 1000) * 1000)
  })
})

describe('paid at the emulated cashier', () => {
  it("→ signed notification → core's applyPayment grants: the order paid, the device authorized", async () => {
    const pay = await emulator()
    // The server needs the handler, the handler the scanauth, the scanauth the server's address.
    const mounted: { handler?: ReturnType<typeof createWechatPayNotificationHandler> } = {}
    const errors: unknown[] = []
    const notifyUrl = await notifyServer((request) => mounted.handler!(request as never))
    const real = createWechatPayProvider(createWechatPayClient({ ...pay.clientOptions(), notifyUrl }))
    // Core's phone purchase is not on ScanAuth's public API yet, so this provider opens the order core
    // asks for as a JSAPI order for the buyer: core stores it and decides the grant when it is paid.
    const cashier: { parameters?: JsapiPayParameters; payer?: string } = {}
    const phone: PaymentProvider = {
      ...real,
      async createNativeOrder(order) {
        cashier.parameters = await real.createJsapiOrder!({ ...order, payerOpenid: cashier.payer! })
        return { codeUrl: 'weixin://wxpay/bizpayurl?pr=unusedByThisTest' }
      },
    }
    const selling = sellingAuth({ provider: phone })
    mounted.handler = createWechatPayNotificationHandler({ auth: selling.auth, verificationKeys: pay.verificationKeys, apiV3Key: pay.apiV3Key, onError: (e) => errors.push(e) })

    cashier.payer = 'buyer-1' // sellingAuth's first buyer
    const purchase = await selling.buy()
    expect(purchase.openid).toBe(cashier.payer)
    // Someone else looking at the page cannot pay it; the buyer can.
    expect(await payAtCashier(pay, cashier.parameters!)).toMatchObject({ err_msg: 'get_brand_wcpay_request:fail', reason: expect.stringMatching(/for payer buyer-1/) })
    expect(await payAtCashier(pay, cashier.parameters!, 'buyer-1')).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
    await pay.settled()

    expect(errors).toEqual([])
    expect(pay.notifications()).toMatchObject([{ kind: 'real', state: 'accepted', resource: { trade_type: 'JSAPI', payer: { openid: 'buyer-1' }, out_trade_no: purchase.orderId } }])
    expect(await selling.outcome(purchase)).toEqual({ order: 'paid', device: 'authorized', grants: 1 })
    // The parameters of a paid order are refused afterwards; nothing more is granted.
    expect((await payAtCashier(pay, cashier.parameters!, 'buyer-1')).reason).toMatch(/already paid/)
    expect(await selling.outcome(purchase)).toEqual({ order: 'paid', device: 'authorized', grants: 1 })
  })
})
