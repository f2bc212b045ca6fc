// scanAuthRouter passes Express's `req.ip` as the client address, so create_scene is limited per
// address (docs/behaviour.md, B-rate-5) and a 429 carries Retry-After; `trust proxy` decides whether
// X-Forwarded-For counts.
import { describe, expect, it } from 'vitest'
import express from 'express'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { ManualClock, postJson, RecordingQrProvider, serverPerTest } from '@scanauth/testkit'
import { scanAuthRouter } from '../src/index'

const serve = serverPerTest()

async function appWith(trustProxy: boolean) {
  const qr = new RecordingQrProvider()
  // A clock that stands still: the real one could cross into the next minute's window mid-test.
  const auth = createScanAuth({ store: new MemoryStore(), qr, now: new ManualClock().now, rateLimits: { perAddress: { limit: 2, windowSeconds: 60 } } })
  const app = express()
  app.set('trust proxy', trustProxy ? 1 : false)
  app.use('/auth', scanAuthRouter(auth))
  const url = await serve(app)
  const create = (device: string, forwardedFor: string) =>
    postJson(`${url}/auth/create_scene`, { device_id: device }, { 'x-forwarded-for': forwardedFor })
  return { qr, create }
}

describe('scanAuthRouter and the per-address limit', () => {
  it('counts per req.ip: behind a trusted proxy, per X-Forwarded-For', async () => {
    const { qr, create } = await appWith(true)
    expect((await create('tv-1', '198.51.100.7')).status).toBe(200)
    expect((await create('tv-2', '198.51.100.7')).status).toBe(200)
    const refused = await create('tv-3', '198.51.100.7')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('60')
    expect(refused.body).toEqual({ detail: expect.stringContaining('from this address') })
    expect((await create('tv-3', '198.51.100.8')).status).toBe(200)
    expect(qr.requests).toHaveLength(3)
  })

  it('ignores X-Forwarded-For without trust proxy: the socket address counts', async () => {
    const { create } = await appWith(false)
    expect((await create('tv-1', '198.51.100.1')).status).toBe(200)
    expect((await create('tv-2', '198.51.100.2')).status).toBe(200)
    expect((await create('tv-3', '198.51.100.3')).status).toBe(429)
  })
})
