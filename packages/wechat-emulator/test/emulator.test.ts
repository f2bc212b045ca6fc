// The emulator's own behaviour, over real HTTP: WeChat's answer shapes and errcodes, tokens, QR
// images, the page, and pushes with WeChat's retries.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@scanauth/testkit'
import { computeSignature, decodeAesKey, decryptMessage, parseXml } from '@scanauth/wechat'
import { startWechatEmulator, type WechatEmulatorOptions } from '../src/index'
import { SCAN_LOG_LIMIT, ScanLog } from '../src/scan-log'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_test', appSecret: 'the-secret', token: 'push-token' }
const KEY = 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c'
const resources = closer()
afterEach(() => resources.closeAll())

async function setup(options: Partial<WechatEmulatorOptions> = {}) {
  const clock = new ManualClock('2026-03-01T08:00:00Z')
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now, ...options }))
  const api = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${emulator.url}${path}`, init)
    return { status: res.status, type: res.headers.get('content-type') ?? '', json: (await res.json()) as Record<string, unknown> }
  }
  const post = (path: string, body: unknown) => api(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) })
  const stable = async () => (await post('/cgi-bin/stable_token', { grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret })).json
  const create = (token: string, body: unknown) => post(`/cgi-bin/qrcode/create?access_token=${encodeURIComponent(token)}`, body)
  return { clock, emulator, api, post, stable, create }
}

const strScene = (scene_str: string, expire_seconds?: number) => ({ expire_seconds, action_name: 'QR_STR_SCENE', action_info: { scene: { scene_str } } })

/** A callback server whose answers the test decides, recording every request. */
async function fakeCallback(answer: (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void) {
  const seen: Array<{ url: string; body: string }> = []
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c)
    const body = Buffer.concat(chunks).toString('utf8')
    seen.push({ url: req.url ?? '', body })
    answer(req, res, body, seen.length)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`, seen }
}

describe('token endpoints', () => {
  it('stable_token: one token for every caller; force_refresh replaces it', async () => {
    const { stable, post, create } = await setup()
    const a = await stable()
    expect(a).toMatchObject({ expires_in: 7200 })
    expect((a.access_token as string).length).toBeGreaterThan(100)
    expect((await stable()).access_token).toBe(a.access_token)
    const forced = (await post('/cgi-bin/stable_token', { grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret, force_refresh: true })).json
    expect(forced.access_token).not.toBe(a.access_token)
    expect((await create(a.access_token as string, strScene('s'))).json.errcode).toBe(40001)
  })

  it('stable_token error shapes', async () => {
    const { post, api } = await setup()
    const base = { grant_type: 'client_credential', appid: ACCOUNT.appId, secret: ACCOUNT.appSecret }
    expect((await post('/cgi-bin/stable_token', { ...base, secret: 'x' })).json).toMatchObject({ errcode: 40125, errmsg: expect.stringMatching(/^invalid appsecret/) })
    expect((await post('/cgi-bin/stable_token', { ...base, appid: 'wx_other' })).json).toMatchObject({ errcode: 40013 })
    expect((await post('/cgi-bin/stable_token', { ...base, grant_type: 'x' })).json).toMatchObject({ errcode: 40002 })
    expect((await post('/cgi-bin/stable_token', 'appid=x')).json).toMatchObject({ errcode: 47001 })
    expect((await api('/cgi-bin/stable_token')).json).toMatchObject({ errcode: 43002 })
  })

  it('classic token: a new one invalidates the old after the overlap', async () => {
    const { api, create, clock } = await setup({ classicTokenOverlapSeconds: 300 })
    const path = `/cgi-bin/token?grant_type=client_credential&appid=${ACCOUNT.appId}&secret=${ACCOUNT.appSecret}`
    const first = (await api(path)).json.access_token as string
    const second = (await api(path)).json.access_token as string
    expect(second).not.toBe(first)
    expect((await create(first, strScene('s'))).json.errcode).toBeUndefined()
    clock.advance(300_000)
    expect((await create(first, strScene('s'))).json).toMatchObject({ errcode: 40001, errmsg: expect.stringMatching(/not latest/) })
    expect((await create(second, strScene('s'))).json.ticket).toBeTypeOf('string')
    expect((await api(path.replace(ACCOUNT.appSecret, 'bad'))).json).toMatchObject({ errcode: 40125 })
  })

  it('expired tokens answer 42001, missing ones 41001', async () => {
    const { stable, create, clock, post } = await setup({ tokenTtlSeconds: 60 })
    const token = (await stable()).access_token as string
    clock.advance(60_000)
    expect((await create(token, strScene('s'))).json.errcode).toBe(42001)
    expect((await post('/cgi-bin/qrcode/create', strScene('s'))).json.errcode).toBe(41001)
  })
})

