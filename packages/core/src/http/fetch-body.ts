/**
 * Reading the body of a Fetch-standard `Request` with a size cap, for the Fetch handlers (Hono,
 * Next.js route handlers, Bun, Deno) that hand raw bodies to `createHttpHandler` or to the WeChat
 * callback. No Node API: it runs wherever `Request` does.
 *
 * @module
 */

/**
 * Reads at most `maxBytes + 1` bytes of a request's body: enough for the caller to tell "too large"
 * (`byteLength > maxBytes`) without holding an unbounded body in memory. Once the cap is passed the
 * rest of the stream is cancelled, so the host stops reading from the client. Resolves `undefined`
 * when the request has no body; throws a `TypeError` when something already read it.
 */
export async function readFetchBody(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  if (request.body === null) return undefined
  // Say what went wrong, rather than the runtime's "Body is unusable": something upstream parsed it.
  if (request.bodyUsed) throw new TypeError('The request body was already read: hand the Request over before anything parses its body')
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let kept = 0
  try {
    while (kept <= maxBytes) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      kept += value.byteLength
    }
    // Best effort: a host that cannot cancel still gets its answer.
    if (kept > maxBytes) await reader.cancel().catch(() => undefined)
  } finally {
    reader.releaseLock()
  }
  return joinBytes(chunks, Math.min(kept, maxBytes + 1))
}

/** The first `length` bytes of the chunks, as one array. */
function joinBytes(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.byteLength === length) return chunks[0]!
  const out = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    if (at >= length) break
    const part = chunk.byteLength > length - at ? chunk.subarray(0, length - at) : chunk
    out.set(part, at)
    at += part.byteLength
  }
  return out
}
