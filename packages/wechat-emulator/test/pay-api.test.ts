// The WeChat Pay emulator's API over real sockets: request signatures checked like WeChat (401
// SIGN_ERROR with sign_information), every answer signed, Native orders with WeChat's checks and
// re-entry rules, query and close.
import { generateKeyPairSync } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { startWechatPayEmulator, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { authorization, merchantClient, nativeOrder } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787' }
// Nothing listens there: notifications of paid orders fail fast and are retried until close().
const NOTIFY = 'http://127.0.0.1:9/wxpay/notify'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatPayEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  const emulator = resources.add(await startWechatPayEmulator({ ...MERCHANT, now: clock.now, ...options }))
  return { clock, emulator, call: merchantClient(emulator, clock.now) }
}

describe('request signatures', () => {
  it('accepts a correctly signed request, in either pair order, and signs the answer', async () => {
    const { emulator, call } = await setup()
    const created = await call('POST', '/v3/pay/transactions/native', nativeOrder(emulator, NOTIFY))
    expect(created.status).toBe(200)
    expect(created.json.code_url).toMatch(/^weixin:\/\/wxpay\/bizpayurl\?pr=[0-9A-Za-z]+$/)
    expect(created.verified).toBe(true)
    expect(created.headers.get('wechatpay-serial')).toMatch(/^PUB_KEY_ID_\d{34}$/)
    expect(created.headers.get('wechatpay-serial')).toBe(emulator.platformSerial)
    expect(created.headers.get('wechatpay-signature-type')).toBe('WECHATPAY2-SHA256-RSA2048')
    expect(created.headers.get('request-id')).toBeTruthy()
    expect(created.headers.get('wechatpay-timestamp')).toBe(String(Date.parse('2026-03-01T08:00:00Z') / 1000))
    const reversed = await call('POST', '/v3/pay/transactions/native', nativeOrder(emulator, NOTIFY), { reversePairs: true })
    expect(reversed.status).toBe(200)
  })

  it('answers 401 SIGN_ERROR with sign_information for a tampered body', async () => {
    const { emulator, call } = await setup()
    const body = nativeOrder(emulator, NOTIFY)
    const sent = JSON.stringify({ ...body, amount: { total: 1, currency: 'CNY' } })
    const res = await call('POST', '/v3/pay/transactions/native', sent, { signedBody: JSON.stringify(body), timestamp: 1772352000, nonce: 'N0NCE' })
    expect(res.status).toBe(401)
    expect(res.verified).toBe(true) // errors are signed too
    expect(res.json).toMatchObject({ code: 'SIGN_ERROR', detail: { sign_information: { method: 'POST', url: '/v3/pay/transactions/native' } } })
    const info = (res.json.detail as { sign_information: Record<string, unknown> }).sign_information
    const rebuilt = `POST\n/v3/pay/transactions/native\n1772352000\nN0NCE\n${sent}\n`
    expect(info.sign_message_length).toBe(Buffer.byteLength(rebuilt))
    expect(rebuilt.startsWith(info.truncated_sign_message as string)).toBe(true)
    expect(emulator.orders()).toEqual([])
  })

  it('refuses a wrong key, an unknown serial, another mchid, a stale or future timestamp, and no header', async () => {
    const { call, clock } = await setup()
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const target = `/v3/pay/transactions/out-trade-no/SA000001?mchid=${MERCHANT.mchid}`
    const now = Math.floor(clock.now() / 1000)
    const cases: Array<[Parameters<typeof call>[3], RegExp]> = [
      [{ privateKeyPem: other }, /does not match/],
      [{ serial: 'ABCDEF0123456789' }, /no merchant certificate/],
      [{ mchid: '1900000999' }, /mchid/],
      [{ timestamp: now - 301 }, /301 s old/],
      [{ timestamp: now + 400 }, /ahead/],
      [{ authorization: null }, /missing/],
      [{ authorization: 'WECHATPAY2-SHA256-RSA2048 mchid="1"' }, /missing/],
      [{ authorization: 'Bearer x' }, /scheme/],
    ]
    for (const [options, message] of cases) {
      const res = await call('GET', target, undefined, options)
      expect(res.status, String(message)).toBe(401)
      expect(res.json.code).toBe('SIGN_ERROR')
      expect(res.json.message).toMatch(message)
      expect((res.json.detail as { sign_information: { url: string } }).sign_information.url).toBe(target)
    }
    // Inside the window is fine: ±300 s on the emulator's clock.
    expect((await call('GET', target, undefined, { timestamp: now - 300 })).status).toBe(404)
  })

  it('signs the query string exactly as sent', async () => {
    const { emulator, call } = await setup()
    const body = nativeOrder(emulator, NOTIFY)
    await call('POST', '/v3/pay/transactions/native', body)
    const target = `/v3/pay/transactions/out-trade-no/${body.out_trade_no as string}?mchid=${MERCHANT.mchid}`
    const key = emulator.merchantKey!
    // Signed without the query: WeChat rebuilds the message from the request line and refuses it.
    const header = authorization({ method: 'GET', target: target.split('?')[0]!, body: '', mchid: MERCHANT.mchid, serial: key.serial, privateKeyPem: key.privateKeyPem, timestamp: 1772352000, nonce: 'n' })
    const res = await call('GET', target, undefined, { authorization: header })
    expect(res.status).toBe(401)
    expect((res.json.detail as { sign_information: { truncated_sign_message: string } }).sign_information.truncated_sign_message).toBe(`GET\n${target}\n1772352000\nn\n\n`)
  })

  it('accepts keys given as merchantPublicKeys and added later with addMerchantKey', async () => {
    const first = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const second = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pem = (key: typeof first.publicKey) => key.export({ type: 'spki', format: 'pem' }).toString()
    const { emulator, call } = await setup({ merchantPublicKeys: { '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C': pem(first.publicKey) } })
    expect(emulator.merchantKey).toBeNull()
    const privatePem = (key: typeof first.privateKey) => key.export({ type: 'pkcs8', format: 'pem' }).toString()
    const target = `/v3/pay/transactions/out-trade-no/SA000001?mchid=${MERCHANT.mchid}`
    // Serials compare without regard to case.
    const viaFirst = await call('GET', target, undefined, { serial: '1dde55ad98ed71d6edd4a4a16996de7b47773a8c', privateKeyPem: privatePem(first.privateKey) })
    expect(viaFirst.json.code).toBe('ORDER_NOT_EXIST')
    expect((await call('GET', target, undefined, { serial: 'AA01', privateKeyPem: privatePem(second.privateKey) })).status).toBe(401)
    emulator.addMerchantKey('AA01', pem(second.publicKey))
    expect((await call('GET', target, undefined, { serial: 'AA01', privateKeyPem: privatePem(second.privateKey) })).status).toBe(404)
  })
})

