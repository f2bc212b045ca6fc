// The WeChat Pay emulator's notifications, received by a real local HTTP server: the envelope,
// AES-256-GCM under the APIv3 key, signed headers, retries on the compressed schedule, and the
// knobs (probe signature first, duplicates, empty associated_data); plus the page and its JSON.
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatPayEmulator, WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS, WECHAT_PAY_RETRY_SCHEDULE_SECONDS, type WechatPayEmulatorOptions } from '../src/index'
import { closer } from './closer'
import { decryptResource, merchantClient, nativeOrder, notifyEndpoint, verifyWechatpay, type Received } from './pay-client'

const MERCHANT = { mchid: '1900000109', appid: 'wxd678efh567hg6787', apiV3Key: '0123456789abcdef0123456789ABCDEF' }
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatPayEmulatorOptions> = {}, answer?: Parameters<typeof notifyEndpoint>[1]) {
  const emulator = resources.add(await startWechatPayEmulator({ ...MERCHANT, ...options }))
  const endpoint = await notifyEndpoint(resources, answer)
  const call = merchantClient(emulator)
  const order = nativeOrder(emulator, endpoint.url, { attach: 'device=tv' })
  const created = await call('POST', '/v3/pay/transactions/native', order)
  expect(created.status).toBe(200)
  return { emulator, endpoint, call, order, outTradeNo: order.out_trade_no as string, codeUrl: created.json.code_url as string }
}

/** The envelope, its decrypted resource, and whether its signature verifies. */
function open(received: Received, keys: Record<string, string>, apiV3Key = MERCHANT.apiV3Key) {
  const envelope = JSON.parse(received.body) as { id: string; resource: { ciphertext: string; nonce: string; associated_data: string } } & Record<string, unknown>
  return { envelope, resource: decryptResource(apiV3Key, envelope.resource), verified: verifyWechatpay(received.headers, received.body, keys) }
}