describe('qrcode/create and showqrcode', () => {
  it('answers ticket, expire_seconds and url; 60 s when expire_seconds is left out', async () => {
    const { stable, create, emulator, clock } = await setup()
    const token = (await stable()).access_token as string
    const answer = (await create(token, strScene('pc_1', 300))).json
    expect(Object.keys(answer).sort()).toEqual(['expire_seconds', 'ticket', 'url'])
    expect(answer).toMatchObject({ expire_seconds: 300, url: expect.stringMatching(new RegExp(`^${emulator.url}/q/`)) })
    expect(answer.ticket).toMatch(/==$/)
    expect((await create(token, strScene('pc_2'))).json.expire_seconds).toBe(60)
    expect(emulator.tickets().map((t) => [t.sceneStr, t.expiresAt])).toEqual([
      ['pc_1', clock.now() + 300_000],
      ['pc_2', clock.now() + 60_000],
    ])
  })

  it('error shapes for a missing or over-long scene and bad JSON', async () => {
    const { stable, create } = await setup()
    const token = (await stable()).access_token as string
    expect((await create(token, { expire_seconds: 60, action_name: 'QR_STR_SCENE', action_info: {} })).json.errcode).toBe(40097)
    expect((await create(token, { expire_seconds: 60, action_name: 'QR_STR_SCENE', action_info: { scene: {} } })).json).toMatchObject({ errcode: 40097, errmsg: expect.stringMatching(/scene_str/) })
    expect((await create(token, strScene('x'.repeat(65)))).json.errcode).toBe(40097)
    expect((await create(token, '{oops')).json.errcode).toBe(47001)
  })

  it('showqrcode serves a PNG that decodes to the code url; 404 for unknown and expired tickets', async () => {
    const { stable, create, emulator, clock } = await setup()
    const token = (await stable()).access_token as string
    const { ticket, url } = (await create(token, strScene('pc_img', 120))).json as { ticket: string; url: string }
    const res = await fetch(`${emulator.url}/cgi-bin/showqrcode?ticket=${encodeURIComponent(ticket)}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()))
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)
    expect(decoded?.data).toBe(url)

    expect((await fetch(`${emulator.url}/cgi-bin/showqrcode?ticket=unknown`)).status).toBe(404)
    // Unencoded, "+" would arrive as a space: the ticket is not found.
    expect((await fetch(`${emulator.url}/cgi-bin/showqrcode?ticket=${ticket}`)).status).toBe(ticket.includes('+') ? 404 : 200)
    clock.advance(120_000)
    expect((await fetch(`${emulator.url}/cgi-bin/showqrcode?ticket=${encodeURIComponent(ticket)}`)).status).toBe(404)
  })
})

describe('failures on demand and the request log', () => {
  it('failNext replaces the next answers, then the endpoint works again; the log holds no secrets', async () => {
    const { emulator, stable } = await setup()
    emulator.failNext('cgi-bin/stable_token', { errcode: -1, errmsg: 'system error' }, 2)
    expect((await stable()).errcode).toBe(-1)
    expect((await stable()).errcode).toBe(-1)
    expect((await stable()).access_token).toBeTypeOf('string')
    expect(emulator.requests().map((r) => [r.path, r.status, r.errcode])).toEqual([
      ['/cgi-bin/stable_token', 200, -1],
      ['/cgi-bin/stable_token', 200, -1],
      ['/cgi-bin/stable_token', 200, undefined],
    ])
    expect(JSON.stringify(emulator.requests())).not.toContain(ACCOUNT.appSecret)
    expect(() => emulator.failNext('nope' as never, { hang: true })).toThrow(/unknown endpoint/)
  })

  it('a hanging request is cut when the emulator closes', async () => {
    const { emulator } = await setup()
    emulator.failNext('token', { hang: true })
    const pending = fetch(`${emulator.url}/cgi-bin/token`).then(
      () => 'answered',
      () => 'cut',
    )
    while (emulator.requests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await emulator.close()
    expect(await pending).toBe('cut')
  })
})

describe('the page', () => {
  it('lists live codes as JSON and serves the HTML page', async () => {
    const { stable, create, emulator } = await setup()
    const token = (await stable()).access_token as string
    const { url } = (await create(token, strScene('pc_page', 60))).json as { url: string }
    const page = await fetch(`${emulator.url}/`)
    expect(page.headers.get('content-type')).toMatch(/text\/html/)
    expect(await page.text()).toContain('WeChat emulator')
    const one = await (await fetch(url)).text()
    // The QR's url opens the page for that one code (base64 tickets need no HTML escaping).
    expect(one).toContain(`data-ticket="${emulator.tickets()[0]!.ticket}"`)
    const list = (await (await fetch(`${emulator.url}/emulator/tickets`)).json()) as Array<{ sceneStr: string; live: boolean }>
    expect(list).toMatchObject([{ sceneStr: 'pc_page', live: true }])
  })
})

describe('the scan list', () => {
  it('lists every scan, newest first, with the callback answer: from scan() and from the page', async () => {
    let answer = 'success'
    const cb = await fakeCallback((_req, res) => {
      res.statusCode = answer === 'fail' ? 500 : 200
      res.end(answer === 'fail' ? '' : answer)
    })
    const { emulator, stable, create, clock } = await setup({ callbackUrl: cb.url })
    const token = (await stable()).access_token as string
    const { ticket } = (await create(token, strScene('pc_listed', 60))).json as { ticket: string }
    const first = clock.now()
    await emulator.scan({ sceneStr: 'pc_listed', openid: 'o_first' })
    clock.advance(1000)
    answer = 'fail'
    const page = await fetch(`${emulator.url}/emulator/scan`, { method: 'POST', body: JSON.stringify({ ticket, openid: 'o_second', subscribed: true }) })
    expect(page.status).toBe(200)
    await page.arrayBuffer()
    clock.advance(1000)
    answer = 'success'
    await emulator.scan({ sceneStr: 'pc_elsewhere', openid: 'o_third', subscribed: true }) // no code of ours: pushed as is

    const expected = [
      { at: first + 2000, sceneStr: 'pc_elsewhere', openid: 'o_third', ticket: null, event: 'SCAN', attempts: 1, status: 200, reply: null, replyError: null },
      { at: first + 1000, sceneStr: 'pc_listed', openid: 'o_second', ticket, event: 'SCAN', attempts: 1, status: 500, reply: null, replyError: 'HTTP 500' },
      { at: first, sceneStr: 'pc_listed', openid: 'o_first', ticket, event: 'subscribe', attempts: 1, status: 200, reply: null, replyError: null },
    ]
    expect(emulator.scans()).toEqual(expected)
    expect(await (await fetch(`${emulator.url}/emulator/scans`)).json()).toEqual(expected)
    // A refused scan (an unknown ticket) was never made, so it is not listed.
    await expect(emulator.scan({ ticket: 'nope', openid: 'o' })).rejects.toThrow(/unknown ticket/)
    expect(emulator.scans()).toHaveLength(3)
    const html = await (await fetch(`${emulator.url}/`)).text()
    expect(html).toContain('<table id="scans"')
    // Served with the scans already in it (escaped on the server), refreshed from /emulator/view.
    expect(html).toContain('<td data-label="openid">o_second</td>')
    expect(html).toContain("fetch('/emulator/view'")
  })

  it('POST /emulator/scan scans by scene_str too: the newest live code of the scene, or the scene as is', async () => {
    const cb = await fakeCallback((_req, res) => res.end('success'))
    const { emulator, stable, create, clock } = await setup({ callbackUrl: cb.url, demoOpenid: 'o_default_phone' })
    const token = (await stable()).access_token as string
    await create(token, strScene('pc_curl', 60))
    clock.advance(1000)
    const { ticket } = (await create(token, strScene('pc_curl', 60))).json as { ticket: string }
    const scan = (body: unknown) =>
      fetch(`${emulator.url}/emulator/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

    const byScene = await scan({ scene_str: 'pc_curl', openid: 'o_dev' })
    expect(byScene.status).toBe(200)
    expect(await byScene.json()).toMatchObject({ status: 200, event: { FromUserName: 'o_dev', Event: 'subscribe', EventKey: 'qrscene_pc_curl', Ticket: ticket } })
    // No openid: the demo user, as on the page; no code of ours: pushed as is, as scan({ sceneStr }) does.
    expect((await scan({ scene_str: 'pc_elsewhere', subscribed: true })).status).toBe(200)
    expect(emulator.scans().map(({ sceneStr, openid, ticket: t, event }) => ({ sceneStr, openid, ticket: t, event }))).toEqual([
      { sceneStr: 'pc_elsewhere', openid: 'o_default_phone', ticket: null, event: 'SCAN' },
      { sceneStr: 'pc_curl', openid: 'o_dev', ticket, event: 'subscribe' },
    ])

    for (const body of [{}, { scene_str: '' }, { scene_str: 7, openid: 'o' }, 'pc_curl']) {
      const refused = await scan(body)
      expect([refused.status, await refused.json()], JSON.stringify(body)).toEqual([400, { detail: 'ticket or scene_str is required' }])
    }
    expect(cb.seen).toHaveLength(2)
  })

  it('keeps the last 200', () => {
    const log = new ScanLog()
    const result = { attempts: 1, status: 200, body: 'success', reply: null, replyError: null, event: { Event: 'SCAN' } }
    for (let at = 1; at <= SCAN_LOG_LIMIT + 5; at++) log.add({ at, sceneStr: 's', openid: 'o', ticket: null }, result)
    const kept = log.newestFirst()
    expect(SCAN_LOG_LIMIT).toBe(200)
    expect(kept).toHaveLength(200)
    expect([kept[0]!.at, kept.at(-1)!.at]).toEqual([205, 6])
  })
})

describe('pushes', () => {
  it('are signed; in safe mode encrypted with msg_signature', async () => {
    const cb = await fakeCallback((_req, res) => res.end('success'))
    const { emulator } = await setup({ encodingAESKey: KEY, callbackUrl: cb.url })
    const result = await emulator.scan({ sceneStr: 'pc_s', openid: 'o_1' })
    expect(result).toMatchObject({ attempts: 1, status: 200, body: 'success', reply: null, replyError: null })
    const { url, body } = cb.seen[0]!
    const q = new URL(url, 'http://x').searchParams
    expect(q.get('signature')).toBe(computeSignature(ACCOUNT.token, q.get('timestamp')!, q.get('nonce')!))
    expect(q.get('encrypt_type')).toBe('aes')
    const outer = parseXml(body) as Record<string, string>
    expect(Object.keys(outer)).toEqual(['ToUserName', 'Encrypt'])
    expect(q.get('msg_signature')).toBe(computeSignature(ACCOUNT.token, q.get('timestamp')!, q.get('nonce')!, outer.Encrypt!))
    const inner = decryptMessage(decodeAesKey(KEY), outer.Encrypt!)
    expect(inner.appId).toBe(ACCOUNT.appId)
    // A new openid has not followed yet: it subscribes through the code.
    expect(parseXml(inner.message)).toMatchObject({ FromUserName: 'o_1', MsgType: 'event', Event: 'subscribe', EventKey: 'qrscene_pc_s' })
    await emulator.scan({ sceneStr: 'pc_s', openid: 'o_1' })
    expect(parseXml(decryptMessage(decodeAesKey(KEY), (parseXml(cb.seen[1]!.body) as Record<string, string>).Encrypt!).message)).toMatchObject({ Event: 'SCAN', EventKey: 'pc_s' })
  })

  it('are delivered three times in all when no answer comes in time, identically', async () => {
    const cb = await fakeCallback((_req, res, _body, n) => {
      if (n === 3) res.end('success') // the first two are left unanswered
    })
    const { emulator } = await setup({ callbackUrl: cb.url, pushTimeoutMs: 100 })
    const result = await emulator.scan({ sceneStr: 'pc_r', openid: 'o_1', subscribed: true })
    expect(result).toMatchObject({ attempts: 3, status: 200, body: 'success' })
    expect(new Set(cb.seen.map((s) => s.url + s.body)).size).toBe(1)
  })

  it('report no answer after three deliveries, and refuse expired or unknown codes', async () => {
    const cb = await fakeCallback(() => {})
    const { emulator, stable, create, clock } = await setup({ callbackUrl: cb.url, pushTimeoutMs: 50 })
    expect(await emulator.scan({ sceneStr: 'pc_n', openid: 'o' })).toMatchObject({ attempts: 3, status: null, replyError: expect.stringMatching(/no answer/) })
    const token = (await stable()).access_token as string
    const { ticket } = (await create(token, strScene('pc_e', 10))).json as { ticket: string }
    clock.advance(10_000)
    await expect(emulator.scan({ ticket, openid: 'o' })).rejects.toThrow(/expired/)
    await expect(emulator.scan({ ticket: 'nope', openid: 'o' })).rejects.toThrow(/unknown ticket/)
    emulator.setCallbackUrl(null)
    await expect(emulator.scan({ sceneStr: 'x', openid: 'o' })).rejects.toThrow(/setCallbackUrl/)
  })

  it('judge the answer as WeChat would', async () => {
    let answer = ''
    const cb = await fakeCallback((_req, res) => res.end(answer))
    const { emulator } = await setup({ callbackUrl: cb.url, encodingAESKey: KEY })
    answer = '<xml><ToUserName><![CDATA[o]]></ToUserName><FromUserName><![CDATA[gh]]></FromUserName><CreateTime>1</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[x]]></Content></xml>'
    expect((await emulator.scan({ sceneStr: 's', openid: 'o' })).replyError).toBe('safe mode needs an encrypted reply')
    answer = '{"ok":true}'
    expect((await emulator.scan({ sceneStr: 's', openid: 'o' })).replyError).toMatch(/neither/)
    answer = ''
    expect((await emulator.scan({ sceneStr: 's', openid: 'o' })).replyError).toBeNull()
  })
})
