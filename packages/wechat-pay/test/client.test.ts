// The client against a WeChat Pay on 127.0.0.1 that checks our signatures and signs its answers.
import { ManualClock } from '@scanauth/testkit'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createWechatPayProvider, WechatPayError, type WechatPayClient } from '../src/index'
import { clientFor } from './support/client'
import { APPID, MCHID, merchant, MERCHANT_SERIAL, PLATFORM_SERIAL, PUB_KEY_ID, stranger } from './support/keys'
import { parseAuthorization } from './support/pay-side'
import { startPayServer, type PayServer } from './support/pay-server'

const clock = new ManualClock('2026-01-01T00:00:00.000Z')
let server: PayServer
let client: WechatPayClient
let seq = 0
const newNo = () => `SA2026${String(++seq).padStart(6, '0')}`

beforeAll(async () => {
  server = await startPayServer(clock.now)
})
afterAll(() => server.close())
beforeEach(() => {
  client = clientFor(server, clock)
})

async function failure(promise: Promise<unknown>): Promise<WechatPayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof WechatPayError)) throw new Error(`expected a WechatPayError, got ${String(error)}`)
  return error
}

describe('Native order', () => {
  it('sends the documented body, signed over the exact bytes, and answers the code_url', async () => {
    const outTradeNo = newNo()
    const { codeUrl } = await client.createNativeOrder({ outTradeNo, description: 'scanauth 30-day pass', amountFen: 1990, expiresAt: Date.parse('2026-01-01T00:15:00Z') })
    expect(codeUrl).toBe(`weixin://wxpay/bizpayurl?pr=${outTradeNo}`)
    const request = server.requests.at(-1)
    expect(request?.signatureValid).toBe(true)
    expect(request?.method).toBe('POST')
    expect(request?.url).toBe('/v3/pay/transactions/native')
    expect(JSON.parse(request?.body.toString() ?? '')).toEqual({
      appid: APPID,
      mchid: MCHID,
      description: 'scanauth 30-day pass',
      out_trade_no: outTradeNo,
      time_expire: '2026-01-01T08:15:00+08:00',
      notify_url: 'https://example.com/wxpay/notify',
      amount: { total: 1990, currency: 'CNY' },
    })
    const authorization = parseAuthorization(String(request?.headers.authorization))
    expect(authorization).toMatchObject({ mchid: MCHID, serial_no: MERCHANT_SERIAL, timestamp: String(clock.now() / 1000) })
    expect(authorization.nonce_str).toMatch(/^[0-9A-F]{32}$/)
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.headers.accept).toBe('application/json')
    expect(request?.headers['wechatpay-serial']).toBeUndefined()
  })

  it('refuses floats, zero, strings and bad ids before sending anything', async () => {
    const before = server.requests.length
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ amountFen: 19.9 }, /integer fen.*19\.9|19\.9.*integer fen/],
      [{ amountFen: 0 }, /positive safe integer/],
      [{ amountFen: '1990' }, /positive safe integer/],
      [{ amountFen: 2 ** 53 }, /positive safe integer/],
      [{ outTradeNo: 'SA1' }, /6–32/],
      [{ outTradeNo: 'SA 2026 01' }, /6–32/],
      [{ outTradeNo: 'SA2026/../x' }, /6–32/],
      [{ description: 'x'.repeat(128) }, /at most 127/],
      [{ description: '  ' }, /non-empty/],
      [{ expiresAt: Number.NaN }, /expiresAt/],
    ]
    for (const [change, message] of cases) {
      const error = await failure(client.createNativeOrder({ outTradeNo: 'SA000001', description: 'd', amountFen: 1, ...change } as never))
      expect(error.code).toBe('invalid_argument')
      expect(error.message).toMatch(message)
    }
    // Counted in UTF-8 bytes, the stricter reading of WeChat Pay's string(127): 42 Chinese characters
    // (126 bytes) pass, 43 (129 bytes) are refused before anything is sent.
    await client.createNativeOrder({ outTradeNo: newNo(), description: '天'.repeat(42), amountFen: 1 })
    expect(server.requests.length).toBe(before + 1)
    const long = await failure(client.createNativeOrder({ outTradeNo: newNo(), description: '天'.repeat(43), amountFen: 1 }))
    expect(long).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/129 bytes/) })
    expect(server.requests.length).toBe(before + 1)
  })

  it('asks for public-key-mode answers with requestSerial and verifies them with the PUB_KEY_ID key', async () => {
    const pubClient = clientFor(server, clock, { requestSerial: PUB_KEY_ID })
    await pubClient.createNativeOrder({ outTradeNo: newNo(), description: 'd', amountFen: 1 })
    expect(server.requests.at(-1)?.headers['wechatpay-serial']).toBe(PUB_KEY_ID)
    // Only the public key configured: platform-signed answers are then refused.
    const onlyPub = clientFor(server, clock, { verificationKeys: { [PUB_KEY_ID]: (await import('./support/keys')).payPublicKey.publicPem } })
    const error = await failure(onlyPub.createNativeOrder({ outTradeNo: newNo(), description: 'd', amountFen: 1 }))
    expect(error.code).toBe('response_unverified')
    expect((error.cause as WechatPayError).code).toBe('unknown_serial')
  })
})

