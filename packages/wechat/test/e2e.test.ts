// End to end over real HTTP: core (MemoryStore) creates scenes through the emulator's API, the
// emulator pushes scans to the callback mounted on a node:http server, core authorizes the device.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createScanAuth, MemoryStore, type ScanEvent } from '@scanauth/core'
import { afterEach, describe, expect, it } from 'vitest'
import { computeSignature, createWechatCallback, createWechatQrProvider, type WechatCallback, type WechatCallbackOptions } from '../src/index'
import { startWechatEmulator } from '@scanauth/wechat-emulator'
import { buildXml } from '../src/xml'
import { closer, manualClock, serveCallback } from './helpers'

const ACCOUNT = { appId: 'wx_e2e_0000000001', appSecret: 'e2e-secret', token: 'e2eToken' }
const KEY = 'e2eKEYe2eKEYe2eKEYe2eKEYe2eKEYe2eKEYe2eKEY0'
const resources = closer()
afterEach(() => resources.closeAll())

async function world(
  mode: 'plain' | 'safe',
  callbackOptions: Partial<WechatCallbackOptions> = {},
  wrap?: (callback: WechatCallback) => WechatCallback,
  pushMode?: 'plain' | 'compatible' | 'safe',
) {
  const clock = manualClock()
  const encodingAESKey = mode === 'safe' ? KEY : undefined
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, encodingAESKey, mode: pushMode, now: clock.now, pushTimeoutMs: 300 }))
  const store = new MemoryStore()
  const scans: ScanEvent[] = []
  const auth = createScanAuth({
    store,
    qr: createWechatQrProvider({ appId: ACCOUNT.appId, appSecret: ACCOUNT.appSecret, apiBaseUrl: emulator.url, now: clock.now }),
    now: clock.now,
    hooks: { onScan: (e) => void scans.push(e) },
  })
  const callback = createWechatCallback({ auth, store, token: ACCOUNT.token, appId: ACCOUNT.appId, encodingAESKey, now: clock.now, ...callbackOptions })
  const server = resources.add(await serveCallback(wrap ? wrap(callback) : callback))
  emulator.setCallbackUrl(server.url)
  const ticketOf = (qrUrl: string) => new URL(qrUrl).searchParams.get('ticket')!
  return { clock, emulator, store, auth, scans, server, ticketOf }
}

