/**
 * A backpressure check for event streams on a real socket: the server sends a few large chunks
 * from an iteration, and a client that reads nothing at first must hold that iteration back (the
 * server waits for `drain` instead of buffering everything); once the client reads, every chunk
 * arrives. Used by the tests of core's `writeEventStream` and of each framework's event stream.
 *
 * @module
 */
import { get, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { eventually } from '../waiting'

/** What {@link SlowReader.read} saw. */
export interface SlowReadResult {
  /** Chunks the iteration had given when the server first found the socket's buffer full. */
  pulledWhilePaused: number
  /** Bytes the client received in all. */
  bytes: number
  /** The response headers. */
  headers: IncomingHttpHeaders
}

/** The server and client halves of one backpressure check; see {@link slowReader}. */
export interface SlowReader {
  /** How many chunks {@link SlowReader.events} yields. */
  readonly chunks: number
  /** The size of each chunk in bytes. */
  readonly chunkBytes: number
  /** How many chunks the iteration has given so far. */
  readonly pulled: number
  /** The event stream to send: `chunks` chunks of about 1 MiB each, counted as they are pulled. */
  events(): AsyncIterable<string>
  /** Call on the server's response before sending: notes when a write finds the buffer full. */
  watch(res: ServerResponse): void
  /**
   * The client: requests `url` without reading, waits until a server write finds the buffer full,
   * then reads everything to the end.
   */
  read(url: string): Promise<SlowReadResult>
}

/** A new backpressure check of `chunks` chunks (32 by default: 32 MiB, far beyond any socket buffer). */
export function slowReader(chunks = 32): SlowReader {
  const chunk = `data: ${'x'.repeat(1024 * 1024)}\n\n`
  let pulled = 0
  let needsDrain = false
  return {
    chunks,
    chunkBytes: Buffer.byteLength(chunk),
    get pulled() {
      return pulled
    },
    async *events() {
      for (let i = 0; i < chunks; i++) {
        pulled++
        yield chunk
      }
    },
    watch(res) {
      res.on('drain', () => void (needsDrain = false))
      const original = res.write.bind(res)
      // Record when a write found the buffer full, as the sending loop sees it.
      res.write = ((data: string) => {
        const ok = original(data)
        if (!ok) needsDrain = true
        return ok
      }) as typeof res.write
    },
    async read(url) {
      const res = await new Promise<IncomingMessage>((resolve) => get(url, resolve))
      res.pause()
      await eventually('a write to find the buffer full', () => needsDrain)
      const pulledWhilePaused = pulled
      let bytes = 0
      res.on('data', (data: Buffer) => void (bytes += data.length))
      const ended = new Promise((resolve) => res.on('end', resolve))
      res.resume()
      await ended
      return { pulledWhilePaused, bytes, headers: res.headers }
    },
  }
}
