// The example Express server (examples/express) with the emulators, as the client's tests use it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { startServer } from '@scanauth/example-express'
import type { ExampleConfig, RunningServer } from '@scanauth/example-shared'

/** The server and its clock (`ahead` ms past the real time: move it to end a free trial). */
export interface Example {
  server: RunningServer
  clock: { ahead: number }
  /** The client's base URL: `<server>/auth`. */
  baseUrl: string
  /**
   * The emulated phone scans `sceneStr`. Never rejects (tests fire it and forget it, and the server
   * may close before the push returns): a failed push is kept in `scanFailures`.
   */
  scan(sceneStr: string, openid?: string): Promise<void>
  scanFailures: string[]
  /** The emulated phone pays `orderId` at the WeChat Pay emulator. */
  pay(orderId: string): Promise<void>
  /** The emulated phone scans `sceneStr` as `openid` and answers the text of the account's reply (null for none). */
  scanForReply(sceneStr: string, openid: string): Promise<string | null>
  /**
   * The scanner pays on the phone (payments.phone), as WeChat's browser and cashier would, without a
   * browser: opens `payUrl` (the reply's link) through the emulated OAuth as `openid`, posts the plans
   * page's form for `plan`, and pays the cashier's parameters at the WeChat Pay emulator's cashier as
   * that person. Answers the id of the phone's (JSAPI) order.
   */
  payOnPhone(payUrl: string, openid: string, plan: string): Promise<string>
  /**
   * What is still open at the server: its responses not yet closed plus its sockets that carried a
   * request and stay open once the idle keep-alive ones are closed. 0 means no request of the client is open.
   */
  openRequests(): Promise<number>
}

export async function startExample(overrides: Partial<ExampleConfig> = {}): Promise<Example> {
  const clock = { ahead: 0 }
  const scanFailures: string[] = []
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'memory' },
    wechat: { kind: 'emulator' },
    createScenePerMinute: false,
    reconcileEveryMs: false,
    purgeEveryMs: false,
    log: () => {},
    now: () => Date.now() + clock.ahead,
    ...overrides,
  })
  // Sockets that carried a request, and responses not yet closed, counted from the server's events.
  // (A socket that never carried a request is left out: Node 20's fetch (undici 6) opens a spare
  // connection to the origin after an aborted request, which holds no request; and
  // `getConnections` was seen to keep counting a socket that had closed.)
  const carrying = new Set<Socket>()
  let responses = 0
  server.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    if (!carrying.has(socket)) {
      carrying.add(socket)
      socket.once('close', () => carrying.delete(socket))
    }
    responses++
    res.once('close', () => responses--)
  })
  return {
    server,
    clock,
    baseUrl: `${server.url}/auth`,
    scanFailures,
    async scan(sceneStr, openid = 'o_client_test') {
      try {
        const push = await server.wiring.emulator!.scan({ sceneStr, openid })
        if (push.status !== 200) scanFailures.push(`${sceneStr}: the push answered ${push.status}`)
      } catch (error) {
        scanFailures.push(`${sceneStr}: ${String(error)}`)
      }
    },
    async pay(orderId) {
      await server.wiring.payEmulator!.pay({ outTradeNo: orderId })
    },
    async scanForReply(sceneStr, openid) {
      const push = await server.wiring.emulator!.scan({ sceneStr, openid })
      return push.reply?.Content ?? null
    },
    async payOnPhone(payUrl, openid, plan) {
      const userAgent = 'Mozilla/5.0 (Linux; Android 14) Mobile Safari/537.36 MicroMessenger/8.0.50'
      const plansUrl = await server.wiring.emulator!.openInWechat(payUrl, { openid })
      const plans = await fetch(plansUrl, { headers: { 'user-agent': userAgent } })
      const page = await plans.text()
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1]
      if (plans.status !== 200 || csrf === undefined) throw new Error(`the plans page answered ${plans.status}: ${page}`)
      const cashier = await fetch(new URL('pay', plansUrl), {
        method: 'POST',
        headers: { 'user-agent': userAgent, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, plan }).toString(), // base64url and a dot: nothing to unescape
      })
      const cashierPage = await cashier.text()
      const json = /<script type="application\/json" id="wechatpay-jsapi">([^<]*)<\/script>/.exec(cashierPage)?.[1]
      if (cashier.status !== 200 || json === undefined) throw new Error(`the cashier page answered ${cashier.status}: ${cashierPage}`)
      const parameters = JSON.parse(json) as { package: string }
      const pay = server.wiring.payEmulator!
      // The emulator's cashier, paying as the person looking at the page (its wxemu_openid cookie).
      const paid = await fetch(`${pay.url}/emulator/jsapi/pay`, { method: 'POST', headers: { cookie: `wxemu_openid=${encodeURIComponent(openid)}` }, body: json })
      const answer = (await paid.json()) as { err_msg?: string; reason?: string }
      if (answer.err_msg !== 'get_brand_wcpay_request:ok') throw new Error(`the cashier answered ${JSON.stringify(answer)}`)
      const order = pay.orders().find((o) => o.prepayId === parameters.package.slice('prepay_id='.length))
      if (order === undefined) throw new Error('the WeChat Pay emulator has no order for the cashier parameters')
      return order.outTradeNo
    },
    async openRequests() {
      server.server.closeIdleConnections()
      // Let the closes of those idle sockets arrive before counting.
      await new Promise((ok) => setTimeout(ok, 20))
      return responses + carrying.size
    },
  }
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((ok) => server.close(() => ok()))
  return port
}
