/**
 * Sending the fuzz stream over loopback and judging each answer: `node:http` (it lets through
 * the raw bytes fetch would refuse to send), keep-alive connections, bounded concurrency, and a
 * timeout on every request so that a hung one is reported rather than waited for.
 */
import { Agent, request as httpRequest } from 'node:http'
import { AUTH_ROUTES, CALLBACK_PATH, CONFIRM_PATH, NOTIFY_PATH, type FuzzRequest } from './fuzz-requests'

/** What came back for one request (or `error` when nothing did). */
export interface FuzzAnswer {
  status: number
  contentType: string
  body: string
}

/**
 * Sends `request` to `base` (`http://127.0.0.1:<port>`); rejects on a timeout or a connection lost
 * before the answer. A kept-alive connection the server closed just as it was reused (after an
 * answer that ended the connection) is tried once more on a fresh one, as browsers and Node's own
 * documentation of `request.reusedSocket` do: that is the client's race, not a missing answer.
 */
export function send(agent: Agent | false, base: string, request: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...request.headers }
    // Framed either way: without a length, Node's client sends a GET, DELETE, OPTIONS or TRACE body
    // unframed, and the server would read it as the next request.
    if (request.body !== undefined) {
      if (request.chunked) headers['transfer-encoding'] = 'chunked'
      else headers['content-length'] = request.body.length
    }
    const req = httpRequest({ agent, host: hostname, port, method: request.method, path: request.path, headers, timeout: timeoutMs })
    let answered = false
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', (error: Error & { code?: string }) => {
      // A server may close the connection once it has answered (a body too large, left unread).
      if (answered) return
      if (req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) resolve(send(false, base, request, timeoutMs))
      else reject(error)
    })
    req.on('response', (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }))
    })
    if (request.body !== undefined && request.chunked) {
      const half = Math.floor(request.body.length / 2)
      req.write(request.body.subarray(0, half))
      req.end(request.body.subarray(half))
    } else {
      req.end(request.body)
    }
  })
}

/** The route part of a request path: before the query, as sent. */
const routeOf = (path: string) => path.split('?')[0] as string

/**
 * What is wrong with `answer` to `request`, or null. Always: a 2xx or 4xx status (never a 5xx, nor a
 * 1xx/3xx), and a JSON content type means a body that parses. On scanauth's routes an error is JSON
 * `{detail}` (on the confirm page an HTML page); on the WeChat callback every answer is WeChat's text format (plain text, or XML); on
 * WeChat Pay's notify_url an error is WeChat Pay's JSON `{"code":"FAIL","message"}`, and nothing
 * unsigned is ever answered 2xx.
 */
export function problemWith(request: FuzzRequest, answer: FuzzAnswer): string | null {
  if (!(answer.status >= 200 && answer.status < 300) && !(answer.status >= 400 && answer.status < 500)) return `status ${answer.status}`
  const hasBody = request.method !== 'HEAD' && answer.body !== ''
  if (hasBody && /\bjson\b/i.test(answer.contentType)) {
    try {
      JSON.parse(answer.body)
    } catch {
      return `a ${answer.contentType} body that is not JSON`
    }
  }
  const route = routeOf(request.path)
  // The app's global body parser (express.json(); @koa/bodyparser, JSON and forms) reads such a body
  // before any route does, the callback's too, and answers what it cannot parse in the app's format.
  const appParsed = /json|x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '')
  if ((AUTH_ROUTES as readonly string[]).includes(route) && answer.status >= 400 && hasBody) {
    if (!/^application\/json\b/.test(answer.contentType)) return `an error of type ${answer.contentType || 'none'} on ${route}, not JSON`
    const detail = (JSON.parse(answer.body) as { detail?: unknown } | null)?.detail
    if (typeof detail !== 'string' || detail === '') return `an error on ${route} without {detail}`
  }
  // The confirm page answers a phone's browser: every refusal is a page (B-confirm-12), unless the
  // app's own JSON parser refused the body before the route ran.
  if (route === CONFIRM_PATH && answer.status >= 400 && answer.status !== 405 && hasBody && !/^text\/html\b/.test(answer.contentType)) {
    const appError = appParsed && /^application\/json\b/.test(answer.contentType) && /"detail":/.test(answer.body)
    if (!appError) return `an error of type ${answer.contentType || 'none'} on ${route}, not an HTML page`
  }
  if (route === CALLBACK_PATH && hasBody && !/^(text\/plain|text\/xml|application\/xml)\b/.test(answer.contentType)) {
    const appError = appParsed && answer.status >= 400 && /^application\/json\b/.test(answer.contentType) && /"detail":/.test(answer.body)
    if (!appError) return `an answer of type ${answer.contentType || 'none'} on the callback, not WeChat's text format`
  }
  if (route === NOTIFY_PATH) {
    if (answer.status < 300) return `an unsigned notification answered ${answer.status}`
    if (!hasBody) return null
    if (!/^application\/json\b/.test(answer.contentType)) return `an error of type ${answer.contentType || 'none'} on ${route}, not JSON`
    const fail = JSON.parse(answer.body) as { code?: unknown; message?: unknown } | null
    if (fail?.code !== 'FAIL' || typeof fail.message !== 'string') return `an error on ${route} that is not {"code":"FAIL","message"}`
  }
  return null
}

/** A request that went wrong, for the report. */
export interface FuzzFailure {
  index: number
  request: string
  problem: string
}

/** Runs `count` requests from `next` against `base`, `concurrency` at a time; returns what went wrong and the statuses seen. */
export async function runStream(options: {
  base: string
  count: number
  concurrency: number
  timeoutMs: number
  next: () => FuzzRequest
  /** Judge each answer (the fuzz test); the memory test only needs them sent. */
  judge?: boolean
}): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency })
  const failures: FuzzFailure[] = []
  const statuses = new Map<number, number>()
  let sent = 0
  const worker = async () => {
    while (sent < options.count) {
      const index = sent++
      const request = options.next()
      try {
        const answer = await send(agent, options.base, request, options.timeoutMs)
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        const problem = options.judge === false ? null : problemWith(request, answer)
        if (problem !== null) failures.push({ index, request: describe(request), problem: `${problem}: ${answer.body.slice(0, 200)}` })
      } catch (error) {
        failures.push({ index, request: describe(request), problem: error instanceof Error ? error.message : String(error) })
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker))
  } finally {
    agent.destroy()
  }
  return { failures, statuses }
}

/** A request in one line: method, path (cut), the headers, and the body's size and start. */
export function describe(request: FuzzRequest): string {
  const body = request.body === undefined ? 'no body' : `${request.body.length} bytes ${JSON.stringify(request.body.subarray(0, 60).toString('latin1'))}`
  return `${request.method} ${request.path.slice(0, 120)} ${JSON.stringify(request.headers).slice(0, 200)} ${body}`
}
