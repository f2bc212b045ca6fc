// A loopback proxy in front of the example server, written with node:http: it forwards every request
// (a new upstream connection each, `Connection: close`, so the server's sockets are exactly the
// requests in flight), counts them, and treats `/events` as its mode says: passed through, refused
// (404 or 502, as a proxy that does not know the stream), held silent (the upstream's headers are
// sent, its events never: a buffering proxy), held whole (not even the headers), or reset (the
// connection destroyed, as a proxy that kills long requests). It can also serve pages of its own.
import { createServer, request as upstreamRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** How the proxy treats `GET …/events`. */
export type EventsMode = 'pass' | { refuse: number } | 'silent' | 'hold' | 'reset'

/** A started proxy. */
export interface Proxy {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** The path (without query) of every request forwarded or answered, in order. */
  requests: string[]
  /** How many requests are in flight now. */
  inFlight(): number
  close(): Promise<void>
}

/** A page the proxy serves itself. */
export interface OwnPage {
  type: string
  body: string | Buffer
}

export async function startProxy(target: string, mode: EventsMode, pages: Record<string, OwnPage> = {}): Promise<Proxy> {
  const upstream = new URL(target)
  const requests: string[] = []
  let inFlight = 0
  const sockets = new Set<Socket>()

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const own = pages[path]
    if (own !== undefined) {
      res.writeHead(200, { 'content-type': own.type, 'cache-control': 'no-store' }).end(own.body)
      return
    }
    requests.push(path)
    inFlight++
    res.on('close', () => inFlight--)
    const isEvents = path.endsWith('/events')
    if (isEvents && typeof mode === 'object') {
      res.writeHead(mode.refuse, { 'content-type': 'text/html', connection: 'close' }).end(`<h1>${mode.refuse}</h1>`)
      return
    }
    // Nothing at all until the client gives up (the response is ended when it does).
    if (isEvents && mode === 'hold') return
    if (isEvents && mode === 'reset') return void req.socket.destroy()
    const out = upstreamRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host, connection: 'close' }, agent: false },
      (answer) => {
        const headers = { ...answer.headers, connection: 'close' }
        delete headers['transfer-encoding']
        res.writeHead(answer.statusCode ?? 502, headers)
        if (isEvents && mode === 'silent') {
          // Headers only: the events are held back for as long as the client waits.
          res.flushHeaders()
          answer.resume()
          return
        }
        answer.pipe(res)
      },
    )
    out.on('error', () => res.destroy())
    // The client went away: so does the upstream request (and the server sees its socket close).
    res.on('close', () => out.destroy())
    req.pipe(out)
  }

  const server: Server = createServer(handle)
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    inFlight: () => inFlight,
    close: () =>
      new Promise<void>((ok) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => ok())
      }),
  }
}
