// JSAPI orders over real sockets: POST /v3/pay/transactions/jsapi with WeChat's checks (signature,
// body, payer.openid, the appid–mchid and appid–openid pairings), re-entry answering the current
// prepay_id, and the order then queried, paid, notified, closed and refunded like a Native one.
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { FOREIGN_OPENID_PREFIX, startWechatPayEmulator, WechatEmulatorError, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { decryptResource, jsapiOrder, merchantClient, nativeOrder, notifyEndpoint } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787', apiV3Key: '0123456789abcdef0123456789ABCDEF' }
const PAYER = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o'
const JSAPI = '/v3/pay/transactions/jsapi'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatPayEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  const emulator = resources.add(await startWechatPayEmulator({ ...MERCHANT, now: clock.now, refundDelayMs: 0, ...options }))
  const endpoint = await notifyEndpoint(resources)
  return { clock, emulator, endpoint, call: merchantClient(emulator, clock.now) }
}

describe('POST /v3/pay/transactions/jsapi', () => {
  it('opens an order for the payer and answers a prepay_id in WeChat\'s shape, signed', async () => {
    const { emulator, endpoint, call } = await setup()
    const body = jsapiOrder(emulator, endpoint.url, PAYER, { attach: 'phone' })
    const created = await call('POST', JSAPI, body)
    expect(created.status).toBe(200)
    expect(created.verified).toBe(true)
    // wx, the Beijing time to the second, random hex: wx + 20260301160000 + 22 hex digits.
    expect(created.json).toEqual({ prepay_id: expect.stringMatching(/^wx20260301160000[0-9a-f]{22}$/) })
    expect(emulator.orders()).toMatchObject([
      { outTradeNo: body.out_trade_no, tradeType: 'JSAPI', prepayId: created.json.prepay_id, payer: PAYER, codeUrl: '', codeUrls: [], tradeState: 'NOTPAY', payable: true },
    ])
  })

  it('re-entry with the same parameters answers the current prepay_id; other parameters are OUT_TRADE_NO_USED', async () => {
    const { clock, emulator, endpoint, call } = await setup()
    const body = jsapiOrder(emulator, endpoint.url, PAYER)
    const first = (await call('POST', JSAPI, body)).json.prepay_id
    // Key order does not make parameters different.
    const reordered = Object.fromEntries(Object.entries(body).reverse())
    expect((await call('POST', JSAPI, reordered)).json).toEqual({ prepay_id: first })
    for (const change of [{ amount: { total: 1, currency: 'CNY' } }, { payer: { openid: 'o_someone_else' } }, { description: 'other' }]) {
      const res = await call('POST', JSAPI, { ...body, ...change })
      expect({ status: res.status, code: res.json.code }).toEqual({ status: 403, code: 'OUT_TRADE_NO_USED' })
    }
    // The same number on the Native endpoint is another order's parameters too, and vice versa.
    const native = await call('POST', '/v3/pay/transactions/native', { ...body, payer: undefined })
    expect({ status: native.status, code: native.json.code }).toEqual({ status: 403, code: 'OUT_TRADE_NO_USED' })
    const nativeBody = nativeOrder(emulator, endpoint.url)
    expect((await call('POST', '/v3/pay/transactions/native', nativeBody)).status).toBe(200)
    expect((await call('POST', JSAPI, { ...nativeBody, payer: { openid: PAYER } })).json.code).toBe('OUT_TRADE_NO_USED')
    // A prepay_id lives 2 hours; re-entry after that answers a new one for the same order.
    clock.advance(2 * 3600_000)
    const later = (await call('POST', JSAPI, body)).json.prepay_id
    expect(later).not.toBe(first)
    expect(emulator.orders().filter((o) => o.tradeType === 'JSAPI')).toMatchObject([{ prepayId: later }])
  })

  it('refuses a missing or malformed payer, a stranger\'s openid, an appid not bound to the merchant, and a bad signature', async () => {
    const { emulator, endpoint, call } = await setup()
    const body = jsapiOrder(emulator, endpoint.url, PAYER)
    const cases: Array<[Record<string, unknown>, number, string, string, string?]> = [
      [{ payer: undefined }, 400, 'PARAM_ERROR', 'payer: is required', '#/properties/payer'],
      [{ payer: 'o' }, 400, 'PARAM_ERROR', 'payer: must be an object', '#/properties/payer'],
      [{ payer: {} }, 400, 'PARAM_ERROR', 'payer.openid: is required', '#/properties/payer/properties/openid'],
      [{ payer: { openid: 7 } }, 400, 'PARAM_ERROR', 'payer.openid: must be a string', '#/properties/payer/properties/openid'],
      [{ payer: { openid: 'o'.repeat(129) } }, 400, 'PARAM_ERROR', 'payer.openid: must be at most 128 bytes', '#/properties/payer/properties/openid'],
      [{ payer: { openid: `${FOREIGN_OPENID_PREFIX}${PAYER}` } }, 400, 'PARAM_ERROR', 'appid和openid不匹配', '#/properties/payer/properties/openid'],
      [{ appid: 'wx_not_bound_00001' }, 400, 'APPID_MCHID_NOT_MATCH', 'appid和mch_id不匹配'],
      [{ mchid: '1900000999' }, 400, 'PARAM_ERROR', 'mchid: does not match the merchant that signed the request', '#/properties/mchid'],
      [{ amount: { total: 19.9, currency: 'CNY' } }, 400, 'PARAM_ERROR', 'amount.total: must be a positive integer (fen)', '#/properties/amount/properties/total'],
    ]
    for (const [change, status, code, message, field] of cases) {
      const res = await call('POST', JSAPI, { ...body, ...change })
      expect({ status: res.status, code: res.json.code, message: res.json.message }, message).toEqual({ status, code, message })
      if (field !== undefined) expect((res.json.detail as { field: string }).field).toBe(field)
      expect(res.verified).toBe(true)
    }
    const tampered = await call('POST', JSAPI, { ...body, amount: { total: 1, currency: 'CNY' } }, { signedBody: JSON.stringify(body) })
    expect({ status: tampered.status, code: tampered.json.code }).toEqual({ status: 401, code: 'SIGN_ERROR' })
    expect(emulator.orders()).toEqual([])
  })

  it('asks openidBelongs(appid, openid) when given', async () => {
    const asked: string[][] = []
    const { emulator, endpoint, call } = await setup({ openidBelongs: (appid, openid) => (asked.push([appid, openid]), openid === PAYER) })
    expect((await call('POST', JSAPI, jsapiOrder(emulator, endpoint.url, PAYER))).status).toBe(200)
    const stranger = await call('POST', JSAPI, jsapiOrder(emulator, endpoint.url, 'o_not_a_user_of_this_app'))
    expect({ status: stranger.status, code: stranger.json.code, message: stranger.json.message }).toEqual({ status: 400, code: 'PARAM_ERROR', message: 'appid和openid不匹配' })
    expect(asked).toEqual([
      [MERCHANT.appid, PAYER],
      [MERCHANT.appid, 'o_not_a_user_of_this_app'],
    ])
    await expect(startWechatPayEmulator({ ...MERCHANT, openidBelongs: 'yes' as never })).rejects.toThrow(/openidBelongs/)
  })
})