describe('payment notifications', () => {
  it('pay → TRANSACTION.SUCCESS at notify_url: envelope, decrypts with the APIv3 key, signature verifies', async () => {
    const { emulator, endpoint, outTradeNo, call } = await setup({ payerOpenid: 'o_phone' })
    const transaction = await emulator.pay({ outTradeNo })
    await emulator.settled()
    expect(endpoint.received).toHaveLength(1)
    const [received] = endpoint.received
    expect(received!.headers['content-type']).toBe('application/json')
    expect(received!.headers['wechatpay-serial']).toBe(emulator.platformSerial)
    const { envelope, resource, verified } = open(received!, emulator.verificationKeys)
    expect(verified).toBe(true)
    expect(envelope).toMatchObject({ resource_type: 'encrypt-resource', event_type: 'TRANSACTION.SUCCESS', summary: '支付成功' })
    expect(envelope.id).toMatch(/^EV-\d+$/)
    expect(envelope.create_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/)
    expect(envelope.resource).toMatchObject({ original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', associated_data: 'transaction' })
    expect(envelope.resource.nonce).toMatch(/^[0-9A-Za-z]{12}$/)
    expect(resource).toEqual(transaction)
    expect(resource).toMatchObject({ appid: MERCHANT.appid, mchid: MERCHANT.mchid, out_trade_no: outTradeNo, trade_state: 'SUCCESS', attach: 'device=tv', payer: { openid: 'o_phone' }, amount: { total: 1990, payer_total: 1990 } })
    // The query says the same thing as the notification.
    const query = await call('GET', `/v3/pay/transactions/out-trade-no/${outTradeNo}?mchid=${MERCHANT.mchid}`)
    expect(query.json).toEqual(resource)
    expect(emulator.notifications()).toMatchObject([{ id: envelope.id, kind: 'real', state: 'accepted', attempts: [{ status: 204, error: null }], resource }])
  })

  it('retries on 500 until a 2xx, on the compressed schedule', async () => {
    const { emulator, endpoint, codeUrl } = await setup({}, (n) => (n <= 3 ? 500 : 204))
    await emulator.pay({ codeUrl })
    await emulator.settled()
    expect(endpoint.received.map((r) => JSON.parse(r.body).id)).toEqual(Array(4).fill(emulator.notifications()[0]!.id))
    // Every retry is signed afresh and still verifies.
    for (const received of endpoint.received) expect(open(received, emulator.verificationKeys).verified).toBe(true)
    const [entry] = emulator.notifications()
    expect(entry!.attempts.map((a) => a.status)).toEqual([500, 500, 500, 204])
    expect(entry!.state).toBe('accepted')
    const gaps = endpoint.received.slice(1).map((r, i) => r.at - endpoint.received[i]!.at)
    // 15 ms, 15 ms, 30 ms (timers may fire late, never early).
    expect(gaps[0]).toBeGreaterThanOrEqual(14)
    expect(gaps[2]).toBeGreaterThanOrEqual(29)
    expect(WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS).toEqual(WECHAT_PAY_RETRY_SCHEDULE_SECONDS)
    expect(WECHAT_PAY_RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0)).toBe(24 * 3600 + 4 * 60)
  })

  it('counts no answer within the timeout as a failure, and gives up after the schedule', async () => {
    const { emulator, endpoint, outTradeNo } = await setup({ notifyTimeoutMs: 100, retrySchedule: [1, 1] }, (n) => (n === 1 ? 'hang' : 503))
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    expect(endpoint.received).toHaveLength(3)
    const [entry] = emulator.notifications()
    expect(entry!.state).toBe('gave-up')
    expect(entry!.attempts.map((a) => [a.status, a.error])).toEqual([
      [null, 'no answer within 100 ms'],
      [503, 'HTTP 503'],
      [503, 'HTTP 503'],
    ])
  })

  it('probeFirst: a WECHATPAY/SIGNTEST/ signature first, then the real notification', async () => {
    const { emulator, endpoint, outTradeNo } = await setup({ knobs: { probeFirst: true } }, (_n, received) =>
      verifyWechatpay(received.headers, received.body, emulator.verificationKeys) ? 204 : 401,
    )
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    expect(endpoint.received).toHaveLength(2)
    const [probe, real] = endpoint.received
    expect(probe!.headers['wechatpay-signature']).toMatch(/^WECHATPAY\/SIGNTEST\//)
    expect(open(probe!, emulator.verificationKeys).verified).toBe(false)
    expect(open(real!, emulator.verificationKeys).verified).toBe(true)
    expect(probe!.body).toBe(real!.body)
    expect(emulator.notifications().map((n) => [n.kind, n.state, n.attempts.length])).toEqual([
      ['probe', 'refused', 1],
      ['real', 'accepted', 1],
    ])
  })

  it('records a probe the app wrongly accepted', async () => {
    const { emulator, outTradeNo } = await setup({ knobs: { probeFirst: true } })
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    expect(emulator.notifications().map((n) => [n.kind, n.state])).toEqual([
      ['probe', 'accepted'],
      ['real', 'accepted'],
    ])
  })

  it('duplicates: the same notification twice, and the same transaction under a new id', async () => {
    const { emulator, endpoint, outTradeNo } = await setup({ knobs: { duplicateSameId: true, duplicateNewId: true } })
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    expect(endpoint.received).toHaveLength(3)
    const opened = endpoint.received.map((r) => open(r, emulator.verificationKeys))
    expect(opened.every((o) => o.verified)).toBe(true)
    const [first, same, renamed] = opened
    expect(same!.envelope.id).toBe(first!.envelope.id)
    expect(endpoint.received[1]!.body).toBe(endpoint.received[0]!.body)
    expect(renamed!.envelope.id).not.toBe(first!.envelope.id)
    expect(renamed!.envelope.resource.nonce).not.toBe(first!.envelope.resource.nonce)
    expect(renamed!.resource).toEqual(first!.resource)
    expect(emulator.notifications().map((n) => n.kind)).toEqual(['real', 'duplicate-same-id', 'duplicate-new-id'])
  })

  it('emptyAssociatedData: the resource is sealed with associated_data ""', async () => {
    const { emulator, endpoint, outTradeNo } = await setup()
    emulator.setKnobs({ emptyAssociatedData: true })
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    const { envelope, resource } = open(endpoint.received[0]!, emulator.verificationKeys)
    expect(envelope.resource.associated_data).toBe('')
    expect(resource.out_trade_no).toBe(outTradeNo)
    expect(() => decryptResource(MERCHANT.apiV3Key, { ...envelope.resource, associated_data: 'transaction' })).toThrow()
  })

  it('timestampSkewSeconds shifts the notification timestamp', async () => {
    const { emulator, endpoint, outTradeNo } = await setup({ knobs: { timestampSkewSeconds: 3600 } })
    await emulator.pay({ outTradeNo })
    await emulator.settled()
    const stamp = Number(endpoint.received[0]!.headers['wechatpay-timestamp'])
    expect(stamp - Math.floor(Date.now() / 1000)).toBeGreaterThan(3500)
    expect(open(endpoint.received[0]!, emulator.verificationKeys).verified).toBe(true)
  })

  it('generates a 32-character APIv3 key when none is given', async () => {
    const emulator = resources.add(await startWechatPayEmulator({ mchid: MERCHANT.mchid, appid: MERCHANT.appid }))
    const endpoint = await notifyEndpoint(resources)
    expect(emulator.apiV3Key).toMatch(/^[0-9A-Za-z]{32}$/)
    const order = nativeOrder(emulator, endpoint.url)
    await merchantClient(emulator)('POST', '/v3/pay/transactions/native', order)
    await emulator.pay({ outTradeNo: order.out_trade_no as string })
    await emulator.settled()
    expect(open(endpoint.received[0]!, emulator.verificationKeys, emulator.apiV3Key).resource.out_trade_no).toBe(order.out_trade_no)
  })
})

describe('page and JSON endpoints', () => {
  it('serves the page, lists orders and notifications, pays and sets knobs over HTTP', async () => {
    const { emulator, endpoint, outTradeNo, codeUrl } = await setup()
    const page = await fetch(`${emulator.url}/`)
    expect(page.headers.get('content-type')).toMatch(/text\/html/)
    expect(await page.text()).toContain('WeChat Pay emulator')
    const focused = await (await fetch(`${emulator.url}/pay?code_url=${encodeURIComponent(codeUrl)}`)).text()
    expect(focused).toContain(`data-code-url="${codeUrl}"`)
    const orders = (await (await fetch(`${emulator.url}/emulator/orders`)).json()) as Array<Record<string, unknown>>
    expect(orders).toMatchObject([{ outTradeNo, payable: true, tradeState: 'NOTPAY' }])

    const post = (path: string, body: unknown) => fetch(`${emulator.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
    const knobs = await post('/emulator/knobs', { probeFirst: true })
    expect(await knobs.json()).toMatchObject({ probeFirst: true, duplicateSameId: false })
    expect((await post('/emulator/knobs', { nope: 1 })).status).toBe(400)
    expect(emulator.knobs().probeFirst).toBe(true)
    emulator.setKnobs({ probeFirst: false })

    const paid = await post('/emulator/pay', { code_url: codeUrl, openid: 'o_clicker' })
    expect(paid.status).toBe(200)
    expect(await paid.json()).toMatchObject({ trade_state: 'SUCCESS', payer: { openid: 'o_clicker' } })
    const again = await post('/emulator/pay', { out_trade_no: outTradeNo })
    expect({ status: again.status, body: await again.json() }).toMatchObject({ status: 409, body: { code: 'order_paid' } })
    expect((await post('/emulator/pay', {})).status).toBe(400)
    await emulator.settled()
    const log = (await (await fetch(`${emulator.url}/emulator/notifications`)).json()) as Array<Record<string, unknown>>
    expect(log).toMatchObject([{ eventType: 'TRANSACTION.SUCCESS', outTradeNo, state: 'accepted', url: endpoint.url }])
    expect(await (await fetch(`${emulator.url}/emulator/keys`)).json()).toEqual(emulator.verificationKeys)
    expect((await fetch(`${emulator.url}/nope`)).status).toBe(404)
  })
})
