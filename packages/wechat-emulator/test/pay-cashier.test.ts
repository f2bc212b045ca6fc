// The JSAPI cashier's stand-in over real HTTP: the bridge script as served, and POST /emulator/jsapi/pay
// (and /cashier) checking what WeChat's cashier checks: paySign by the merchant key over the four
// lines, the appId, a known, payable prepay_id, a timeStamp in seconds near now, and the payer being
// the person looking (the wxemu_openid cookie, else payerOpenid). A refusal pays and notifies nothing.
import { generateKeyPairSync } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { JSAPI_BRIDGE_PATH, startWechatPayEmulator, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { cashierParameters, decryptResource, jsapiOrder, merchantClient, notifyEndpoint } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787', apiV3Key: '0123456789abcdef0123456789ABCDEF' }
const PAYER = 'o_phone_user'
const PAGE = 'http://127.0.0.1:4321'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatPayEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  const emulator = resources.add(await startWechatPayEmulator({ ...MERCHANT, now: clock.now, payerOpenid: PAYER, ...options }))
  const endpoint = await notifyEndpoint(resources)
  const call = merchantClient(emulator, clock.now)
  /** A JSAPI order for `payer` and its correctly signed cashier parameters. */
  async function order(payer = PAYER, extra: Record<string, unknown> = {}) {
    const body = jsapiOrder(emulator, endpoint.url, payer, extra)
    const prepayId = (await call('POST', '/v3/pay/transactions/jsapi', body)).json.prepay_id as string
    const params = cashierParameters({ appId: emulator.appid, prepayId, privateKeyPem: emulator.merchantKey!.privateKeyPem, timeStamp: String(Math.floor(clock.now() / 1000)) })
    return { outTradeNo: body.out_trade_no as string, prepayId, params }
  }
  /** POSTs the parameters as the bridge does: text/plain, from a page's origin, with a cookie when given. */
  async function post(path: 'pay' | 'cashier', params: unknown, cookie?: string) {
    const headers: Record<string, string> = { 'content-type': 'text/plain;charset=UTF-8', origin: PAGE }
    if (cookie !== undefined) headers.cookie = cookie
    const res = await fetch(`${emulator.url}/emulator/jsapi/${path}`, { method: 'POST', headers, body: JSON.stringify(params) })
    return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> }
  }
  return { clock, emulator, endpoint, call, order, post }
}

