/**
 * A live server on the store the CLI is pointed at: core's `createScanAuth` and `createHttpHandler`
 * on `node:http`, selling the testkit's plans through the testkit's payment service, and a device
 * that talks to it over real HTTP. With reminders, it offers the "remind me" link and serves
 * `{base}/m/subscribed` at its own address (`<url>/auth/m/`), as the example servers do.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createHttpHandler, createScanAuth, DEFAULT_MAX_BODY_BYTES, responseText, type ReminderOptions, type ScanAuth, type Store } from '@scanauth/core'
import { clientGoneSignal, mayWait, readRawBody, writeEventStream, writeResponseHead } from '@scanauth/core/node'
import { listen, RecordingQrProvider, TEST_PLANS, TestPaymentService } from '@scanauth/testkit'

/** A running server. */
export interface LiveServer {
  /** Its base URL; the routes are under `/auth`. */
  url: string
  /** The service behind it (the test plays WeChat with `auth.handleScan`, and WeChat Pay with `auth.applyPayment`). */
  auth: ScanAuth
  /** The payment service the server sells through. */
  payments: TestPaymentService
  /** Stops the server (the store stays open: the test closes it). */
  close(): Promise<void>
}

/** What a server may add to the testkit's set-up. */
export interface ServerOptions {
  /** Core's `reminders`, their links at the server's own `<url>/auth/m/`. */
  reminders?: Omit<ReminderOptions, 'url'>
}

/** Starts a server over `store`. */
export async function startServer(store: Store, options: ServerOptions = {}): Promise<LiveServer> {
  const payments = new TestPaymentService(Date.now)
  // The address, known once it listens (the phone pages' links are built after that).
  const listeningAt: { url?: string } = {}
  const pagesUrl = () => {
    if (listeningAt.url === undefined) throw new Error('the server is not listening yet')
    return `${listeningAt.url}/auth/m/`
  }
  const auth = createScanAuth({
    store,
    ...(options.reminders === undefined ? {} : { reminders: { ...options.reminders, url: pagesUrl } }),
    qr: new RecordingQrProvider(),
    rateLimits: false,
    payments: { provider: payments, plans: TEST_PLANS, orderTtlMinutes: 15 },
  })
  const handle = createHttpHandler(auth, { basePath: '/auth' })
  const listening = await listen((req, res) => void serve(handle, req, res))
  listeningAt.url = listening.url
  return { url: listening.url, auth, payments, close: () => listening.close() }
}

async function serve(handle: ReturnType<typeof createHttpHandler>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://server.test')
    const query = Object.fromEntries(url.searchParams)
    const reads = req.method !== 'GET' && req.method !== 'HEAD'
    const signal = mayWait(url.pathname, query) ? clientGoneSignal(res) : undefined
    const body = reads ? await readRawBody(req, DEFAULT_MAX_BODY_BYTES) : undefined
    const response = await handle({ method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body, signal })
    if (response === undefined) return void res.writeHead(404).end()
    if (signal?.aborted === true) return
    if (response.events !== undefined) return await writeEventStream(res, response, response.events)
    writeResponseHead(res, response)
    res.end(responseText(response))
  } catch (error) {
    res.writeHead(500).end(String(error))
  }
}

/** A device of the server: what a TV or a kiosk does over HTTP. */
export class Device {
  constructor(
    private readonly url: string,
    readonly deviceId: string,
  ) {}

  /** `POST /auth/create_scene`: answers the scene string. */
  async createScene(): Promise<string> {
    const answer = await this.call('POST', '/auth/create_scene', { device_id: this.deviceId })
    return answer.body.scene_str as string
  }

  /** `GET /auth/status?scene=…`, waiting up to `wait` seconds for a change when given. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire bodies are read field by field
  async status(scene: string, wait?: number, signal?: AbortSignal): Promise<any> {
    return (await this.call('GET', `/auth/status?scene=${scene}${wait === undefined ? '' : `&wait=${wait}`}`, undefined, undefined, signal)).body
  }

  /** `GET /auth/session` with the token: the answer's status and body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire bodies are read field by field
  session(token: string): Promise<{ status: number; body: any }> {
    return this.call('GET', '/auth/session', undefined, token)
  }

  /** `POST /auth/consume` with the token. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire bodies are read field by field
  consume(token: string, points = 1): Promise<{ status: number; body: any }> {
    return this.call('POST', '/auth/consume', { points }, token)
  }

  /** `POST /auth/purchase` of `plan` with the token: answers the order id. */
  async purchase(token: string, plan: string): Promise<string> {
    const answer = await this.call('POST', '/auth/purchase', { plan }, token)
    if (answer.status !== 200) throw new Error(`purchase answered ${answer.status}: ${JSON.stringify(answer.body)}`)
    return answer.body.order_id as string
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire bodies are read field by field
  private async call(method: string, path: string, body?: unknown, token?: string, signal?: AbortSignal): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {}
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    const response = await fetch(`${this.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: signal ?? null })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

/**
 * A device that keeps waiting on a pending scene with the long poll until stopped: a server in
 * use, with a connection open and a store subscription live, that writes nothing meanwhile.
 */
export function keepWaiting(device: Device, scene: string): { stop(): Promise<void>; polls(): number } {
  const controller = new AbortController()
  let polls = 0
  const loop = (async () => {
    while (!controller.signal.aborted) {
      await device.status(scene, 2, controller.signal).catch(() => undefined)
      polls++
    }
  })()
  return {
    polls: () => polls,
    async stop() {
      controller.abort()
      await loop
    },
  }
}