describe('JSAPI order', () => {
  it('sends the Native body plus payer.openid, signed, and answers the prepay_id; the cashier parameters use the client clock', async () => {
    const outTradeNo = newNo()
    const { prepayId } = await client.createJsapiOrder({ outTradeNo, description: 'scanauth 30-day pass', amountFen: 1990, expiresAt: Date.parse('2026-01-01T00:15:00Z'), payerOpenid: 'o_payer' })
    expect(prepayId).toBe(`wx${outTradeNo}`)
    const request = server.requests.at(-1)
    expect(request).toMatchObject({ signatureValid: true, method: 'POST', url: '/v3/pay/transactions/jsapi' })
    // Byte for byte: the Native body's fields in order, then the payer.
    expect(request?.body.toString()).toBe(
      JSON.stringify({
        appid: APPID,
        mchid: MCHID,
        description: 'scanauth 30-day pass',
        out_trade_no: outTradeNo,
        time_expire: '2026-01-01T08:15:00+08:00',
        notify_url: 'https://example.com/wxpay/notify',
        amount: { total: 1990, currency: 'CNY' },
        payer: { openid: 'o_payer' },
      }),
    )
    const parameters = client.signJsapiPayParameters(prepayId)
    expect(parameters).toMatchObject({ appId: APPID, timeStamp: String(clock.now() / 1000), package: `prepay_id=${prepayId}`, signType: 'RSA' })
    expect(client.signJsapiPayParameters(prepayId, { timeStamp: '1414561699', nonceStr: 'N' })).toMatchObject({ timeStamp: '1414561699', nonceStr: 'N' })
  })
})

describe('answers are verified before they are believed', () => {
  const order = () => client.createNativeOrder({ outTradeNo: newNo(), description: 'd', amountFen: 1 })
  const cases: [string, Parameters<PayServer['tamper']>[0], string][] = [
    ['a body other than the one signed', { sentBody: '{"code_url":"weixin://wxpay/bizpayurl?pr=EVIL"}' }, 'signature_invalid'],
    ['a signature of a stranger key', { signWith: stranger.privateKey }, 'signature_invalid'],
    ['a probe signature', { signature: 'WECHATPAY/SIGNTEST/abc+/==' }, 'signature_invalid'],
    ['an unknown serial', { serial: 'FFFF' }, 'unknown_serial'],
    ['a timestamp 301 s old', { timestampOffset: -301 }, 'timestamp_out_of_range'],
    ['no Wechatpay-* headers', { unsigned: true }, 'missing_header'],
  ]
  it.each(cases)('refuses %s', async (_name, tamper, reason) => {
    server.tamper(tamper)
    const error = await failure(order())
    expect(error.code).toBe('response_unverified')
    expect((error.cause as WechatPayError).code).toBe(reason)
    expect(error.message).not.toContain('EVIL')
  })

  it('accepts a timestamp exactly 300 s off', async () => {
    server.tamper({ timestampOffset: 300 })
    await expect(order()).resolves.toHaveProperty('codeUrl')
  })

  it('refuses a verified 2xx without code_url as bad_response', async () => {
    server.tamper({ status: 200, body: { prepay_id: 'wx1' } })
    expect((await failure(order())).code).toBe('bad_response')
  })
})

