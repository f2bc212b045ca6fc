// wechatCallbackMiddleware over real sockets with the real callback and service: a push is processed
// only when its raw body arrives intact, whatever body parser the app has.
import { describe, expect, it } from 'vitest'
import express from 'express'
import { serverPerTest } from '@scanauth/testkit'
import { wechatCallbackMiddleware } from '../src/index'
import { realCallback } from './support/fixtures'

const serve = serverPerTest()

describe('wechatCallbackMiddleware', () => {
  it('gets the raw XML body even though the app parses JSON globally', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
    const verify = await fetch(`${url}/wechat/callback?${wechat.verifyQuery}`)
    expect(await verify.text()).toBe('echo-42')
  })

  it.each([
    ['express.raw()', express.raw({ type: '*/*' })],
    ['express.text()', express.text({ type: '*/*' })],
  ])('takes the body %s on its route already read', async (_name, parser) => {
    const wechat = await realCallback()
    const app = express()
    app.use('/wechat/callback', parser, wechatCallbackMiddleware(wechat.callback))
    const url = await serve(app)
    const res = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(await res.text()).toBe('success')
    expect(await wechat.scanned()).toBe(true)
  })

  it('refuses a body a parser turned into an object, and one that is too large', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use(express.json())
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
    const url = await serve(app)
    const parsed = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(parsed.status).toBe(500)
    await parsed.text()
    const big = await fetch(`${url}/wechat/callback?${wechat.pushQuery()}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: wechat.xml })
    expect(big.status).toBe(413)
    await big.text()
    expect(await wechat.scanned()).toBe(false)
  })
})
