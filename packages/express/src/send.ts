/**
 * Sending a handler's JSON answer (event streams: core's `writeEventStream`).
 *
 * @module
 */
import type { Response } from 'express'
import { responseText, type HttpResponse } from '@scanauth/core'
import { writeResponseHead } from '@scanauth/core/node'

/**
 * Sends a handler response as it is: status, headers, the JSON body (or the confirm page's HTML) and its length. Not `res.json`:
 * its ETag (a SHA-1 of every body) and freshness check are wasted on answers marked `no-store`, and
 * cost about a fifth of a pending poll's time in Express (see docs/benchmarks.md). A `HEAD` request
 * gets the headers only (Node drops the body); a response without a body (204, `HEAD` of the event
 * stream) gets none.
 */
export function sendJson(res: Response, response: HttpResponse): void {
  writeResponseHead(res, response)
  const body = responseText(response)
  if (body === undefined) return void res.end()
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(body)
}
