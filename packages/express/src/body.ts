/**
 * The request body as the handlers take it, whether or not a body parser read it first.
 *
 * @module
 */
import type { Request } from 'express'
import { readRawBody } from '@scanauth/core/node'

/**
 * The body: the raw bytes of an unread stream (at most `maxBytes + 1` of them), or what a parser that
 * read it left: its `rawBody` when it kept one, else the parsed `req.body`.
 */
export async function bodyOf(req: Request, maxBytes: number): Promise<unknown> {
  if (!req.readableEnded) return readRawBody(req, maxBytes)
  return (req as { rawBody?: unknown }).rawBody ?? req.body
}
