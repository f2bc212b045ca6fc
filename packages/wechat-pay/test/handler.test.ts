// createWechatPayNotificationHandler with real crypto and a recording `auth`: what reaches core,
// and the answer WeChat Pay gets for each case (2xx only once applied).
import { describe, expect, it } from 'vitest'
import { createVerificationKeySet, createWechatPayNotificationHandler, type VerificationKeySet, type WechatPayNotificationHandlerOptions, type WechatPayRejection } from '../src/index'
import { API_V3_KEY, APPID, MCHID, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID, stranger } from './support/keys'
import { NOW, paidNotification, RecordingAuth, refundNotification } from './support/notify'

function setup(overrides: Partial<WechatPayNotificationHandlerOptions> = {}) {
  const auth = new RecordingAuth()
  const rejected: WechatPayRejection[] = []
  const errors: unknown[] = []
  const handler = createWechatPayNotificationHandler({
    auth,
    verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem },
    apiV3Key: API_V3_KEY,
    now: () => NOW,
    onRejected: (r) => {
      rejected.push(r)
    },
    onError: (e) => {
      errors.push(e)
    },
    ...overrides,
  })
  return { auth, handler, rejected, errors }
}

const FAIL = (status: number) => expect.objectContaining({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: expect.stringMatching(/^\{"code":"FAIL","message":"[^"]+"\}$/) })

describe('payment notifications', () => {
  it('apply TRANSACTION.SUCCESS through auth.applyPayment and answer 204', async () => {
    const { auth, handler, errors } = setup()
    const answer = await handler(paidNotification())
    expect(answer).toEqual({ status: 204, headers: {}, body: '' })
    expect(auth.payments).toEqual([
      {
        mchid: MCHID,
        appid: APPID,
        outTradeNo: 'SA2026000001',
        transactionId: '4200000000202601010001',
        tradeState: 'SUCCESS',
        amount: { total: 1990, currency: 'CNY' },
        successTime: '2026-01-01T08:01:00+08:00',
      },
    ])
    expect(errors).toEqual([])
  })

  it('take headers as Node gives them (lower case, arrays of one) and the body as text', async () => {
    const { auth, handler } = setup()
    const sent = paidNotification({ publicKeyMode: true })
    const headers = Object.fromEntries(Object.entries(sent.headers).map(([k, v]) => [k.toLowerCase(), [v]]))
    expect((await handler({ headers, body: sent.body.toString('utf8') })).status).toBe(204)
    expect(auth.payments).toHaveLength(1)
  })

  it('answer 204 for a rejected report and tell onRejected', async () => {
    const { auth, handler, rejected } = setup()
    auth.paymentOutcome = { result: 'rejected', orderId: 'SA2026000001', reason: 'amount_mismatch' }
    expect((await handler(paidNotification())).status).toBe(204)
    expect(rejected).toEqual([expect.objectContaining({ kind: 'payment', outcome: auth.paymentOutcome, transaction: auth.payments[0] })])
  })

  it('still answer 204 when onRejected throws', async () => {
    const { auth, handler } = setup({ onRejected: () => Promise.reject(new Error('pager down')) })
    auth.paymentOutcome = { result: 'rejected', orderId: 'SA2026000001', reason: 'merchant_mismatch' }
    expect((await handler(paidNotification())).status).toBe(204)
  })

  it('answer 500 when auth throws (the store is down), so WeChat Pay retries', async () => {
    const { auth, handler, errors } = setup()
    auth.paymentOutcome = new Error('store down')
    expect(await handler(paidNotification())).toEqual(FAIL(500))
    expect(errors).toEqual([auth.paymentOutcome])
  })
})

describe('refund notifications', () => {
  it.each(['REFUND.SUCCESS', 'REFUND.ABNORMAL', 'REFUND.CLOSED'])('apply %s through auth.applyRefund', async (eventType) => {
    const { auth, handler } = setup()
    const status = eventType.slice('REFUND.'.length)
    expect((await handler(refundNotification(eventType, { refund_status: status }))).status).toBe(204)
    expect(auth.refunds).toEqual([
      {
        mchid: MCHID,
        outTradeNo: 'SA2026000001',
        transactionId: '4200000000202601010001',
        outRefundNo: 'R2026000001',
        refundId: '50000000382019052709732678859',
        refundStatus: status,
        amount: { refund: 1990, total: 1990 },
      },
    ])
    expect(auth.payments).toEqual([])
  })

  it('tell onRejected of a rejected refund and answer 204', async () => {
    const { auth, handler, rejected } = setup()
    auth.refundOutcome = { result: 'rejected', orderId: 'SA2026000001', reason: 'unknown_order' }
    expect((await handler(refundNotification())).status).toBe(204)
    expect(rejected[0]).toMatchObject({ kind: 'refund', refund: { outRefundNo: 'R2026000001' } })
  })
})

describe('refusals', () => {
  it('answer 401 for forged, stale, probe and unknown-key notifications, reaching nothing', async () => {
    const { auth, handler, errors } = setup()
    const sent = paidNotification()
    const forged = { headers: sent.headers, body: Buffer.from(sent.body.toString('utf8').replace('"EV-', '"EX-')) }
    const cases = [
      forged,
      paidNotification({ sign: { key: stranger.privateKey } }),
      paidNotification({ sign: { timestamp: NOW / 1000 - 301 } }),
      paidNotification({ sign: { signature: 'WECHATPAY/SIGNTEST/abcdefgh' } }),
      paidNotification({ sign: { serial: 'ABCDEF' } }),
      { headers: {}, body: sent.body },
    ]
    for (const request of cases) expect(await handler(request)).toEqual(FAIL(401))
    expect(auth.payments).toEqual([])
    expect(errors).toHaveLength(cases.length)
  })

  it('answer 500 for a wrong APIv3 key (our misconfiguration), 400 for an unreadable resource', async () => {
    const wrongKey = setup({ apiV3Key: 'scanauthTestApiV3Key000000000002' })
    expect(await wrongKey.handler(paidNotification())).toEqual(FAIL(500))
    expect(wrongKey.auth.payments).toEqual([])
    const { auth, handler } = setup()
    expect(await handler(paidNotification({ resource: { out_trade_no: 'SA2026000001', trade_state: 'SUCCESS' } }))).toEqual(FAIL(400))
    expect(auth.payments).toEqual([])
  })

  it('answer 204 to an authentic event type it does not handle, applying nothing', async () => {
    const { auth, handler } = setup()
    expect((await handler(paidNotification({ eventType: 'TRANSACTION.CLOSED' }))).status).toBe(204)
    expect([...auth.payments, ...auth.refunds]).toEqual([])
  })

  it('check their options when created', () => {
    expect(() => setup({ apiV3Key: 'short' })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ verificationKeys: {} })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ auth: {} as never })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ verificationKeys: undefined as never })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ verificationKeys: { [PLATFORM_SERIAL]: 'not a key' } })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ apiV3Key: 'é'.repeat(32) })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ maxSkewSeconds: -1 })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ maxSkewSeconds: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
    expect(() => setup({ telemetry: 'yes' as never })).toThrow(expect.objectContaining({ code: 'invalid_options' }))
  })

  it('check their options only when created, never again per notification', async () => {
    // A key set that counts how often it is looked at as an option (`serials`, read by the check
    // that tells a parsed set from a plain map) and how often it is asked for a key.
    const parsed = createVerificationKeySet({ [PLATFORM_SERIAL]: platform.publicPem })
    const reads = { serials: 0, get: 0 }
    const keys: VerificationKeySet = {
      get serials() {
        reads.serials++
        return parsed.serials
      },
      get: (serial) => {
        reads.get++
        return parsed.get(serial)
      },
    }
    const { auth, handler } = setup({ verificationKeys: keys })
    expect(reads).toEqual({ serials: 1, get: 0 })
    for (let i = 0; i < 3; i++) expect((await handler(paidNotification())).status).toBe(204)
    expect(auth.payments).toHaveLength(3)
    expect(reads).toEqual({ serials: 1, get: 3 })
  })
})
