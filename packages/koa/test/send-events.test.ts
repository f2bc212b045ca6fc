// sendEvents on a real socket through Koa: each chunk goes out as the iteration yields it, a client
// that does not read holds the iteration back (backpressure), and Koa's own response handling stays
// out of the way (`ctx.respond = false`): no error reported when the stream is over.
import { get, type IncomingMessage } from 'node:http'
import Koa from 'koa'
import { expect, it } from 'vitest'
import { eventually, serverPerTest } from '@scanauth/testkit'
import { sendEvents } from '../src/send-events'

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
  const app = new Koa()
  const errors: unknown[] = []
  app.on('error', (error: unknown) => void errors.push(error))
  let status: number | undefined
  app.use(async (ctx, next) => {
    await next()
    // Runs once the stream has ended: a logger here sees the stream's status.
    status = ctx.status
  })
  app.use(async (ctx) => {
    const res = ctx.res
    res.on('drain', () => void (needsDrain = false))
    const original = res.write.bind(res)
    res.write = ((chunk: string) => {
      const ok = original(chunk)
      if (!ok) needsDrain = true
      return ok
    }) as typeof res.write
    await sendEvents(ctx, { status: 200, headers: { 'content-type': 'text/event-stream' } }, events())
  })
  const url = await serve(app.callback())
  const res = await new Promise<IncomingMessage>((resolve) => get(url, resolve))
  res.pause()
  await eventually('a write to find the buffer full', () => needsDrain)
  expect(pulled).toBeLessThan(CHUNKS)
  let bytes = 0
  res.on('data', (data: Buffer) => void (bytes += data.length))
  const ended = new Promise((resolve) => res.on('end', resolve))
  res.resume()
  await ended
  expect(pulled).toBe(CHUNKS)
  expect(bytes).toBe(CHUNKS * Buffer.byteLength(CHUNK))
  expect(res.headers['content-type']).toBe('text/event-stream')
  await eventually('the middleware before it to resume', () => status !== undefined)
  expect(status).toBe(200)
  expect(errors).toEqual([])
})
