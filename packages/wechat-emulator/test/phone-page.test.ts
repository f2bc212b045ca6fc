// The emulated phone's page over HTTP: the account's replies shown with their links tappable (and
// nothing else of them as markup), a link opening as the scanner, scanned codes shown as scanned,
// and the favicon.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createWechatCallback } from '@scanauth/wechat'
import type { ScanResult } from '@scanauth/core'
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
