// wechatCallbackMiddleware over real sockets with the real callback and service: a push is processed
// only when its raw body arrives intact, beside @koa/bodyparser or without it.
import { describe, expect, it } from 'vitest'
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { serverPerTest } from '@scanauth/testkit'
import { wechatCallbackMiddleware } from '../src/index'
import { realCallback } from './support/fixtures'

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

  it('refuses a body that is too large', async () => {
    const wechat = await realCallback()
    const app = new Koa()
    app.use(wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const big = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(big.status).toBe(413)
    await big.text()
    expect(await wechat.scanned()).toBe(false)
  })
})
