// The WeChat Pay emulator's refunds over real sockets: idempotent by out_refund_no, never more
// than the total, PROCESSING then SUCCESS, and the REFUND.SUCCESS notification.
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatPayEmulator, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { decryptResource, merchantClient, nativeOrder, notifyEndpoint, verifyWechatpay } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787' }
const resources = closer()
afterEach(() => resources.closeAll())

/** A paid order of 1990 fen, its payment notification already delivered. */
async function paidOrder(options: Partial<WechatPayEmulatorOptions> = {}) {
  const emulator = resources.add(await startWechatPayEmulator({ ...MERCHANT, refundDelayMs: 0, ...options }))
  const endpoint = await notifyEndpoint(resources)
  const call = merchantClient(emulator)
  const order = nativeOrder(emulator, endpoint.url)
  await call('POST', '/v3/pay/transactions/native', order)
  const transaction = await emulator.pay({ outTradeNo: order.out_trade_no as string })
  await emulator.settled()
  endpoint.received.length = 0
  const refund = (outRefundNo: string, refund: number, extra: Record<string, unknown> = {}) =>
    call('POST', '/v3/refund/domestic/refunds', { out_trade_no: order.out_trade_no, out_refund_no: outRefundNo, reason: 'test', amount: { refund, total: 1990, currency: 'CNY' }, ...extra })
  return { emulator, endpoint, call, outTradeNo: order.out_trade_no as string, transaction, refund }
}

describe('refunds', () => {
  it('the same out_refund_no refunds once; REFUND.SUCCESS goes to the order notify_url', async () => {
    const { emulator, endpoint, call, refund, outTradeNo, transaction } = await paidOrder()
    const first = await refund('RF0001', 500)
    expect(first.status).toBe(200)
    expect(first.verified).toBe(true)
    expect(first.json).toMatchObject({ out_refund_no: 'RF0001', out_trade_no: outTradeNo, transaction_id: transaction.transaction_id, status: 'SUCCESS', amount: { refund: 500, total: 1990, currency: 'CNY' } })
    expect(first.json.refund_id).toMatch(/^50\d{27}$/)
    const again = await refund('RF0001', 500)
    expect(again.json).toEqual(first.json)
    expect((await refund('RF0001', 600)).json.code).toBe('INVALID_REQUEST')
    expect(emulator.orders()[0]).toMatchObject({ refunded: 500, tradeState: 'REFUND' })
    expect((await call('GET', `/v3/pay/transactions/out-trade-no/${outTradeNo}?mchid=${MERCHANT.mchid}`)).json.trade_state).toBe('REFUND')
    expect((await call('GET', '/v3/refund/domestic/refunds/RF0001')).json).toEqual(first.json)
    expect((await call('GET', '/v3/refund/domestic/refunds/RF_NONE')).json.code).toBe('RESOURCE_NOT_EXISTS')

    await emulator.settled()
    expect(endpoint.received).toHaveLength(1)
    const [received] = endpoint.received
    expect(verifyWechatpay(received!.headers, received!.body, emulator.verificationKeys)).toBe(true)
    const envelope = JSON.parse(received!.body) as { event_type: string; resource: { original_type: string; associated_data: string; ciphertext: string; nonce: string } }
    expect(envelope).toMatchObject({ event_type: 'REFUND.SUCCESS', resource: { original_type: 'refund', associated_data: 'refund' } })
    expect(decryptResource(emulator.apiV3Key, envelope.resource)).toMatchObject({
      mchid: MERCHANT.mchid,
      out_trade_no: outTradeNo,
      out_refund_no: 'RF0001',
      refund_id: first.json.refund_id,
      refund_status: 'SUCCESS',
      amount: { total: 1990, refund: 500, payer_total: 1990, payer_refund: 500 },
    })
  })

  it('refuses more than the total in sum, unpaid or unknown orders, and a wrong total', async () => {
    const { emulator, call, refund } = await paidOrder()
    expect((await refund('RF1', 1000)).status).toBe(200)
    const over = await refund('RF2', 991)
    expect({ status: over.status, code: over.json.code }).toEqual({ status: 400, code: 'INVALID_REQUEST' })
    expect((await refund('RF3', 990)).json.status).toBe('SUCCESS')
    expect((await refund('RF4', 1)).json.code).toBe('INVALID_REQUEST')
    expect((await refund('RF5', 1, { amount: { refund: 1, total: 1000 } })).json.code).toBe('INVALID_REQUEST')
    expect((await refund('RF6', 1, { out_trade_no: 'SA_UNKNOWN' })).json.code).toBe('RESOURCE_NOT_EXISTS')
    expect((await refund('bad refund no', 1)).json.code).toBe('PARAM_ERROR')
    expect((await refund('RF7', 0)).json.code).toBe('PARAM_ERROR')
    const unpaid = nativeOrder(emulator, 'http://127.0.0.1:9/n')
    await call('POST', '/v3/pay/transactions/native', unpaid)
    expect((await refund('RF8', 1, { out_trade_no: unpaid.out_trade_no })).json.code).toBe('INVALID_REQUEST')
    expect(emulator.orders()[0]!.refunded).toBe(1990)
  })

  it('by transaction_id, to its own notify_url, PROCESSING then SUCCESS after refundDelayMs', async () => {
    const { emulator, endpoint, call, transaction, outTradeNo } = await paidOrder({ refundDelayMs: 50 })
    const own = await notifyEndpoint(resources)
    const res = await call('POST', '/v3/refund/domestic/refunds', { transaction_id: transaction.transaction_id, out_refund_no: 'RF-late', notify_url: own.url, amount: { refund: 1990, total: 1990, currency: 'CNY' } })
    expect(res.json).toMatchObject({ status: 'PROCESSING', out_trade_no: outTradeNo })
    expect(res.json.success_time).toBeUndefined()
    expect(emulator.refunds()).toMatchObject([{ outRefundNo: 'RF-late', status: 'PROCESSING' }])
    await emulator.settled()
    expect((await call('GET', '/v3/refund/domestic/refunds/RF-late')).json).toMatchObject({ status: 'SUCCESS', success_time: expect.stringMatching(/\+08:00$/) })
    expect(endpoint.received).toHaveLength(0)
    expect(own.received).toHaveLength(1)
    expect(emulator.notifications().at(-1)).toMatchObject({ eventType: 'REFUND.SUCCESS', outRefundNo: 'RF-late', url: own.url, state: 'accepted' })
  })
})
