// writeEventStream on a real socket (the event stream of the Express and Koa middlewares): each chunk goes out as the iteration yields it, and a client that
// does not read holds the iteration back (backpressure) instead of the server buffering everything.
import { expect, it } from 'vitest'
import { serverPerTest, slowReader } from '@scanauth/testkit'
import { writeEventStream } from '@scanauth/core/node'

const serve = serverPerTest()

it('waits for drain when the client does not read, and sends every chunk once it does', async () => {
  const probe = slowReader()
  const url = await serve((_req, res) => {
    probe.watch(res)
    void writeEventStream(res, { status: 200, headers: { 'content-type': 'text/event-stream' } }, probe.events())
  })
  const read = await probe.read(url)
  // Held back: the iteration is not pulled past the full buffer while the client reads nothing.
  expect(read.pulledWhilePaused).toBeLessThan(probe.chunks)
  expect(probe.pulled).toBe(probe.chunks)
  expect(read.bytes).toBe(probe.chunks * probe.chunkBytes)
  expect(read.headers['content-type']).toBe('text/event-stream')
})