describe('GET /emulator/jsapi-bridge.js', () => {
  it('serves the stand-in as JavaScript, uncached, loadable from any page', async () => {
    const { emulator } = await setup()
    expect(emulator.jsapiBridgeUrl).toBe(`${emulator.url}${JSAPI_BRIDGE_PATH}`)
    expect(JSAPI_BRIDGE_PATH).toBe('/emulator/jsapi-bridge.js')
    const res = await fetch(emulator.jsapiBridgeUrl, { headers: { origin: PAGE } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    const script = await res.text()
    expect(script).toContain("if (window.WeixinJSBridge) return")
    expect(script).toContain('WeixinJSBridgeReady')
    expect(script).not.toMatch(/\beval\(|new Function|innerHTML|onclick/)
    expect((await fetch(emulator.jsapiBridgeUrl, { method: 'POST' })).status).toBe(405)
  })
})

describe('POST /emulator/jsapi/pay', () => {
  it('pays with a good paySign: ok, the order SUCCESS as its payer, a signed notification sent', async () => {
    const { emulator, endpoint, order, post } = await setup()
    const { outTradeNo, params } = await order()
    // The cashier first shows what is paid, paying nothing.
    const shown = await post('cashier', params)
    expect(shown).toMatchObject({ status: 200, json: { ok: true, description: 'scanauth 30-day pass', total: 1990, payer: PAYER } })
    expect(emulator.orders()[0]!.tradeState).toBe('NOTPAY')

    const paid = await post('pay', params)
    expect(paid.status).toBe(200)
    expect(paid.json).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
    // Credentialed CORS: the page's origin, never *.
    expect(paid.headers.get('access-control-allow-origin')).toBe(PAGE)
    expect(paid.headers.get('access-control-allow-credentials')).toBe('true')
    await emulator.settled()
    expect(emulator.orders()[0]).toMatchObject({ outTradeNo, tradeState: 'SUCCESS' })
    expect(endpoint.received).toHaveLength(1)
    const envelope = JSON.parse(endpoint.received[0]!.body) as { resource: { ciphertext: string; nonce: string; associated_data: string } }
    expect(decryptResource(MERCHANT.apiV3Key, envelope.resource)).toMatchObject({ out_trade_no: outTradeNo, trade_type: 'JSAPI', trade_state: 'SUCCESS', payer: { openid: PAYER } })
    expect(emulator.notifications()).toMatchObject([{ state: 'accepted', kind: 'real' }])
  })

  it('takes the person paying from the wxemu_openid cookie before the payerOpenid option', async () => {
    const { emulator, order, post } = await setup()
    const mine = await order('o_cookie_user')
    const refused = await post('pay', mine.params)
    expect(refused.json.reason).toMatch(/for payer o_cookie_user, but the person paying is o_phone_user/)
    expect((await post('pay', mine.params, 'theme=dark; wxemu_openid=o_cookie_user')).json).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
    const theirs = await order()
    const other = await post('pay', theirs.params, 'wxemu_openid=o_cookie_user')
    expect(other).toMatchObject({ status: 409, json: { err_msg: 'get_brand_wcpay_request:fail' } })
    expect(other.json.reason).toMatch(/for payer o_phone_user, but the person paying is o_cookie_user/)
    expect(emulator.orders().map((o) => o.tradeState)).toEqual(['SUCCESS', 'NOTPAY'])
  })

  it('answers fail and pays nothing for a bad paySign, an unknown prepay_id, a paid order, a wrong payer and more', async () => {
    const { clock, emulator, endpoint, order, post } = await setup()
    const good = await order()
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const stamp = String(Math.floor(clock.now() / 1000))
    const signed = (prepayId: string, overrides: Partial<Parameters<typeof cashierParameters>[0]> = {}) =>
      cashierParameters({ appId: emulator.appid, prepayId, privateKeyPem: emulator.merchantKey!.privateKeyPem, timeStamp: stamp, ...overrides })
    const paidOrder = await order()
    await emulator.pay({ prepayId: paidOrder.prepayId })
    const someoneElses = await order('o_someone_else')
    const expiring = await order(PAYER, { time_expire: '2026-03-01T16:01:00+08:00' })

    const cases: Array<[string, unknown, RegExp]> = [
      ['a paySign by another key', signed(good.prepayId, { privateKeyPem: stranger }), /paySign does not verify/],
      ['a tampered nonceStr', { ...good.params, nonceStr: 'changed' }, /paySign does not verify/],
      ['a paySign that is not base64', { ...good.params, paySign: 'not base64!' }, /paySign does not verify/],
      ['signType MD5', { ...good.params, signType: 'MD5' }, /signType must be RSA/],
      ['another appId', signed(good.prepayId, { appId: 'wx_other_app_00001' }), /appId wx_other_app_00001 is not the AppID/],
      ['milliseconds', signed(good.prepayId, { timeStamp: String(clock.now()) }), /seconds, not milliseconds/],
      ['a stale timeStamp', signed(good.prepayId, { timeStamp: String(Number(stamp) - 301) }), /301 s old/],
      ['an unknown prepay_id', signed('wx20260301160000aaaaaaaaaaaaaaaaaaaaaa'), /unknown prepay_id/],
      ['a package changed after signing', { ...good.params, package: good.prepayId }, /paySign does not verify/],
      ['a paid order', paidOrder.params, /already paid/],
      ['another payer\'s order', someoneElses.params, /for payer o_someone_else/],
      ['no parameters', 'x', /must be an object/],
      ['a missing paySign', { ...good.params, paySign: undefined }, /paySign is missing/],
    ]
    const notified = emulator.notifications().length
    for (const [name, params, reason] of cases) {
      const res = await post('pay', params)
      expect({ name, status: res.status, err_msg: res.json.err_msg }).toEqual({ name, status: 409, err_msg: 'get_brand_wcpay_request:fail' })
      expect(res.json.reason, name).toMatch(reason)
      expect((await post('cashier', params)).json, name).toMatchObject({ ok: false, reason: res.json.reason })
    }
    // The window is ±300 s, inside it is fine; an order past time_expire is refused.
    clock.advance(61_000)
    expect((await post('pay', expiring.params)).json.reason).toMatch(/past its time_expire/)
    expect(emulator.orders().filter((o) => o.tradeState === 'SUCCESS').map((o) => o.outTradeNo)).toEqual([paidOrder.outTradeNo])
    expect(emulator.notifications()).toHaveLength(notified)
    expect((await post('pay', good.params)).json).toEqual({ err_msg: 'get_brand_wcpay_request:ok' })
    await emulator.settled()
    expect(endpoint.received).toHaveLength(2)
  })

  it('refuses a closed order, answers a preflight, and only POST', async () => {
    const { emulator, call, order, post } = await setup()
    const closing = await order()
    expect((await call('POST', `/v3/pay/transactions/out-trade-no/${closing.outTradeNo}/close`, { mchid: MERCHANT.mchid })).status).toBe(204)
    expect((await post('pay', closing.params)).json.reason).toMatch(/is closed/)
    const preflight = await fetch(`${emulator.url}/emulator/jsapi/pay`, { method: 'OPTIONS', headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe(PAGE)
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type')
    expect((await fetch(`${emulator.url}/emulator/jsapi/pay`)).status).toBe(405)
  })
})