describe('signed answers', () => {
  it('signs a 204 over an empty body line, and honours a request Wechatpay-Serial', async () => {
    const { emulator, call } = await setup({ mode: 'certificate' })
    expect(emulator.platformSerial).toMatch(/^[0-9A-F]{40}$/)
    const body = nativeOrder(emulator, NOTIFY)
    await call('POST', '/v3/pay/transactions/native', body)
    const closed = await call('POST', `/v3/pay/transactions/out-trade-no/${body.out_trade_no as string}/close`, { mchid: MERCHANT.mchid })
    expect({ status: closed.status, text: closed.text, verified: closed.verified }).toEqual({ status: 204, text: '', verified: true })

    const old = emulator.platformSerial
    const fresh = await emulator.rotatePlatformKey()
    const target = `/v3/pay/transactions/out-trade-no/${body.out_trade_no as string}?mchid=${MERCHANT.mchid}`
    expect((await call('GET', target)).headers.get('wechatpay-serial')).toBe(fresh)
    const asked = await call('GET', target, undefined, { wechatpaySerial: old })
    expect({ serial: asked.headers.get('wechatpay-serial'), verified: asked.verified }).toEqual({ serial: old, verified: true })
    const unknown = await call('GET', target, undefined, { wechatpaySerial: 'PUB_KEY_ID_0000' })
    expect({ status: unknown.status, code: unknown.json.code, verified: unknown.verified }).toEqual({ status: 500, code: 'SYSTEM_ERROR', verified: true })
  })

  it('skews Wechatpay-Timestamp with the timestampSkewSeconds knob', async () => {
    const { emulator, call, clock } = await setup({ knobs: { timestampSkewSeconds: -600 } })
    const res = await call('GET', `/v3/pay/transactions/out-trade-no/SA000001?mchid=${MERCHANT.mchid}`)
    expect(Number(res.headers.get('wechatpay-timestamp'))).toBe(Math.floor(clock.now() / 1000) - 600)
    expect(res.verified).toBe(true)
    emulator.setKnobs({ timestampSkewSeconds: 0 })
  })
})

