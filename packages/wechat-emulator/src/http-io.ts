/**
 * Reading a request body and writing an answer, for both emulators' servers (the Official Account's
 * and WeChat Pay's): the same limits and headers on each.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Bodies larger than this are refused; real API bodies are tiny. */
const MAX_BODY_BYTES = 1024 * 1024

/** The whole body, or a rejection once it grows past 1 MiB (the request is then destroyed). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body is too large'))
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** Sends `body` with its length, never cached; `headers` add to (or replace) those. */
export function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers })
  res.end(body)
}

/** Sends `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), headers)
}
