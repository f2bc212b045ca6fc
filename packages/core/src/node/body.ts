/**
 * Reading a request body from a Node stream, for the framework middlewares (Express, Koa, a bare
 * `node:http` server) that hand raw bodies to `createHttpHandler` or to the WeChat callback.
 *
 * @module
 */

/**
 * Reads a request stream to its end and returns at most `maxBytes + 1` bytes of it: enough for the
 * caller to tell "too large" (`length > maxBytes`) while the rest is drained, so the client still
 * receives the reply.
 */
export async function readRawBody(stream: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let kept = 0
  for await (const chunk of stream) {
    if (kept > maxBytes) continue
    chunks.push(Buffer.from(chunk))
    kept += chunk.length
  }
  return Buffer.concat(chunks).subarray(0, maxBytes + 1)
}

/** A parsed query object as plain strings: the first value of a repeated parameter; nested values dropped. */
export function firstQueryValues(query: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(query ?? {})) {
    const first = Array.isArray(value) ? value[0] : value
    if (typeof first === 'string') out[key] = first
  }
  return out
}
