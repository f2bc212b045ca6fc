/**
 * Sending an event stream on Koa's Node response.
 *
 * @module
 */
import type { Context } from 'koa'
import { type HttpResponse } from '@scanauth/core'
import { writeEventStream } from '@scanauth/core/node'

/**
 * Sends an event stream (docs/behaviour.md B-wait-3) by writing to `ctx.res` with `ctx.respond =
 * false` (core's `writeEventStream`: headers at once, chunks with backpressure), and resolves when
 * the stream has ended.
 *
 * Why not `ctx.body = Readable.from(events)`: Koa 3 sends a stream body with `stream.pipeline`, which
 * reports every client that leaves before the end as an `ERR_STREAM_PREMATURE_CLOSE` on the app's
 * `error` event, logged by Koa's default handler. For an event stream that is how most connections
 * end, so every page a person closes would print a stack trace. Writing ourselves, a departure is
 * what it is: the request's signal aborts and the iteration ends (B-wait-4).
 *
 * What the other middleware sees: `ctx.status` is the stream's (200), so loggers report it; the
 * headers set on `ctx` before `next()` (CORS, security headers) go out with ours; since this
 * middleware resolves only when the stream ends, a middleware that awaits `next()` resumes then
 * (a response-time logger measures the stream's life) and finds the headers sent, which Koa's
 * `ctx.set` then ignores; `koa-compress` leaves a response whose headers are sent alone, so events
 * are never held in a compressor.
 */
export async function sendEvents(ctx: Context, response: HttpResponse, events: AsyncIterable<string>): Promise<void> {
  ctx.status = response.status
  ctx.respond = false
  await writeEventStream(ctx.res, response, events)
}