describe('errors keep what WeChat Pay said', () => {
  it('a 401 SIGN_ERROR keeps detail.sign_information', async () => {
    const wrongKey = clientFor(server, clock, { merchantPrivateKey: stranger.privateKey })
    const error = await failure(wrongKey.queryOrder('SA000404'))
    expect(error).toMatchObject({ code: 'http_error', status: 401, wechatCode: 'SIGN_ERROR', wechatMessage: '签名错误' })
    expect(error.requestId).toMatch(/^REQ-/)
    expect((error.detail as { sign_information: { truncated_sign_message: string } }).sign_information.truncated_sign_message).toMatch(/^GET\n\/v3\/pay\/transactions\/out-trade-no\/SA000404\?mchid=1230000109\n\d+\n[0-9A-F]{32}\n$/)
  })

  it('a 400 PARAM_ERROR keeps its detail; a bare 404 is an error, not "no such order"', async () => {
    server.tamper({ status: 400, body: { code: 'PARAM_ERROR', message: '参数错误', detail: { field: '#/properties/amount', issue: 'x', location: 'body' } } })
    expect(await failure(client.createNativeOrder({ outTradeNo: newNo(), description: 'd', amountFen: 1 }))).toMatchObject({
      code: 'http_error',
      status: 400,
      wechatCode: 'PARAM_ERROR',
      detail: { field: '#/properties/amount', issue: 'x', location: 'body' },
    })
    server.tamper({ status: 404, body: '<html>not found</html>' })
    expect(await failure(client.queryOrder('SA000404'))).toMatchObject({ code: 'http_error', status: 404, wechatCode: undefined })
  })

  it('names a timeout and a refused connection', async () => {
    server.tamper({ delayMs: 500 })
    const slow = clientFor(server, clock, { timeoutMs: 100 })
    expect((await failure(slow.queryOrder('SA000404'))).code).toBe('timeout')
    const gone = await startPayServer(clock.now)
    await gone.close()
    const closed = clientFor(server, clock, { apiBase: gone.url })
    const error = await failure(closed.queryOrder('SA000404'))
    expect(error.code).toBe('network_error')
    expect(error.message).toMatch(/ECONNREFUSED/)
  })
})