describe('Native orders', () => {
  it('checks the body like WeChat: PARAM_ERROR naming the field', async () => {
    const { emulator, call } = await setup()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ appid: 'wx_other' }, '#/properties/appid'],
      [{ mchid: '1900000999' }, '#/properties/mchid'],
      [{ description: undefined }, '#/properties/description'],
      [{ description: '长'.repeat(43) }, '#/properties/description'],
      [{ out_trade_no: 'short' }, '#/properties/out_trade_no'],
      [{ out_trade_no: 'SA 0001 with spaces' }, '#/properties/out_trade_no'],
      [{ out_trade_no: 'x'.repeat(33) }, '#/properties/out_trade_no'],
      [{ time_expire: '2026-03-01 18:00:00' }, '#/properties/time_expire'],
      [{ time_expire: '2026-02-30T18:00:00+08:00' }, '#/properties/time_expire'],
      [{ notify_url: '/relative' }, '#/properties/notify_url'],
      [{ notify_url: 'https://merchant.example/notify?order=1' }, '#/properties/notify_url'],
      [{ amount: { total: 19.9 } }, '#/properties/amount/properties/total'],
      [{ amount: { total: '1990' } }, '#/properties/amount/properties/total'],
      [{ amount: { total: 0 } }, '#/properties/amount/properties/total'],
      [{ amount: { total: 1, currency: 'USD' } }, '#/properties/amount/properties/currency'],
      [{ amount: undefined }, '#/properties/amount'],
    ]
    for (const [change, field] of cases) {
      const res = await call('POST', '/v3/pay/transactions/native', { ...nativeOrder(emulator, NOTIFY), ...change })
      expect({ status: res.status, code: res.json.code, field: (res.json.detail as { field?: string })?.field }, JSON.stringify(change)).toEqual({ status: 400, code: 'PARAM_ERROR', field })
    }
    expect((await call('POST', '/v3/pay/transactions/native', 'not json')).json.code).toBe('PARAM_ERROR')
    // The edges that pass: 6 and 32 characters of the allowed set, 127 bytes of description.
    for (const no of ['A_-*09', 'z'.repeat(32)]) {
      expect((await call('POST', '/v3/pay/transactions/native', nativeOrder(emulator, NOTIFY, { out_trade_no: no, description: 'd'.repeat(127) }))).status).toBe(200)
    }
    expect(emulator.orders()).toHaveLength(2)
  })

  it('re-entry with the same parameters answers a fresh code_url; other parameters are OUT_TRADE_NO_USED', async () => {
    const { emulator, call } = await setup()
    const body = nativeOrder(emulator, NOTIFY, { time_expire: '2026-03-01T16:30:00+08:00', attach: 'scene=abc' })
    const first = await call('POST', '/v3/pay/transactions/native', body)
    // The same parameters in another key order are the same parameters.
    const again = await call('POST', '/v3/pay/transactions/native', Object.fromEntries(Object.entries(body).reverse()))
    expect(again.status).toBe(200)
    expect(again.json.code_url).not.toBe(first.json.code_url)
    const changed = await call('POST', '/v3/pay/transactions/native', { ...body, amount: { total: 2990, currency: 'CNY' } })
    expect({ status: changed.status, code: changed.json.code }).toEqual({ status: 403, code: 'OUT_TRADE_NO_USED' })
    const [order] = emulator.orders()
    expect(order).toMatchObject({ tradeState: 'NOTPAY', payable: true, total: 1990, codeUrl: again.json.code_url })
    expect(order!.codeUrls).toEqual([first.json.code_url, again.json.code_url])
    // Either code_url pays the one order.
    await emulator.pay({ codeUrl: first.json.code_url as string })
    const paid = await call('POST', '/v3/pay/transactions/native', body)
    expect({ status: paid.status, code: paid.json.code }).toEqual({ status: 403, code: 'ORDERPAID' })
  })

  it('query: 404 ORDER_NOT_EXIST, NOTPAY, then SUCCESS with transaction_id; by transaction id too', async () => {
    const { emulator, call, clock } = await setup()
    const body = nativeOrder(emulator, NOTIFY, { attach: 'a1' })
    const no = body.out_trade_no as string
    const query = (target = `/v3/pay/transactions/out-trade-no/${no}?mchid=${MERCHANT.mchid}`) => call('GET', target)
    expect((await query()).json).toMatchObject({ code: 'ORDER_NOT_EXIST' })
    expect((await query()).status).toBe(404)
    await call('POST', '/v3/pay/transactions/native', body)
    const open = await query()
    expect(open.json).toMatchObject({ appid: MERCHANT.appid, mchid: MERCHANT.mchid, out_trade_no: no, trade_state: 'NOTPAY', attach: 'a1', amount: { total: 1990, currency: 'CNY' } })
    expect(open.json.transaction_id).toBeUndefined()
    expect((await call('GET', `/v3/pay/transactions/out-trade-no/${no}`)).json).toMatchObject({ code: 'PARAM_ERROR', detail: { location: 'query' } })
    clock.advance(60_000)
    await emulator.pay({ outTradeNo: no, openid: 'o_payer_1' })
    const paid = await query()
    expect(paid.json).toMatchObject({
      trade_state: 'SUCCESS',
      trade_type: 'NATIVE',
      success_time: '2026-03-01T16:01:00+08:00',
      payer: { openid: 'o_payer_1' },
      amount: { total: 1990, payer_total: 1990, currency: 'CNY', payer_currency: 'CNY' },
    })
    expect(paid.json.transaction_id).toMatch(/^4200\d{24}$/)
    expect(paid.verified).toBe(true)
    const byId = await query(`/v3/pay/transactions/id/${paid.json.transaction_id as string}?mchid=${MERCHANT.mchid}`)
    expect(byId.json).toEqual(paid.json)
  })

  it('close: 204 (twice), CLOSED, unpayable, re-entry refused; ORDERPAID once paid', async () => {
    const { emulator, call } = await setup()
    const a = nativeOrder(emulator, NOTIFY)
    const b = nativeOrder(emulator, NOTIFY)
    await call('POST', '/v3/pay/transactions/native', a)
    await call('POST', '/v3/pay/transactions/native', b)
    const close = (no: unknown, body: unknown = { mchid: MERCHANT.mchid }) => call('POST', `/v3/pay/transactions/out-trade-no/${no as string}/close`, body)
    expect((await close(a.out_trade_no)).status).toBe(204)
    expect((await close(a.out_trade_no)).status).toBe(204)
    expect((await close(a.out_trade_no, {})).json.code).toBe('PARAM_ERROR')
    expect((await close('SA_UNKNOWN')).json.code).toBe('ORDER_NOT_EXIST')
    expect((await call('GET', `/v3/pay/transactions/out-trade-no/${a.out_trade_no as string}?mchid=${MERCHANT.mchid}`)).json.trade_state).toBe('CLOSED')
    await expect(emulator.pay({ outTradeNo: a.out_trade_no as string })).rejects.toMatchObject({ code: 'order_closed' })
    expect((await call('POST', '/v3/pay/transactions/native', a)).json.code).toBe('ORDER_CLOSED')
    await emulator.pay({ outTradeNo: b.out_trade_no as string })
    const paid = await close(b.out_trade_no)
    expect({ status: paid.status, code: paid.json.code }).toEqual({ status: 403, code: 'ORDERPAID' })
    await expect(emulator.pay({ outTradeNo: b.out_trade_no as string })).rejects.toMatchObject({ code: 'order_paid' })
  })

  it('past time_expire an order reads NOTPAY but cannot be paid; a code_url lives 2 hours', async () => {
    const { emulator, call, clock } = await setup()
    const body = nativeOrder(emulator, NOTIFY, { time_expire: '2026-03-01T16:05:00+08:00' })
    expect((await call('POST', '/v3/pay/transactions/native', { ...body, time_expire: '2026-03-01T15:59:59+08:00' })).json.code).toBe('PARAM_ERROR')
    await call('POST', '/v3/pay/transactions/native', body)
    clock.advance(5 * 60_000)
    expect(emulator.orders()[0]).toMatchObject({ tradeState: 'NOTPAY', payable: false })
    await expect(emulator.pay({ outTradeNo: body.out_trade_no as string })).rejects.toMatchObject({ code: 'order_expired' })
    expect((await call('POST', '/v3/pay/transactions/native', body)).json.code).toBe('INVALID_REQUEST')

    const open = nativeOrder(emulator, NOTIFY)
    const { json } = await call('POST', '/v3/pay/transactions/native', open)
    clock.advance(2 * 3600_000)
    await expect(emulator.pay({ codeUrl: json.code_url as string })).rejects.toMatchObject({ code: 'code_url_expired' })
    await expect(emulator.pay({ codeUrl: 'weixin://wxpay/bizpayurl?pr=nope' })).rejects.toMatchObject({ code: 'unknown_order' })
    // By out_trade_no (no code_url involved) it can still be paid: the order has no time_expire.
    expect((await emulator.pay({ outTradeNo: open.out_trade_no as string })).trade_state).toBe('SUCCESS')
  })

  it('logs the requests, and answers unknown paths and methods with WeChat-style errors', async () => {
    const { emulator, call } = await setup()
    expect((await call('GET', '/v3/pay/transactions/native')).status).toBe(405)
    expect((await call('GET', '/v3/nothing')).json.code).toBe('NOT_FOUND')
    expect((await call('GET', '/v3/nothing', undefined, { authorization: null })).status).toBe(401)
    expect(emulator.requests().map((r) => [r.method, r.url, r.status, r.code])).toEqual([
      ['GET', '/v3/pay/transactions/native', 405, 'METHOD_NOT_ALLOWED'],
      ['GET', '/v3/nothing', 404, 'NOT_FOUND'],
      ['GET', '/v3/nothing', 401, 'SIGN_ERROR'],
    ])
  })
})
