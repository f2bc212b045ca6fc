// writeEventStream on a real socket (the event stream of the Express and Koa middlewares): each chunk goes out as the iteration yields it, and a client that
// does not read holds the iteration back (backpressure) instead of the server buffering everything.
import { get, type IncomingMessage } from 'node:http'
import { expect, it } from 'vitest'
import { eventually, serverPerTest } from '@scanauth/testkit'
import { writeEventStream } from '../src'

const serve = serverPerTest()
const CHUNKS = 32
const CHUNK = `data: ${'x'.repeat(1024 * 1024)}\n\n`

it('waits for drain when the client does not read, and sends every chunk once it does', async () => {
  let pulled = 0
  let needsDrain = false
  async function* events() {
    for (let i = 0; i < CHUNKS; i++) {
      pulled++
      yield CHUNK
    }
  }
  const url = await serve((_req, res) => {
    res.on('drain', () => void (needsDrain = false))
    const original = res.write.bind(res)
    // Record when a write found the buffer full, as the loop sees it.
    res.write = ((chunk: string) => {
      const ok = original(chunk)
      if (!ok) needsDrain = true
      return ok
    }) as typeof res.write
    void writeEventStream(res, { status: 200, headers: { 'content-type': 'text/event-stream' } }, events())
  })
  const res = await new Promise<IncomingMessage>((resolve) => get(url, resolve))
  res.pause()
  await eventually('a write to find the buffer full', () => needsDrain)
  // Held back: the iteration is not pulled past the full buffer while the client reads nothing.
  expect(pulled).toBeLessThan(CHUNKS)
  let bytes = 0
  res.on('data', (data: Buffer) => void (bytes += data.length))
  const ended = new Promise((resolve) => res.on('end', resolve))
  res.resume()
  await ended
  expect(pulled).toBe(CHUNKS)
  expect(bytes).toBe(CHUNKS * Buffer.byteLength(CHUNK))
  expect(res.headers['content-type']).toBe('text/event-stream')
})
