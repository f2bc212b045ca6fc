// sendEvents on a real socket through Koa: each chunk goes out as the iteration yields it, a client
// that does not read holds the iteration back (backpressure), and Koa's own response handling stays
// out of the way (`ctx.respond = false`): no error reported when the stream is over.
import Koa from 'koa'
import { expect, it } from 'vitest'
import { eventually, serverPerTest, slowReader } from '@scanauth/testkit'
import { sendEvents } from '../src/send-events'

const serve = serverPerTest()

it('waits for drain when the client does not read, and sends every chunk once it does', async () => {
  const probe = slowReader()
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
    probe.watch(ctx.res)
    await sendEvents(ctx, { status: 200, headers: { 'content-type': 'text/event-stream' } }, probe.events())
  })
  const url = await serve(app.callback())
  const read = await probe.read(url)
  expect(read.pulledWhilePaused).toBeLessThan(probe.chunks)
  expect(probe.pulled).toBe(probe.chunks)
  expect(read.bytes).toBe(probe.chunks * probe.chunkBytes)
  expect(read.headers['content-type']).toBe('text/event-stream')
  await eventually('the middleware before it to resume', () => status !== undefined)
  expect(status).toBe(200)
  expect(errors).toEqual([])
})
