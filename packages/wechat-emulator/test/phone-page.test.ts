// The emulated phone's page over HTTP: the account's replies shown with their links tappable (and
// nothing else of them as markup), a link opening as the scanner, a confirm link marked used once its
// page was answered (core's confirm on the phone behind a real app), scanned codes shown as scanned,
// the newest scan first, and the favicon.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { createWechatCallback, createWechatQrProvider, createWechatWebOAuth } from '@scanauth/wechat'
import { createHttpHandler, createScanAuth, MemoryStore, responseText, type ScanResult } from '@scanauth/core'
import { startWechatEmulator, type WechatEmulatorOptions } from '../src/index'
import { decodeEntities, replyHtml } from '../src/reply-html'
import { closer } from './closer'

const ACCOUNT = { appId: 'wx_emulator_phone', appSecret: 'the-secret', token: 'push-token' }
const CONFIRM_URL = 'https://app.example/auth/confirm?ticket=T_1&lang=en'
const resources = closer()
afterEach(() => resources.closeAll())

/** An app whose callback is @scanauth/wechat's, answering every scan with `result`. */
async function appAnswering(result: () => ScanResult) {
  const callback = createWechatCallback({ auth: { handleScan: async () => result() }, appId: ACCOUNT.appId, token: ACCOUNT.token })
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
    const answer = await callback({ method: req.method ?? 'GET', query: new URL(req.url ?? '/', 'http://x').searchParams, body: Buffer.concat(chunks) })
    res.writeHead(answer.status, answer.headers).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechat`
}

/** An app whose callback answers every scan with the text reply `content`, as an account's own code could. */
async function appReplying(content: string) {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
    const from = /<FromUserName><!\[CDATA\[([^\]]*)\]\]>/.exec(Buffer.concat(chunks).toString())?.[1] ?? ''
    const to = /<ToUserName><!\[CDATA\[([^\]]*)\]\]>/.exec(Buffer.concat(chunks).toString())?.[1] ?? ''
    res.writeHead(200, { 'content-type': 'application/xml' }).end(
      `<xml><ToUserName><![CDATA[${from}]]></ToUserName><FromUserName><![CDATA[${to}]]></FromUserName><CreateTime>${Math.floor(Date.now() / 1000)}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[${content}]]></Content></xml>`,
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechat`
}

async function setup(result: () => ScanResult, options: Partial<WechatEmulatorOptions> = {}) {
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, callbackUrl: await appAnswering(result), ...options }))
  const page = async (path = '/') => (await fetch(`${emulator.url}${path}`)).text()
  return { emulator, page }
}

const scanned = (deviceId: string): ScanResult => ({ result: 'scanned', deviceId, ticket: 'T_1', confirmUrl: CONFIRM_URL, expiresAt: Date.now() + 120_000 })

