/**
 * The request body as the handlers take it, whether or not a body parser read it first.
 *
 * Beside `@koa/bodyparser`, the scanauth routes take `ctx.request.body` when it parsed JSON and read
 * the raw body otherwise. The WeChat callback needs the raw XML: it uses `ctx.request.rawBody` when a
 * parser kept it (`@koa/bodyparser` does, for the types it parses) and reads the stream itself otherwise.
 *
 * @module
 */
import type { Context } from 'koa'
import { readRawBody } from '@scanauth/core/node'

/**
 * The body. Unread stream: its raw bytes (at most `maxBytes + 1` of them). Already read by a parser:
 * its `rawBody` when `raw` is asked for (or nothing else is there), else the parsed `ctx.request.body`.
 */
export async function bodyOf(ctx: Context, maxBytes: number, raw: boolean): Promise<unknown> {
  if (!ctx.req.readableEnded) return readRawBody(ctx.req, maxBytes)
  const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: unknown }
  return raw || body === undefined ? (rawBody ?? body) : body
}
