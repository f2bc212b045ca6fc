// Confirm on the phone end to end over real HTTP, without a browser: core (`confirm: 'link'`,
// MemoryStore) behind one node:http app serving the WeChat callback and the auth routes; the
// emulator pushes the scan, the reply carries the link, the emulated phone opens it (app → WeChat
// authorize → app with the code), and the page's form decides.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHttpHandler, createScanAuth, MemoryStore, responseText } from '@scanauth/core'
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatEmulator } from '@scanauth/wechat-emulator'
import { createWechatCallback, createWechatQrProvider, createWechatWebOAuth } from '../src/index'
import { closer, manualClock } from './helpers'

const ACCOUNT = { appId: 'wx_confirm_e2e_001', appSecret: 'confirm-secret', token: 'confirmToken' }
const resources = closer()
afterEach(() => resources.closeAll())

async function rawBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

async function world() {
  const clock = manualClock()
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, now: clock.now }))
  // The app's address is known only once it listens; core reads the confirm URL at creation.
  const app: { handle?: ReturnType<typeof createHttpHandler>; callback?: ReturnType<typeof createWechatCallback> } = {}
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const body = await rawBody(req)
    if (url.pathname === '/wechat/callback' && app.callback) {
      const answer = await app.callback({ method: req.method ?? 'GET', query: url.searchParams, body })
      return void res.writeHead(answer.status, answer.headers).end(answer.body)
    }
    const answer = await app.handle?.({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, clientAddress: '203.0.113.9' })
    if (answer === undefined) return void res.writeHead(404).end()
    res.writeHead(answer.status, answer.headers).end(responseText(answer))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const store = new MemoryStore()
  const auth = createScanAuth({
    store,
    now: clock.now,
    qr: createWechatQrProvider({ ...emulator.qrProviderOptions(), now: clock.now }),
    confirm: 'link',
    confirmation: { url: `${appUrl}/auth/confirm`, oauth: createWechatWebOAuth(emulator.webOAuthOptions()) },
  })
  app.handle = createHttpHandler(auth)
  app.callback = createWechatCallback({ auth, store, appId: ACCOUNT.appId, token: ACCOUNT.token, now: clock.now })
  emulator.setCallbackUrl(`${appUrl}/wechat/callback`)
  return { clock, emulator, auth, appUrl }
}

/** The link of a reply, as WeChat would open it (the reply is HTML: `&amp;` is `&`). */
function linkOf(reply: string | undefined): string {
  const href = /<a href="([^"]*)">/.exec(reply ?? '')?.[1]
  expect(href).toBeDefined()
  return (href as string).replace(/&amp;/g, '&')
}

/** The hidden fields of the confirm page's forms. */
function formOf(html: string): { ticket: string; csrf: string } {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''
  return { ticket: field('ticket'), csrf: field('csrf') }
}

describe('confirm on the phone', () => {
  it('scan → reply with the link → WeChat OAuth → the page → Confirm: the device is signed in', async () => {
    const { emulator, auth, appUrl } = await world()
    const scene = await auth.createScene({ deviceId: 'Office <PC>\u202E' })
    const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_alice' })
    expect(pushed.replyError).toBeNull()
    expect(pushed.reply?.Content).toMatch(/^Sign-in request for “Office &lt;PC&gt;\uFFFD”\. <a href="[^"]+">Confirm or deny<\/a> within 2 minutes\./)
    const link = linkOf(pushed.reply?.Content)
    expect(link.startsWith(`${appUrl}/auth/confirm?ticket=`)).toBe(true)
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'scanned' })

    const landing = await emulator.openInWechat(link, { openid: 'o_alice' })
    expect(new URL(landing).searchParams.get('code')).toBeTruthy()
    const page = await fetch(landing)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Office &#60;PC&#62;\uFFFD')
    const { ticket, csrf } = formOf(html)
    const decided = await fetch(`${appUrl}/auth/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket, csrf, decision: 'confirm' }).toString(),
    })
    expect(decided.status).toBe(200)
    expect(await decided.text()).toContain('Signed in')
    expect(await auth.getStatus(scene.sceneStr)).toMatchObject({ status: 'authorized' })
  })

  it('another WeChat user opening the link is refused, and the same code cannot be used twice', async () => {
    const { emulator, auth } = await world()
    const scene = await auth.createScene({ deviceId: 'tv' })
    const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_alice' })
    const link = linkOf(pushed.reply?.Content)

    const mallory = await emulator.openInWechat(link, { openid: 'o_mallory' })
    expect((await fetch(mallory)).status).toBe(403)
    const alice = await emulator.openInWechat(link, { openid: 'o_alice' })
    expect((await fetch(alice)).status).toBe(200)
    // WeChat's codes are single-use: a reload of the same address is refused by WeChat, not trusted.
    expect((await fetch(alice)).status).toBe(400)
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'scanned' })
  })

  it('Deny ends the scene as denied', async () => {
    const { emulator, auth, appUrl } = await world()
    const scene = await auth.createScene({ deviceId: 'tv' })
    const link = linkOf((await emulator.scan({ sceneStr: scene.sceneStr, openid: 'o_alice' })).reply?.Content)
    const html = await (await fetch(await emulator.openInWechat(link, { openid: 'o_alice' }))).text()
    const decided = await fetch(`${appUrl}/auth/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formOf(html), decision: 'deny' }).toString(),
    })
    expect(await decided.text()).toContain('Sign-in denied')
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'denied' })
  })
})
