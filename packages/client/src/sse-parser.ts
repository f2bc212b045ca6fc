/**
 * An incremental parser of Server-Sent Events (the WHATWG "event stream" format), for a stream read
 * from a `fetch` body rather than through `EventSource`, which would reconnect by itself even after
 * the server ended the stream after a final status.
 *
 * @module
 */

/** One dispatched event. */
export interface SseEvent {
  /** The `event:` field; `message` when the event named none. */
  event: string
  /** The `data:` lines joined by newlines. */
  data: string
  /** The last `id:` seen so far in the stream, or undefined. */
  id: string | undefined
  /** The `retry:` value (milliseconds) seen with this event, or undefined. */
  retry: number | undefined
}

/**
 * Feed it decoded text in any chunking; it returns the events completed by each chunk. Comments
 * (`: heartbeat`) are skipped, lines may end in CRLF, LF or CR, a leading BOM is dropped, and an
 * event is dispatched at its blank line only (a stream cut mid-event dispatches nothing).
 */
export class SseParser {
  private buffer = ''
  private started = false
  private pendingCr = false
  private eventName = ''
  private dataLines: string[] | null = null
  private lastId: string | undefined
  private retry: number | undefined

  /** Parses `chunk` and returns the events it completed, in order. */
  push(chunk: string): SseEvent[] {
    let text = chunk
    if (!this.started && text.length > 0) {
      this.started = true
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    // A CR at the end of the previous chunk already ended its line: an LF right after it is the same line end.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1)
    this.pendingCr = false
    this.buffer += text
    const events: SseEvent[] = []
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i]
      if (c !== '\n' && c !== '\r') continue
      const line = this.buffer.slice(start, i)
      if (c === '\r') {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === '\n') i++
        } else this.pendingCr = true
      }
      start = i + 1
      const event = this.line(line)
      if (event !== undefined) events.push(event)
    }
    this.buffer = this.buffer.slice(start)
    return events
  }

  /** Handles one complete line; returns the event a blank line dispatches. */
  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch()
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') this.eventName = value
    else if (field === 'data') (this.dataLines ??= []).push(value)
    else if (field === 'id') {
      if (!value.includes('\0')) this.lastId = value
    } else if (field === 'retry') {
      if (/^\d+$/.test(value)) this.retry = Number(value)
    }
    return undefined
  }

  private dispatch(): SseEvent | undefined {
    const data = this.dataLines
    const event = this.eventName === '' ? 'message' : this.eventName
    const retry = this.retry
    this.eventName = ''
    this.dataLines = null
    this.retry = undefined
    // An event without data is not dispatched (as in EventSource).
    if (data === null) return undefined
    return { event, data: data.join('\n'), id: this.lastId, retry }
  }
}