describe('query, close, refund', () => {
  it('queries an order: null when unknown, the transaction when known', async () => {
    expect(await client.queryOrder('SA999999')).toBeNull()
    const outTradeNo = newNo()
    await client.createNativeOrder({ outTradeNo, description: 'd', amountFen: 1990 })
    expect(await client.queryOrder(outTradeNo)).toMatchObject({ out_trade_no: outTradeNo, trade_state: 'NOTPAY', mchid: MCHID, appid: APPID })
    expect(server.requests.at(-1)?.url).toBe(`/v3/pay/transactions/out-trade-no/${outTradeNo}?mchid=${MCHID}`)
    expect(server.requests.at(-1)?.signatureValid).toBe(true)
  })

  it('closes an unpaid order (204) and answers paid for ORDERPAID', async () => {
    const open = newNo()
    await client.createNativeOrder({ outTradeNo: open, description: 'd', amountFen: 1 })
    expect(await client.closeOrder(open)).toBe('closed')
    expect(JSON.parse(server.requests.at(-1)?.body.toString() ?? '')).toEqual({ mchid: MCHID })
    expect(server.requests.at(-1)?.url).toBe(`/v3/pay/transactions/out-trade-no/${open}/close`)
    const paid = newNo()
    await client.createNativeOrder({ outTradeNo: paid, description: 'd', amountFen: 1 })
    server.pay(paid)
    expect(await client.closeOrder(paid)).toBe('paid')
  })

  it('refunds with the caller’s out_refund_no (the same on a retry) and queries it', async () => {
    const outTradeNo = newNo()
    await client.createNativeOrder({ outTradeNo, description: 'd', amountFen: 1990 })
    server.pay(outTradeNo)
    const input = { outTradeNo, outRefundNo: `R${outTradeNo}`, refundFen: 990, totalFen: 1990, reason: '不想要了' }
    const first = await client.refund(input)
    const again = await client.refund(input)
    expect(again.refund_id).toBe(first.refund_id)
    expect(JSON.parse(server.requests.at(-1)?.body.toString() ?? '')).toEqual({
      out_trade_no: outTradeNo,
      out_refund_no: `R${outTradeNo}`,
      reason: '不想要了',
      notify_url: 'https://example.com/wxpay/notify',
      amount: { refund: 990, total: 1990, currency: 'CNY' },
    })
    expect(await client.queryRefund(`R${outTradeNo}`)).toMatchObject({ status: 'PROCESSING', amount: { refund: 990 } })
    expect(await client.queryRefund('R-none')).toBeNull()
    expect((await failure(client.refund({ ...input, refundFen: 9.9 }))).code).toBe('invalid_argument')
    expect((await failure(client.refund({ ...input, refundFen: 1991 }))).message).toMatch(/more than totalFen/)
    expect((await failure(client.refund({ ...input, outRefundNo: 'R#1' }))).code).toBe('invalid_argument')
  })
})

describe('createWechatPayProvider', () => {
  it('speaks core’s PaymentProvider: merchant, order, query as ProviderTransaction, close', async () => {
    const provider = createWechatPayProvider(client)
    expect(provider.merchant).toEqual({ mchid: MCHID, appid: APPID })
    const outTradeNo = newNo()
    const { codeUrl } = await provider.createNativeOrder({ outTradeNo, description: 'plan', amountFen: 500, expiresAt: Date.parse('2026-01-01T01:00:00Z') })
    expect(codeUrl).toContain(outTradeNo)
    expect(JSON.parse(server.requests.at(-1)?.body.toString() ?? '').time_expire).toBe('2026-01-01T09:00:00+08:00')
    expect(await provider.queryOrder(outTradeNo)).toEqual({ mchid: MCHID, appid: APPID, outTradeNo, transactionId: null, tradeState: 'NOTPAY', amount: { total: 500, currency: 'CNY' } })
    server.pay(outTradeNo)
    expect(await provider.queryOrder(outTradeNo)).toEqual({
      mchid: MCHID,
      appid: APPID,
      outTradeNo,
      transactionId: `4200000000${outTradeNo}`,
      tradeState: 'SUCCESS',
      amount: { total: 500, currency: 'CNY' },
      successTime: '2026-01-01T08:01:00+08:00',
    })
    expect(await provider.queryOrder('SA404404')).toBeNull()
    expect(await provider.closeOrder(outTradeNo)).toBe('paid')
  })
})

describe('options', () => {
  it('are checked when the client is created', () => {
    const base = { mchid: MCHID, appid: APPID, merchantPrivateKey: merchant.privatePem, merchantCertSerial: MERCHANT_SERIAL, verificationKeys: { [PLATFORM_SERIAL]: stranger.publicPem }, notifyUrl: 'https://example.com/n' }
    const refused = (change: Record<string, unknown>) => expect(() => clientFor(server, clock, { ...base, ...change } as never)).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    refused({ mchid: '' })
    refused({ merchantPrivateKey: merchant.publicPem })
    refused({ verificationKeys: {} })
    refused({ notifyUrl: 'https://example.com/n?x=1' })
    refused({ notifyUrl: '/relative' })
    refused({ timeoutMs: 0 })
    refused({ maxSkewSeconds: -1 })
    refused({ apiBase: 'nope' })
  })
})