describe('a JSAPI order afterwards', () => {
  it('is paid by its payer only: trade_type JSAPI and payer.openid in the query and the notification', async () => {
    const { emulator, endpoint, call } = await setup({ payerOpenid: 'o_page_default' })
    const body = jsapiOrder(emulator, endpoint.url, PAYER)
    const prepayId = (await call('POST', JSAPI, body)).json.prepay_id as string
    const query = `/v3/pay/transactions/out-trade-no/${String(body.out_trade_no)}?mchid=${MERCHANT.mchid}`
    expect((await call('GET', query)).json).toMatchObject({ trade_state: 'NOTPAY' })

    const wrong = await emulator.pay({ prepayId, openid: 'o_page_default' }).catch((e: unknown) => e)
    expect(wrong).toBeInstanceOf(WechatEmulatorError)
    expect((wrong as WechatEmulatorError).code).toBe('wrong_payer')
    await expect(emulator.pay({ prepayId: 'wx_unknown' })).rejects.toMatchObject({ code: 'unknown_order' })

    // Without an openid, pay() pays as the order's payer (not the payerOpenid option).
    const transaction = await emulator.pay({ prepayId })
    expect(transaction).toMatchObject({ trade_type: 'JSAPI', trade_state: 'SUCCESS', payer: { openid: PAYER } })
    await emulator.settled()
    const envelope = JSON.parse(endpoint.received[0]!.body) as { resource: { ciphertext: string; nonce: string; associated_data: string } }
    expect(decryptResource(MERCHANT.apiV3Key, envelope.resource)).toEqual(transaction)
    expect((await call('GET', query)).json).toEqual(transaction)
    expect((await call('POST', JSAPI, body)).json.code).toBe('ORDERPAID')

    const refund = await call('POST', '/v3/refund/domestic/refunds', { out_trade_no: body.out_trade_no, out_refund_no: 'RJSAPI0001', amount: { refund: 1990, total: 1990, currency: 'CNY' } })
    expect(refund.json).toMatchObject({ status: 'SUCCESS' })
    expect((await call('GET', query)).json).toMatchObject({ trade_state: 'REFUND', trade_type: 'JSAPI' })
  })

  it('closes like a Native order; the page pays a JSAPI order as its payer', async () => {
    const { emulator, endpoint, call } = await setup()
    const closing = jsapiOrder(emulator, endpoint.url, PAYER)
    await call('POST', JSAPI, closing)
    const closed = await call('POST', `/v3/pay/transactions/out-trade-no/${String(closing.out_trade_no)}/close`, { mchid: MERCHANT.mchid })
    expect(closed.status).toBe(204)
    expect((await call('POST', JSAPI, closing)).json.code).toBe('ORDER_CLOSED')
    await expect(emulator.pay({ outTradeNo: closing.out_trade_no as string })).rejects.toMatchObject({ code: 'order_closed' })

    const paying = jsapiOrder(emulator, endpoint.url, PAYER)
    await call('POST', JSAPI, paying)
    // The page's button posts no openid for a JSAPI order.
    const res = await fetch(`${emulator.url}/emulator/pay`, { method: 'POST', body: JSON.stringify({ out_trade_no: paying.out_trade_no }) })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ trade_type: 'JSAPI', payer: { openid: PAYER } })
    const refused = await fetch(`${emulator.url}/emulator/pay`, { method: 'POST', body: JSON.stringify({ out_trade_no: closing.out_trade_no, openid: 'o_x' }) })
    expect(refused.status).toBe(409)
  })
})