describe.each(['plain', 'safe'] as const)('%s mode', (mode) => {
  it('create scene → scan → authorized, with the reply the user sees', async () => {
    const { auth, emulator, ticketOf, scans } = await world(mode)
    const scene = await auth.createScene({ deviceId: 'tv-1' })
    expect(scene.qrUrl.startsWith(`${emulator.url}/cgi-bin/showqrcode?ticket=`)).toBe(true)
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'pending' })

    const pushed = await emulator.scan({ ticket: ticketOf(scene.qrUrl), openid: 'o_alice' })
    expect(pushed).toMatchObject({ status: 200, replyError: null, attempts: 1, event: { Event: 'subscribe', EventKey: `qrscene_${scene.sceneStr}` } })
    expect(pushed.reply).toMatchObject({ MsgType: 'text', Content: 'Signed in.', ToUserName: 'o_alice', encrypted: mode === 'safe' })
    expect(scans).toMatchObject([{ sceneStr: scene.sceneStr, openid: 'o_alice', result: 'authorized' }])

    const status = await auth.getStatus(scene.sceneStr)
    expect(status).toMatchObject({ status: 'authorized', authorization: { type: 'time', remainingPoints: 0 } })

    // The same user on another device: now a follower, so a SCAN event.
    const second = await auth.createScene({ deviceId: 'tv-2' })
    const again = await emulator.scan({ sceneStr: second.sceneStr, openid: 'o_alice' })
    expect(again.event).toMatchObject({ Event: 'SCAN', EventKey: second.sceneStr })
    expect((await auth.getStatus(second.sceneStr)).status).toBe('authorized')
  })

  it('a later scan of a used code is invalid and says so', async () => {
    const { auth, emulator, clock, scans } = await world(mode)
    const scene = await auth.createScene({ deviceId: 'tv' })
    await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_a' })
    clock.advance(2000)
    const second = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_b' })
    expect(second.reply?.Content).toMatch(/expired or was already used/)
    expect(scans.map((s) => s.result)).toEqual(['authorized', 'invalid'])
  })

  it("WeChat's retries after a slow answer are handled once and get the same reply", async () => {
    // The app's server holds its first answer past the emulator's 300 ms: WeChat delivers again.
    let held = 0
    const { auth, emulator, scans } = await world(mode, {}, (callback) => async (request) => {
      const response = await callback(request)
      if (held++ === 0) await new Promise((resolve) => setTimeout(resolve, 1000))
      return response
    })
    const scene = await auth.createScene({ deviceId: 'tv' })
    const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_retry' })
    expect(pushed.attempts).toBe(2)
    expect(pushed.reply?.Content).toBe('Signed in.')
    expect(scans).toHaveLength(1)
    expect((await auth.getStatus(scene.sceneStr)).status).toBe('authorized')
  })

  it('a replayed delivery gets the same reply inside the window and 403 after it; nothing is processed twice', async () => {
    const captured: Array<{ url: string; body: string }> = []
    const { auth, emulator, clock, scans, server } = await world(mode)
    // Record what WeChat sends, through a small proxy in front of the callback.
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req as AsyncIterable<Buffer>) chunks.push(c)
      const body = Buffer.concat(chunks).toString('utf8')
      const target = `${server.url}${new URL(req.url ?? '/', 'http://x').search}`
      captured.push({ url: target, body })
      const answer = await fetch(target, { method: 'POST', body })
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(await answer.text())
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    resources.add({ close: () => new Promise<void>((resolve) => (proxy.close(() => resolve()), proxy.closeAllConnections())) })
    emulator.setCallbackUrl(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`)

    const scene = await auth.createScene({ deviceId: 'tv' })
    const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_r' })
    const original = captured[0]!
    const replay = await fetch(original.url, { method: 'POST', body: original.body })
    expect(replay.status).toBe(200)
    if (mode === 'plain') expect(await replay.text()).toBe(pushed.body)
    clock.advance(301_000)
    expect((await fetch(original.url, { method: 'POST', body: original.body })).status).toBe(403)
    expect(scans).toHaveLength(1)
  })

  it('XXE and oversize payloads are inert', async () => {
    const { auth, store, clock, server, scans } = await world(mode, { maxBodyBytes: 4096 })
    const scene = await auth.createScene({ deviceId: 'tv' })
    const t = String(Math.floor(clock.now() / 1000))
    const signed = (nonce: string) => `${server.url}?${new URLSearchParams({ signature: computeSignature(ACCOUNT.token, t, nonce), timestamp: t, nonce })}`
    const xxe = `<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY s SYSTEM "file:///etc/hostname">]><xml><ToUserName>gh</ToUserName><FromUserName>&s;</FromUserName><CreateTime>${t}</CreateTime><MsgType>event</MsgType><Event>SCAN</Event><EventKey>${scene.sceneStr}</EventKey></xml>`
    const post = (nonce: string, body: string) => fetch(signed(nonce), { method: 'POST', body })
    expect((await post('1', xxe)).status).toBe(400)
    const padding = 'x'.repeat(5000)
    const big = buildXml({ ToUserName: 'gh', FromUserName: 'o_big', CreateTime: Number(t), MsgType: 'event', Event: 'SCAN', EventKey: scene.sceneStr, Pad: padding })
    expect((await post('2', big)).status).toBe(413)
    expect(scans).toHaveLength(0)
    expect(store.snapshot().users).toHaveLength(0)
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'pending' })
  })

  it('other messages reach onMessage and its reply reaches the user', async () => {
    const { emulator } = await world(mode, { onMessage: (m) => (m.MsgType === 'text' ? `You said: ${m.Content}` : null) })
    const pushed = await emulator.sendText({ openid: 'o_t', content: 'hello ]]> world' })
    expect(pushed).toMatchObject({ replyError: null, reply: { Content: 'You said: hello ]]> world' } })
  })

  it("the page's scan button performs a scan", async () => {
    const { auth, emulator, ticketOf } = await world(mode)
    const scene = await auth.createScene({ deviceId: 'tv' })
    const res = await fetch(`${emulator.url}/emulator/scan`, { method: 'POST', body: JSON.stringify({ ticket: ticketOf(scene.qrUrl) }) })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ event: { FromUserName: 'o_emulator_demo_user' }, reply: { Content: 'Signed in.' } })
    expect((await auth.getStatus(scene.sceneStr)).status).toBe('authorized')
  })
})

it('a callback with the wrong token refuses every push, and nothing is stored', async () => {
  const { auth, emulator, store } = await world('plain', { token: 'wrongToken' })
  const scene = await auth.createScene({ deviceId: 'tv' })
  const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_x' })
  expect(pushed).toMatchObject({ status: 401, replyError: 'HTTP 401' })
  expect(store.snapshot().users).toHaveLength(0)
})

it('a callback for another appid refuses safe-mode pushes with 403', async () => {
  const { auth, emulator, store } = await world('safe', { appId: 'wx_someone_else' })
  const scene = await auth.createScene({ deviceId: 'tv' })
  expect((await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_x' })).status).toBe(403)
  expect(store.snapshot().sessions).toHaveLength(0)
})

it.each([
  ['plain', 403],
  ['compatible', 200],
  ['safe', 200],
] as const)('with a key, safe mode is required by default: a %s push is answered %i', async (pushMode, status) => {
  const { auth, emulator, scans } = await world('safe', {}, undefined, pushMode)
  const scene = await auth.createScene({ deviceId: 'tv' })
  expect((await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_mode' })).status).toBe(status)
  expect(scans).toHaveLength(status === 200 ? 1 : 0)
})