describe('the reply on the phone', () => {
  it('is shown with its link tappable, opening as the scanner; the device label stays text', async () => {
    const { emulator, page } = await setup(() => scanned('<script>alert(1)</script> TV'))
    const pushed = await emulator.scan({ sceneStr: 'pc_phone', openid: 'o_alice' })
    expect(pushed.reply?.Content).toContain('<a href="https://app.example/auth/confirm?ticket=T_1&amp;lang=en">Confirm or deny</a>')

    const html = await page()
    // Through the emulator's own address: the cookie lands on the host the authorize page is reached at.
    const open = `${emulator.url}/emulator/open?${new URLSearchParams({ openid: 'o_alice', url: CONFIRM_URL })}`
    expect(html).toContain(`<a class="reply-link" href="${open.replace(/&/g, '&#38;')}"`)
    expect(html).toContain('>Confirm or deny</a>')
    expect(html).toContain('Sign-in request for “&#60;script&#62;alert(1)&#60;/script&#62; TV”.')
    expect(html).not.toContain('<script>alert')
    // The JSON the page refreshes from carries the same rendering.
    const view = (await (await fetch(`${emulator.url}/emulator/view`)).json()) as { scans: string; scanCount: number }
    expect(view.scanCount).toBe(1)
    expect(view.scans).toContain(`href="${open.replace(/&/g, '&#38;')}"`)
  })

  it('a tap makes the scanner the phone’s user (the cookie the authorize page reads), then goes to the link', async () => {
    const { emulator } = await setup(() => scanned('tv'))
    const res = await fetch(`${emulator.url}/emulator/open?${new URLSearchParams({ openid: 'o_alice', url: CONFIRM_URL })}`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(CONFIRM_URL)
    const cookie = res.headers.get('set-cookie') ?? ''
    expect(cookie).toBe('wxemu_openid=o_alice; Path=/; SameSite=Lax')
    const authorize = await fetch(
      `${emulator.url}/connect/oauth2/authorize?appid=${ACCOUNT.appId}&redirect_uri=${encodeURIComponent(CONFIRM_URL)}&response_type=code&scope=snsapi_base&state=S`,
      { redirect: 'manual', headers: { cookie: cookie.split(';')[0] as string } },
    )
    const code = new URL(authorize.headers.get('location') ?? '').searchParams.get('code') ?? ''
    const token = await fetch(`${emulator.url}/sns/oauth2/access_token?appid=${ACCOUNT.appId}&secret=${ACCOUNT.appSecret}&code=${code}&grant_type=authorization_code`)
    expect(((await token.json()) as { openid: string }).openid).toBe('o_alice')
    for (const bad of ['javascript:alert(1)', '']) {
      expect((await fetch(`${emulator.url}/emulator/open?${new URLSearchParams({ openid: 'o', url: bad })}`, { redirect: 'manual' })).status).toBe(400)
    }
  })

  it('says what WeChat says when the account cannot answer, and nothing for a plain success', async () => {
    let fail = true
    const { emulator, page } = await setup(() => {
      if (fail) throw new Error('store down')
      return { result: 'invalid' }
    })
    await emulator.scan({ sceneStr: 'pc_a', openid: 'o_a' })
    expect(await page()).toContain('This Official Account cannot provide service right now.')
    fail = false
    const ok = await emulator.scan({ sceneStr: 'pc_b', openid: 'o_b' })
    expect(ok.reply?.Content).toMatch(/expired or was already used/)
    expect(await page()).toContain('<div class="bubble">This QR code has expired or was already used.')
  })
})

/** Core with confirm on the phone behind one node:http app (the callback and the auth routes), the emulator its WeChat. */
async function confirmWorld() {
  const emulator = resources.add(await startWechatEmulator(ACCOUNT))
  const app: { handle?: ReturnType<typeof createHttpHandler>; callback?: ReturnType<typeof createWechatCallback> } = {}
  const confirmRequests: string[] = []
  const server = createServer(async (req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const chunks: Buffer[] = []
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
    const body = Buffer.concat(chunks)
    if (url.pathname === '/wechat/callback' && app.callback) {
      const answer = await app.callback({ method: req.method ?? 'GET', query: url.searchParams, body })
      return void res.writeHead(answer.status, answer.headers).end(answer.body)
    }
    if (url.pathname === '/auth/confirm') confirmRequests.push(`${req.method} ${url.searchParams.has('code') ? 'with a code' : 'without a code'}`)
    const answer = await app.handle?.({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body })
    if (answer === undefined) return void res.writeHead(404).end()
    res.writeHead(answer.status, answer.headers).end(responseText(answer))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const store = new MemoryStore()
  const auth = createScanAuth({
    store,
    qr: createWechatQrProvider(emulator.qrProviderOptions()),
    confirm: 'link',
    confirmation: { url: `${appUrl}/auth/confirm`, oauth: createWechatWebOAuth(emulator.webOAuthOptions()) },
  })
  app.handle = createHttpHandler(auth)
  app.callback = createWechatCallback({ auth, store, appId: ACCOUNT.appId, token: ACCOUNT.token })
  emulator.setCallbackUrl(`${appUrl}/wechat/callback`)
  /** Scans a new scene as `openid`; the reply's link, as WeChat opens it. */
  const scanNew = async (openid: string) => {
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const pushed = await emulator.scan({ sceneStr, openid })
    const href = /<a href="([^"]*)">/.exec(pushed.reply?.Content ?? '')?.[1] ?? ''
    return { sceneStr, link: href.replace(/&amp;/g, '&') }
  }
  /** Opens the link on the phone as `openid` and answers its page with `decision`. */
  const answer = async (link: string, openid: string, decision: 'confirm' | 'deny') => {
    const html = await (await fetch(await emulator.openInWechat(link, { openid }))).text()
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''
    const decided = await fetch(`${appUrl}/auth/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket: field('ticket'), csrf: field('csrf'), decision }).toString(),
    })
    expect(decided.status).toBe(200)
  }
  const view = async () => ((await (await fetch(`${emulator.url}/emulator/view`)).json()) as { scans: string }).scans
  return { emulator, auth, answer, scanNew, view, confirmRequests }
}

/** The scan rows of a view, each with its scene. */
const rowsOf = (scans: string) => scans.split('<tr>').slice(1)

describe('a confirm link', () => {
  it('is marked used once its page was answered, not before, and asking about it spends nothing', async () => {
    const { auth, answer, scanNew, view, confirmRequests } = await confirmWorld()
    const first = await scanNew('o_alice')
    const second = await scanNew('o_bob')
    expect(first.link).toMatch(/\/auth\/confirm\?ticket=/)

    // Open: the app sends the phone on to WeChat's authorize page; nothing is marked.
    const before = await view()
    expect(before).not.toContain('reply-link used')
    expect(before).not.toContain('link-used')
    // The emulator asked the app as the phone would open the link again, without a code.
    expect(confirmRequests).toContain('GET without a code')

    await answer(first.link, 'o_alice', 'confirm')
    expect(await auth.getStatus(first.sceneStr)).toMatchObject({ status: 'authorized' })
    // At most once a second per open link, so the next view may need a moment.
    await expect.poll(async () => rowsOf(await view()).find((row) => row.includes(first.sceneStr)), { timeout: 5000 }).toContain('reply-link used')
    const rows = rowsOf(await view())
    const answered = rows.find((row) => row.includes(first.sceneStr)) as string
    expect(answered).toContain('<span class="link-used">used · Already answered</span>')
    expect(answered).toContain('title="Used: the app answers')
    // The other link is still open, and still works after being asked about.
    const open = rows.find((row) => row.includes(second.sceneStr)) as string
    expect(open).not.toContain('link-used')
    await answer(second.link, 'o_bob', 'deny')
    expect(await auth.getStatus(second.sceneStr)).toEqual({ status: 'denied' })
    await expect.poll(async () => rowsOf(await view()).find((row) => row.includes(second.sceneStr)), { timeout: 5000 }).toContain('used · Already answered')

    // A used link is asked about once: further views ask the app nothing.
    const asked = confirmRequests.length
    await sleep(1100)
    await view()
    await view()
    expect(confirmRequests.length).toBe(asked)
  })

  it('is the only link of a reply the emulator asks about', async () => {
    const requests: string[] = []
    const other = createServer((req, res) => {
      requests.push(req.url ?? '')
      res.writeHead(410).end('<title>Gone</title>')
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    resources.add({ close: () => new Promise<void>((resolve) => (other.close(() => resolve()), other.closeAllConnections())) })
    const base = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
    const reply = `<a href="${base}/news?ticket=1">News</a> <a href="${base}/auth/confirm?ticket=T_9">Confirm or deny</a>`
    const { emulator, page } = await setup(() => ({ result: 'invalid' }))
    // The app's reply is the test's own, as an account's text reply.
    emulator.setCallbackUrl(await appReplying(reply))
    await emulator.scan({ sceneStr: 'pc_links', openid: 'o_carol' })
    const html = await page()
    expect(requests).toEqual(['/auth/confirm?ticket=T_9'])
    expect(html).toContain('<span class="link-used">used · Gone</span>')
    expect(html.match(/reply-link used/g)).toHaveLength(1)
  })
})

describe('the scans', () => {
  it('are listed newest first by when they were made, also when an older scan\'s push ends last', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    // The first scan's callback answers only once the second scan is done.
    const url = await appAnswering(() => (++calls === 1 ? (held.then(() => ({ result: 'invalid' })) as unknown as ScanResult) : { result: 'invalid' }))
    const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, callbackUrl: url }))
    const older = emulator.scan({ sceneStr: 'pc_older', openid: 'o_first' })
    await expect.poll(() => calls).toBe(1)
    await sleep(5)
    await emulator.scan({ sceneStr: 'pc_newer', openid: 'o_second' })
    release()
    await older
    expect(emulator.scans().map((scan) => scan.sceneStr)).toEqual(['pc_newer', 'pc_older'])
    const html = await (await fetch(`${emulator.url}/`)).text()
    expect(html.indexOf('pc_newer')).toBeGreaterThan(-1)
    expect(html.indexOf('pc_newer')).toBeLessThan(html.indexOf('pc_older'))
  })
})

describe('the codes', () => {
  it('a scanned code is shown as scanned, by whom, with "Scan again" instead of "Scan"', async () => {
    const { emulator, page } = await setup(() => ({ result: 'authorized', userId: 1 }))
    const token = (await (await fetch(`${emulator.url}/cgi-bin/token?grant_type=client_credential&appid=${ACCOUNT.appId}&secret=${ACCOUNT.appSecret}`)).json()) as { access_token: string }
    const create = (scene: string) =>
      fetch(`${emulator.url}/cgi-bin/qrcode/create?access_token=${token.access_token}`, {
        method: 'POST',
        body: JSON.stringify({ expire_seconds: 60, action_name: 'QR_STR_SCENE', action_info: { scene: { scene_str: scene } } }),
      })
    await create('pc_fresh')
    await create('pc_used')
    await emulator.scan({ sceneStr: 'pc_used', openid: 'o_scanner' })
    const html = await page()
    const boxes = html.split('<div class="code').slice(1)
    const fresh = boxes.find((b) => b.includes('pc_fresh')) ?? ''
    const used = boxes.find((b) => b.includes('pc_used')) ?? ''
    expect(fresh).toContain('>Scan</button>')
    expect(used.startsWith(' scanned"')).toBe(true)
    expect(used).toContain('Scanned by o_scanner at <time datetime=')
    expect(used).toContain('>Scan again</button>')
    expect(used).not.toContain('>Scan</button>')
    // The page of that one code (what a phone opens from the QR) shows it scanned too.
    const ticket = emulator.tickets().find((t) => t.sceneStr === 'pc_used')
    const one = await page(new URL(ticket?.url ?? '').pathname)
    expect(one).toContain('Scanned by o_scanner')
    expect(one).not.toContain('pc_fresh')
  })
})

describe('the page', () => {
  it('answers /favicon.ico with 204, not a 404', async () => {
    const { emulator } = await setup(() => ({ result: 'invalid' }))
    const res = await fetch(`${emulator.url}/favicon.ico`)
    expect(res.status).toBe(204)
  })

  it('lays the scans out as cards on a narrow screen', async () => {
    const { page } = await setup(() => ({ result: 'invalid' }))
    const html = await page()
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(html).toMatch(/@media \(max-width: 40rem\) \{\s*#scans thead \{ display: none \}/)
  })
})

describe('replyHtml', () => {
  it('makes only http(s) links of <a href>, escapes the rest, decodes the entities a reply uses', () => {
    const text = `Hi &amp; <b>bold</b> <a href='https://a.example/x?y=1&amp;z=2'>go <i>now</i></a> <a href="javascript:alert(1)">bad</a>`
    expect(replyHtml(text, 'o_1', 'http://127.0.0.1:9/emulator/open')).toBe(
      'Hi &#38; &#60;b&#62;bold&#60;/b&#62; ' +
        `<a class="reply-link" href="http://127.0.0.1:9/emulator/open?openid=o_1&#38;url=https%3A%2F%2Fa.example%2Fx%3Fy%3D1%26z%3D2" title="Opens https://a.example/x?y=1&#38;z=2 in WeChat as o_1">go &#60;i&#62;now&#60;/i&#62;</a> ` +
        '<span class="reply-link dead" title="javascript:alert(1) (not an http(s) link: not opened here)">bad</span>',
    )
    expect(decodeEntities('&lt;&#60;&#x3C;&quot;&apos;&#0;&#xD800;&nbsp;')).toBe('<<<"\'&#0;&#xD800;&nbsp;')
  })
})
