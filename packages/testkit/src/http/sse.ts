/**
 * A small Server-Sent Events reader for tests: `fetch` an event stream and read its messages from
 * the response bytes, comments (heartbeats) included, which `EventSource` would hide.
 *
 * @module
 */

/** One message of an event stream: the lines up to a blank line. */
export interface SseMessage {
  /** The `event:` field, if the message has one. */
  event?: string
  /** The `data:` lines joined with `\n`, if the message has any. */
  data?: string
  /** The `id:` field, if the message has one (what `EventSource` would send back as `Last-Event-ID`). */
  id?: string
  /** The `retry:` field (the reconnection delay in milliseconds), if the message has one made of digits. */
  retry?: number
  /** The comment lines (`: text`), without the colon and the one space after it. */
  comments: string[]
}

/** An event stream opened by {@link openEventStream}. */
export interface EventStream {
  /** The response: status and headers. Its body is read by {@link EventStream.next}. */
  response: Response
  /** The next message; `undefined` once the server has ended the stream. */
  next(): Promise<SseMessage | undefined>
  /** Aborts the request: the client goes away mid-stream. */
  abort(): void
}

/**
 * `GET url` with `accept: text/event-stream`; resolves once the response headers are in (the
 * server flushed them), whatever the status. Read the messages with `next()`; `abort()` drops the
 * connection as a closed page would.
 *
 * @example
 * ```ts
 * const stream = await openEventStream(`${url}/auth/events?scene=${scene}`)
 * expect(await stream.next()).toEqual({ retry: 3000, id: 'pending', event: 'status', data: '{"status":"pending"}', comments: [] })
 * ```
 */
export async function openEventStream(url: string, init: RequestInit = {}): Promise<EventStream> {
  const controller = new AbortController()
  const response = await fetch(url, { ...init, headers: { accept: 'text/event-stream', ...init.headers }, signal: controller.signal })
  const messages = readSse(response.body)
  return {
    response,
    async next() {
      const next = await messages.next()
      return next.done === true ? undefined : next.value
    },
    abort: () => controller.abort(),
  }
}

/**
 * The messages of an event stream's bytes, parsed as the SSE format says: UTF-8 lines ended by
 * `\n`, `\r\n` or `\r`; `field: value` (one space after the colon dropped); a line starting with a
 * colon is a comment; a blank line ends a message. Ends with the body; a message cut off by the end
 * is dropped, as `EventSource` drops it.
 */
export async function* readSse(body: ReadableStream<Uint8Array> | null): AsyncGenerator<SseMessage, void, undefined> {
  if (body === null) return
  const decoder = new TextDecoder()
  let buffer = ''
  let message: SseMessage = { comments: [] }
  let lines = false
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true })
    let end: RegExpExecArray | null
    // A lone `\r` at the end of the buffer may be the first half of `\r\n`: wait for more bytes.
    while ((end = /\r\n|\n|\r(?!$)/.exec(buffer)) !== null) {
      const line = buffer.slice(0, end.index)
      buffer = buffer.slice(end.index + end[0].length)
      if (line === '') {
        if (lines) yield message
        message = { comments: [] }
        lines = false
        continue
      }
      lines = true
      addLine(message, line)
    }
  }
}

function addLine(message: SseMessage, line: string): void {
  const colon = line.indexOf(':')
  const field = colon === -1 ? line : line.slice(0, colon)
  const raw = colon === -1 ? '' : line.slice(colon + 1)
  const value = raw.startsWith(' ') ? raw.slice(1) : raw
  if (field === '') message.comments.push(value)
  else if (field === 'event') message.event = value
  else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`
  // As EventSource reads them: an id with a NUL is ignored, a retry that is not all digits too.
  else if (field === 'id' && !value.includes('\0')) message.id = value
  else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value)
}
