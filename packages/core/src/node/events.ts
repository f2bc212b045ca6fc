/**
 * For the Node framework middlewares (Express, Koa, a bare `node:http` server): writing a handler
 * response's status and headers, and an event stream with backpressure, on a Node `ServerResponse`.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'
import type { HttpResponse } from '../http/types'

/**
 * Sends an event stream (docs/behaviour.md B-wait-3): the headers at once, then each chunk as the
 * iteration yields it, waiting for `drain` when the socket's buffer is full, and the end of the
 * response when the iteration ends. When the client goes away the request's signal aborts, which
 * ends the iteration (B-wait-4); leaving the loop early (`break`) also returns the iterator.
 *
 * Works on any Node `ServerResponse` (Express's `res`, Koa's `ctx.res`). Behind the `compression`
 * middleware, `res.flush()` pushes each event through the compressor instead of letting it wait for
 * a full block.
 */
export async function writeEventStream(res: ServerResponse, response: HttpResponse, events: AsyncIterable<string>): Promise<void> {
  writeResponseHead(res, response)
  // No content-length: Node sends the body chunked. Flushed now, so the client sees the stream open
  // before the first event, and a proxy that holds headers back gets them.
  res.flushHeaders()
  const flush = (res as { flush?: () => void }).flush
  for await (const chunk of events) {
    if (res.destroyed) break
    if (!res.write(chunk)) await drained(res)
    flush?.call(res)
  }
  if (!res.destroyed) res.end()
}

/** Sets a handler response's status and headers on `res` (nothing is sent yet). */
export function writeResponseHead(res: ServerResponse, response: HttpResponse): void {
  res.statusCode = response.status
  const headers = response.headers ?? {}
  for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string)
}

/** Resolves once the socket can take more (`drain`), or once it is gone (`close`): a write never waits forever. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}
