// A scanauth server for the opt-in modes (`confirm: 'link'`, `requirePollSecret`): core's service
// (memory store) and its framework-neutral HTTP handler on a bare node:http server over loopback.
// The example server does not offer these modes. The phone is driven through core: the scan
// (`handleScan`), then the confirm page's two steps (`openConfirmation`, `decideConfirmation`) with a
// test double of WeChat's web OAuth endpoint that answers the scanner's openid for the codes it issued.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createHttpHandler, createScanAuth, MemoryStore, type ConfirmationDecisionResult, type HttpHandler, type PaymentProvider, type ProviderOrderRequest, type ScanAuth, type ScanAuthOptions, type WebOAuthProvider } from '@scanauth/core'
import { clientGoneSignal, mayWait, readRawBody, writeEventStream, writeResponseHead } from '@scanauth/core/node'

/** The one plan on sale: 30 days for ¥19.90. */
export const PLAN = { id: 'month', description: '30 days', amountFen: 1990, grant: { type: 'time' as const, days: 30 } }

const MERCHANT = { mchid: '1900000109', appid: 'wx0000000000test' }

/** WeChat's web OAuth as core asks it: the codes it issued, each answering the openid it was issued for, once. */
class FakeWebOAuth implements WebOAuthProvider {
  private readonly codes = new Map<string, string>()
  private issued = 0

  authorizeUrl({ redirectUri, state }: { redirectUri: string; state: string }): string {
    const query = new URLSearchParams({ appid: MERCHANT.appid, redirect_uri: redirectUri, response_type: 'code', scope: 'snsapi_base', state })
    return `https://open.weixin.qq.com/connect/oauth2/authorize?${query}#wechat_redirect`
  }

  async exchangeCode(code: string): Promise<string | null> {
    const openid = this.codes.get(code)
    this.codes.delete(code)
    return openid ?? null
  }

  /** The code WeChat would hand the phone of `openid` on its way back to the confirm page. */
  issue(openid: string): string {
    const code = `code_${++this.issued}`
    this.codes.set(code, openid)
    return code
  }
}

/** A payment service that opens every order and is paid when the test says so. */
class FakePayments implements PaymentProvider {
  readonly merchant = MERCHANT
  readonly orders = new Map<string, ProviderOrderRequest>()

  async createNativeOrder(order: ProviderOrderRequest): Promise<{ codeUrl: string }> {
    this.orders.set(order.outTradeNo, order)
    return { codeUrl: `weixin://wxpay/bizpayurl?pr=${order.outTradeNo}` }
  }

  async queryOrder(): Promise<null> {
    return null
  }

  async closeOrder(): Promise<'closed'> {
    return 'closed'
  }
}

/** A started server. */
export interface ConfirmServer {
  auth: ScanAuth
  /** The client's base URL: `<server>/auth`. */
  baseUrl: string
  /** Moves the server's clock (ms ahead of the real time). */
  clock: { ahead: number }
  /** The phone of `openid` scans `sceneStr`: answers the confirm ticket (throws unless the scene is now `scanned`). */
  scan(sceneStr: string, openid: string): Promise<string>
  /** The scanner opens the confirm link (through WeChat OAuth) and presses Confirm or Deny. */
  decide(ticket: string, openid: string, decision: 'confirm' | 'deny'): Promise<ConfirmationDecisionResult>
  /** The payer pays order `orderId`. */
  pay(orderId: string): Promise<void>
  close(): Promise<void>
}

export async function startConfirmServer(options: Pick<ScanAuthOptions, 'confirm' | 'requirePollSecret'>): Promise<ConfirmServer> {
  const clock = { ahead: 0 }
  const oauth = new FakeWebOAuth()
  const payments = new FakePayments()
  // Bound once the port is known (the confirm page's address names it).
  const bound: { handle?: HttpHandler } = {}
  const sockets = new Set<Socket>()

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
      else res.destroy()
    })
  })
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const handle = bound.handle
    if (handle === undefined || !handle.owns(url.pathname)) return void res.writeHead(404).end()
    const signal = mayWait(url.pathname, Object.fromEntries(url.searchParams)) ? clientGoneSignal(res) : undefined
    const reads = req.method !== 'GET' && req.method !== 'HEAD'
    const response = await handle({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: reads ? await readRawBody(req, 16 * 1024) : undefined,
      signal,
      clientAddress: req.socket.remoteAddress,
    })
    if (response === undefined) return void res.writeHead(404).end()
    if (signal?.aborted === true) return
    if (response.events !== undefined) return writeEventStream(res, response, response.events)
    writeResponseHead(res, response)
    res.end(response.body === undefined ? undefined : JSON.stringify(response.body))
  }
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const auth = createScanAuth({
    store: new MemoryStore(),
    qr: { createQr: async ({ sceneStr }) => ({ url: `https://qr.example.test/${sceneStr}`, content: `https://w.example.test/q/${sceneStr}` }) },
    now: () => Date.now() + clock.ahead,
    freeTrialDays: 1,
    rateLimits: { perDevice: false, perAddress: false },
    payments: { provider: payments, plans: [PLAN] },
    confirmation: { url: `${url}/auth/confirm`, oauth },
    ...options,
  })
  bound.handle = createHttpHandler(auth, { basePath: '/auth' })

  return {
    auth,
    baseUrl: `${url}/auth`,
    clock,
    async scan(sceneStr, openid) {
      const scanned = await auth.handleScan({ sceneStr, openid })
      if (scanned.result !== 'scanned') throw new Error(`the scan of ${sceneStr} answered ${scanned.result}`)
      return scanned.ticket
    },
    async decide(ticket, openid, decision) {
      // First visit: the page sends the phone to WeChat OAuth, which comes back with a code and the state.
      const first = await auth.openConfirmation({ ticket })
      if (first.step !== 'authorize') throw new Error(`the confirm page answered ${first.step} on the first visit`)
      const state = new URL(first.location).searchParams.get('state') ?? undefined
      const page = await auth.openConfirmation({ ticket, code: oauth.issue(openid), state })
      if (page.step !== 'decide') throw new Error(`the confirm page answered ${page.step} after OAuth`)
      return auth.decideConfirmation({ ticket, csrf: page.csrf, decision })
    },
    async pay(orderId) {
      const order = payments.orders.get(orderId)
      if (order === undefined) throw new Error(`no order ${orderId}`)
      const outcome = await auth.applyPayment({
        ...MERCHANT,
        outTradeNo: orderId,
        transactionId: `tx_${orderId}`,
        tradeState: 'SUCCESS',
        amount: { total: order.amountFen, currency: 'CNY' },
        successTime: new Date(Date.now() + clock.ahead).toISOString(),
      })
      if (outcome.result !== 'granted') throw new Error(`the payment of ${orderId} was ${outcome.result}`)
    },
    close: () =>
      new Promise<void>((ok) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => ok())
      }),
  }
}
