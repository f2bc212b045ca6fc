// wechatCallbackMiddleware over real sockets with the real callback and service: a push is processed
// only when its raw body arrives intact, whatever body parser the app has; a body it cannot use is a
// 4xx from the callback, never an error for the app.
import { describe, expect, it, vi } from 'vitest'
import express, { type ErrorRequestHandler } from 'express'
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

  it('answers a JSON request after express.json() with a 4xx, never an error: 401 unsigned, 415 signed (B-wx-3)', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use(express.json())
    app.use(express.urlencoded())
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback))
    const errors: unknown[] = []
    app.use(((error, _req, res, _next) => {
      errors.push(error)
      res.status(500).send('app error handler')
    }) satisfies ErrorRequestHandler)
    const url = await serve(app)
    const logged = vi.spyOn(console, 'error')
    try {
      const post = async (query: string, type: string, body: string) => {
        const res = await fetch(`${url}/wechat/callback${query}`, { method: 'POST', headers: { 'content-type': type }, body })
        return [res.status, await res.text()]
      }
      expect(await post('', 'application/json', '{"a":1}')).toEqual([401, 'signature, timestamp and nonce are required'])
      expect((await post(`?${wechat.pushQuery()}`, 'application/json', '{"a":1}'))[0]).toBe(415)
      expect((await post(`?${wechat.pushQuery()}`, 'application/json', '[1,2]'))[0]).toBe(415)
      expect((await post(`?${wechat.pushQuery()}`, 'application/x-www-form-urlencoded', 'a=1'))[0]).toBe(415)
      // JSON text the parser left alone (another content type) is refused by the callback too.
      expect((await post(`?${wechat.pushQuery()}`, 'text/plain', '{"a":1}'))[0]).toBe(415)
      expect(errors).toEqual([])
      expect(logged).not.toHaveBeenCalled()
    } finally {
      logged.mockRestore()
    }
    expect(await wechat.scanned()).toBe(false)
  })

  it('refuses a body that is too large with 413 once it is signed, and with 401 when it is not (B-wx-1)', async () => {
    const wechat = await realCallback()
    const app = express()
    app.use('/wechat/callback', wechatCallbackMiddleware(wechat.callback, { maxBodyBytes: 100 }))
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
