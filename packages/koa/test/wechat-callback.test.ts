// wechatCallbackMiddleware over real sockets with the real callback and service: a push is processed
// only when its raw body arrives intact, beside @koa/bodyparser or without it; a body it cannot use is
// a 4xx from the callback, never an error event.
import { describe, expect, it, vi } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { serverPerTest } from '@scanauth/testkit'
import { wechatCallbackMiddleware } from '../src/index'
import { realCallback } from '../../express/test/support/fixtures'

const serveListener = serverPerTest()
const serve = (app: Koa): Promise<string> => serveListener(app.callback())

/** A route of the app's own, after ours. */
const health: Middleware = async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = 'ok'
  else await next()
}

describe('wechatCallbackMiddleware', () => {
  it.each([
    ['bodyParser() (JSON and forms)', bodyParser()],
    ['bodyParser() that parses XML as text', bodyParser({ enableTypes: ['json', 'xml'] })],
    ['no parser', null],
  ])('gets the raw XML body beside %s', async (_name, parser) => {
    const wechat = await realCallback()
    const app = new Koa()
    if (parser) app.use(parser)
    app.use(wechatCallbackMiddleware(wechat.callback, { path: '/wechat/callback' }))
    app.use(health)
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
    expect(await (await fetch(`${url}/wechat/callback?${wechat.verifyQuery}`)).text()).toBe('echo-42')
    expect(await (await fetch(`${url}/health`)).text()).toBe('ok')
  })

  it('answers a JSON request after @koa/bodyparser with a 4xx and emits no error: 401 unsigned, 415 signed (B-wx-3)', async () => {
    const wechat = await realCallback()
    const app = new Koa()
    const errors: unknown[] = []
    app.on('error', (error) => void errors.push(error))
    app.use(bodyParser())
    app.use(wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const logged = vi.spyOn(console, 'error')
    try {
      const post = async (query: string, type: string, body: string) => {
        const res = await fetch(`${url}/wechat/callback${query}`, { method: 'POST', headers: { 'content-type': type }, body })
        return [res.status, await res.text()]
      }
      expect(await post('', 'application/json', '{"a":1}')).toEqual([401, 'signature, timestamp and nonce are required'])
      expect((await post(`?${wechat.pushQuery()}`, 'application/json', '{"a":1}'))[0]).toBe(415)
      expect((await post(`?${wechat.pushQuery()}`, 'application/x-www-form-urlencoded', 'a=1'))[0]).toBe(415)
      expect((await post(`?${wechat.pushQuery()}`, 'text/plain', '{"a":1}'))[0]).toBe(415)
      expect(errors).toEqual([])
      expect(logged).not.toHaveBeenCalled()
    } finally {
      logged.mockRestore()
    }
    expect(await wechat.scanned()).toBe(false)
  })

  it('hands a parsed body without rawBody to the callback, which refuses it 415', async () => {
    const wechat = await realCallback()
    const app = new Koa()
    const errors: unknown[] = []
    app.on('error', (error) => void errors.push(error))
    // A parser of the app's own that keeps no raw body.
    app.use(async (ctx, next) => {
      let text = ''
      for await (const chunk of ctx.req) text += String(chunk)
      ;(ctx.request as { body?: unknown }).body = JSON.parse(text) as unknown
      await next()
    })
    app.use(wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(res.status).toBe(415)
    await res.text()
    expect(errors).toEqual([])
  })

  it('refuses a body that is too large with 413 once it is signed, and with 401 when it is not (B-wx-1)', async () => {
    const wechat = await realCallback()
    const app = new Koa()
    app.use(wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const big = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(big.status).toBe(413)
    await big.text()
    const unsigned = await fetch(`${url}/wechat/callback?${wechat.pushQuery().replace(/signature=[^&]+/, 'signature=0')}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(unsigned.status).toBe(401)
    await unsigned.text()
    expect(await wechat.scanned()).toBe(false)
  })
})
