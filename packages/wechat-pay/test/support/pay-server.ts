// A tiny WeChat Pay on 127.0.0.1 port 0 for the client tests: it checks the merchant signature over
// the raw request, keeps a few orders and refunds in memory, and signs every answer as WeChat Pay
// does (with the public key when the request asks for it by Wechatpay-Serial). `tamper` bends the
// next answer for the verification tests. The full emulator lives in @scanauth/wechat-emulator.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { KeyObject } from 'node:crypto'
import { merchant, MCHID, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID } from './keys'
import { parseAuthorization, verifyMerchantRequest, wechatpayHeaders } from './pay-side'

export interface RecordedRequest {
  method: string
  /** Path and query as received. */
  url: string
  headers: IncomingMessage['headers']
  body: Buffer
  signatureValid: boolean
}

/** How to bend the next signed answer. */
export interface Tamper {
  signWith?: KeyObject
  serial?: string
  /** Seconds added to the answer's timestamp. */
  timestampOffset?: number
  signature?: string
  /** Send no Wechatpay-* headers at all. */
  unsigned?: boolean
  /** Sign this body but send another. */
  sentBody?: string
  /** Wait this long before answering. */
  delayMs?: number
  /** Answer this status and body instead of the route's. */
  status?: number
  body?: unknown
}

interface Answer {
  status: number
  body?: unknown
}

export interface PayServer {
  url: string
  requests: RecordedRequest[]
  orders: Map<string, Record<string, unknown>>
  /** Bends the next answer. */
  tamper(next: Tamper): void
  /** Marks an order paid, as a payer scanning would. */
  pay(outTradeNo: string): void
  close(): Promise<void>
}

export async function startPayServer(now: () => number): Promise<PayServer> {
  const requests: RecordedRequest[] = []
  const orders = new Map<string, Record<string, unknown>>()
  const refunds = new Map<string, Record<string, unknown>>()
  let pending: Tamper | undefined

  function route(method: string, url: URL, body: Buffer): Answer {
    const json = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {}
    const path = url.pathname
    if (method === 'POST' && path === '/v3/pay/transactions/native') {
      const no = String(json.out_trade_no)
      const existing = orders.get(no)
      if (existing?.trade_state === 'SUCCESS') return { status: 403, body: { code: 'ORDERPAID', message: '该订单已支付' } }
      orders.set(no, { appid: json.appid, mchid: json.mchid, out_trade_no: no, trade_state: 'NOTPAY', trade_state_desc: '订单未支付', amount: { total: (json.amount as { total: number }).total, payer_currency: 'CNY' }, request: json })
      return { status: 200, body: { code_url: `weixin://wxpay/bizpayurl?pr=${no}` } }
    }
    if (method === 'POST' && path === '/v3/pay/transactions/jsapi') {
      const no = String(json.out_trade_no)
      orders.set(no, { appid: json.appid, mchid: json.mchid, out_trade_no: no, trade_state: 'NOTPAY', trade_state_desc: '订单未支付', amount: { total: (json.amount as { total: number }).total, payer_currency: 'CNY' }, request: json })
      return { status: 200, body: { prepay_id: `wx${no}` } }
    }
    let match = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)$/.exec(path)
    if (method === 'GET' && match?.[1]) {
      const order = orders.get(decodeURIComponent(match[1]))
      if (!order || url.searchParams.get('mchid') !== MCHID) return { status: 404, body: { code: 'ORDER_NOT_EXIST', message: '订单不存在' } }
      const { request: _request, ...wire } = order
      return { status: 200, body: wire }
    }
    match = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)\/close$/.exec(path)
    if (method === 'POST' && match?.[1]) {
      const order = orders.get(decodeURIComponent(match[1]))
      if (order?.trade_state === 'SUCCESS') return { status: 403, body: { code: 'ORDERPAID', message: '订单已支付' } }
      if (order) order.trade_state = 'CLOSED'
      return { status: 204 }
    }
    if (method === 'POST' && path === '/v3/refund/domestic/refunds') {
      const no = String(json.out_refund_no)
      const refund = refunds.get(no) ?? {
        refund_id: `50000000${refunds.size + 1}`,
        out_refund_no: no,
        transaction_id: `4200000000${json.out_trade_no}`,
        out_trade_no: json.out_trade_no,
        channel: 'ORIGINAL',
        status: 'PROCESSING',
        create_time: '2026-01-01T08:00:00+08:00',
        amount: json.amount,
      }
      refunds.set(no, refund)
      return { status: 200, body: refund }
    }
    match = /^\/v3\/refund\/domestic\/refunds\/([^/]+)$/.exec(path)
    if (method === 'GET' && match?.[1]) {
      const refund = refunds.get(decodeURIComponent(match[1]))
      return refund ? { status: 200, body: refund } : { status: 404, body: { code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' } }
    }
    return { status: 404, body: { code: 'NOT_FOUND', message: 'no such route' } }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const method = req.method ?? 'GET'
    const authorization = req.headers.authorization ?? ''
    let signatureValid = false
    try {
      signatureValid = verifyMerchantRequest(method, req.url ?? '/', body, authorization, merchant.publicKey)
    } catch {
      signatureValid = false
    }
    requests.push({ method, url: req.url ?? '/', headers: req.headers, body, signatureValid })
    const tamper = pending ?? {}
    pending = undefined
    if (tamper.delayMs) await new Promise((resolve) => setTimeout(resolve, tamper.delayMs))
    let answer: Answer
    if (!signatureValid) {
      const a = authorization ? parseAuthorization(authorization) : {}
      answer = {
        status: 401,
        body: {
          code: 'SIGN_ERROR',
          message: '签名错误',
          detail: { detail: { issue: 'sign not match' }, field: 'signature', location: 'authorization', sign_information: { method, url: req.url, truncated_sign_message: `${method}\n${req.url}\n${a.timestamp}\n${a.nonce_str}\n` } },
        },
      }
    } else if (tamper.status !== undefined) answer = { status: tamper.status, body: tamper.body }
    else answer = route(method, new URL(req.url ?? '/', 'http://pay.test'), body)

    const text = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
    const headers: Record<string, string> = { 'request-id': `REQ-${requests.length}` }
    if (text !== '') headers['content-type'] = 'application/json'
    const wantsPublicKey = req.headers['wechatpay-serial'] === PUB_KEY_ID
    if (!tamper.unsigned) {
      Object.assign(
        headers,
        wechatpayHeaders(text, {
          key: tamper.signWith ?? (wantsPublicKey ? payPublicKey.privateKey : platform.privateKey),
          serial: tamper.serial ?? (wantsPublicKey ? PUB_KEY_ID : PLATFORM_SERIAL),
          timestamp: Math.floor(now() / 1000) + (tamper.timestampOffset ?? 0),
          ...(tamper.signature === undefined ? {} : { signature: tamper.signature }),
        }),
      )
    }
    res.writeHead(answer.status, headers)
    res.end(tamper.sentBody ?? text)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500)
      res.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    orders,
    tamper: (next) => {
      pending = next
    },
    pay(outTradeNo) {
      const order = orders.get(outTradeNo)
      if (!order) throw new Error(`no order ${outTradeNo}`)
      Object.assign(order, {
        trade_state: 'SUCCESS',
        trade_state_desc: '支付成功',
        transaction_id: `4200000000${outTradeNo}`,
        success_time: '2026-01-01T08:01:00+08:00',
        amount: { ...(order.amount as object), currency: 'CNY', payer_total: (order.amount as { total: number }).total },
      })
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
