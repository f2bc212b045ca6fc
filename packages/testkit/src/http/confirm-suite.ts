/**
 * Confirm on the phone and the poll secret over a framework adapter's real routes
 * (docs/behaviour.md, B-confirm-1…12, B-secret-1…4): the phone's browser through the OAuth redirect
 * to the page and its two forms, the device's poll and event stream, every refusal as a page with
 * its 4xx. Part of {@link describeHttpRoutes}.
 *
 * @module
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth } from '@scanauth/core'
import { RecordingQrProvider } from '../qr'
import { TEST_AUTHORIZE_BASE, TestWebOAuth } from '../web-oauth'
import { fetchJson, postJson } from './fetch-json'
import type { HttpRoutesHost } from './host'
import { openEventStream } from './sse'

/** A service in `confirm: 'link'` mode; its page's public address is the host's own. */
function confirmingAuth(oauth: TestWebOAuth, options: { requirePollSecret?: boolean } = {}): ScanAuth {
  return createScanAuth({
    store: new MemoryStore(),
    qr: new RecordingQrProvider(),
    confirm: 'link',
    confirmation: { url: 'https://app.example.test/auth/confirm', oauth },
    ...options,
  })
}

/** The hidden fields and buttons of the page's forms. */
function formsOf(html: string): { ticket: string; csrf: string; decisions: string[] } {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''
  const decisions = [...html.matchAll(/<button type="submit" name="decision" value="([a-z]+)"/g)].map((m) => m[1] as string)
  return { ticket: field('ticket'), csrf: field('csrf'), decisions }
}

/** What the phone does: open the link, go through WeChat OAuth as `openid`, land on the page. */
async function openAsPhone(url: string, oauth: TestWebOAuth, ticket: string, openid: string): Promise<Response> {
  const first = await fetch(`${url}/auth/confirm?ticket=${ticket}`, { redirect: 'manual' })
  expect(first.status).toBe(302)
  const location = new URL(first.headers.get('location') as string)
  expect(`${location.origin}${location.pathname}`).toBe(TEST_AUTHORIZE_BASE)
  const back = new URL(location.searchParams.get('redirect_uri') as string)
  expect(back.searchParams.get('ticket')).toBe(ticket)
  const state = location.searchParams.get('state') as string
  return fetch(`${url}/auth/confirm?ticket=${ticket}&code=${oauth.issueCode(openid)}&state=${state}`)
}

/** Posts a form as the page's browser would. */
function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${url}/auth/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
}

/** A scanned scene over HTTP: created by the device, scanned in WeChat. */
async function scannedScene(url: string, auth: ScanAuth, deviceId = 'tv-livingroom', openid = 'alice') {
  const created = await postJson(`${url}/auth/create_scene`, { device_id: deviceId })
  const scene = created.body.scene_str as string
  const scan = await auth.handleScan({ sceneStr: scene, openid })
  return { scene, created: created.body, ticket: (scan as { ticket: string }).ticket }
}

/** Registers the confirm-on-the-phone cases for one adapter. */
export function describeConfirmRoutes(framework: string, host: HttpRoutesHost): void {
  describe(`the ${framework} adapter's confirm page and poll secret (B-confirm-1…12, B-secret-1…4)`, () => {
    it('confirms through the OAuth redirect: the device sees scanned, then authorized, on its event stream', async () => {
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(oauth)
      const url = await host(auth, {})
      const created = await postJson(`${url}/auth/create_scene`, { device_id: 'tv-livingroom' })
      const scene = created.body.scene_str as string
      const stream = await openEventStream(`${url}/auth/events?scene=${scene}`)
      expect((await stream.next())?.id).toBe('pending')
      const ticket = ((await auth.handleScan({ sceneStr: scene, openid: 'alice' })) as { ticket: string }).ticket
      expect(await stream.next()).toMatchObject({ id: 'scanned', event: 'status', data: '{"status":"scanned"}' })
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'scanned' })
      const page = await openAsPhone(url, oauth, ticket, 'alice')
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(page.headers.get('cache-control')).toBe('no-store')
      expect(page.headers.get('x-frame-options')).toBe('DENY')
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      const html = await page.text()
      expect(html).toContain('tv-livingroom')
      const forms = formsOf(html)
      expect(forms.ticket).toBe(ticket)
      expect(forms.decisions.sort()).toEqual(['confirm', 'deny'])
      const done = await postForm(url, { ticket, csrf: forms.csrf, decision: 'confirm' })
      expect(done.status).toBe(200)
      expect(await done.text()).toContain('Signed in')
      const authorized = await stream.next()
      expect(authorized?.id).toBe('authorized')
      expect(JSON.parse(authorized?.data ?? '{}')).toMatchObject({ status: 'authorized', session_token: expect.any(String) })
      expect(await stream.next()).toBeUndefined()
    })

    it('deny ends the scene for the device: denied on the poll and the long poll, the stream ends', async () => {
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(oauth)
      const url = await host(auth, {})
      const { scene, ticket } = await scannedScene(url, auth)
      const waiting = fetchJson(`${url}/auth/status?scene=${scene}&wait=10`)
      const forms = formsOf(await (await openAsPhone(url, oauth, ticket, 'alice')).text())
      const denied = await postForm(url, { ticket, csrf: forms.csrf, decision: 'deny' })
      expect(denied.status).toBe(200)
      expect(await denied.text()).toContain('Sign-in denied')
      expect((await waiting).body).toEqual({ status: 'denied' })
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'denied' })
      const stream = await openEventStream(`${url}/auth/events?scene=${scene}`)
      expect((await stream.next())?.id).toBe('denied')
      expect(await stream.next()).toBeUndefined()
    })

    it('shows the device label escaped, with bidirectional and invisible characters made harmless', async () => {
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(oauth)
      const url = await host(auth, {})
      const { ticket } = await scannedScene(url, auth, '<script>alert(1)</script>\u202Eexe.txt\u200B')
      const html = await (await openAsPhone(url, oauth, ticket, 'alice')).text()
      expect(html).not.toContain('<script>')
      expect(html).not.toMatch(/[\u202E\u200B]/)
      expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;\uFFFDexe.txt\uFFFD')
    })

    it('refuses bad input with a 4xx page and changes nothing (B-confirm-12)', async () => {
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(oauth)
      const url = await host(auth, {})
      const { scene, ticket } = await scannedScene(url, auth)
      const expectPage = async (response: Response, status: number, code?: string) => {
        expect(response.status).toBe(status)
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
        // The page is for people; its code is for programs (B-wire-7).
        if (code !== undefined) expect(response.headers.get('x-scanauth-error')).toBe(code)
        expect(response.headers.get('x-scanauth-error')).toMatch(/^[a-z_]+$/)
        expect(await response.text()).toContain('Nothing was changed.')
      }
      await expectPage(await fetch(`${url}/auth/confirm`), 400, 'invalid_request')
      await expectPage(await fetch(`${url}/auth/confirm?ticket=${'A'.repeat(43)}`), 404, 'confirm_ticket_invalid')
      await expectPage(await fetch(`${url}/auth/confirm?ticket=${ticket}&code=abc&state=wrong`), 400)
      const location = new URL((await fetch(`${url}/auth/confirm?ticket=${ticket}`, { redirect: 'manual' })).headers.get('location') as string)
      const state = location.searchParams.get('state') as string
      await expectPage(await fetch(`${url}/auth/confirm?ticket=${ticket}&code=not-issued&state=${state}`), 400)
      // A forwarded link: the person who opened it is not the one who scanned.
      await expectPage(await openAsPhone(url, oauth, ticket, 'mallory'), 403, 'confirm_wrong_user')
      await expectPage(await postForm(url, { ticket, decision: 'confirm' }), 403, 'confirm_csrf_invalid')
      await expectPage(await postForm(url, { ticket, csrf: 'x', decision: 'confirm' }), 403)
      const forms = formsOf(await (await openAsPhone(url, oauth, ticket, 'alice')).text())
      await expectPage(await postForm(url, { ticket, csrf: forms.csrf }), 400)
      await expectPage(await postForm(url, { ticket, csrf: forms.csrf, decision: 'yes' }), 400)
      await expectPage(await postForm(url, { csrf: forms.csrf, decision: 'confirm' }), 400)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'scanned' })
      expect((await postForm(url, { ticket, csrf: forms.csrf, decision: 'confirm' })).status).toBe(200)
      // Used: the same form again, and the link again.
      await expectPage(await postForm(url, { ticket, csrf: forms.csrf, decision: 'deny' }), 410)
      await expectPage(await fetch(`${url}/auth/confirm?ticket=${ticket}`), 410)
      // A HEAD (a link preview, a prefetch) runs nothing: the page's headers, no code spent.
      const head = await fetch(`${url}/auth/confirm?ticket=${ticket}&code=x&state=${state}`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      const put = await fetch(`${url}/auth/confirm`, { method: 'PUT' })
      expect(put.status).toBe(405)
      expect(put.headers.get('allow')).toBe('GET, POST')
      await put.body?.cancel()
    })

    it('without confirm on the phone, {base}/confirm is not ours: the app\'s own route answers', async () => {
      const url = await host(createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() }), {})
      const answer = await fetch(`${url}/auth/confirm?ticket=${'A'.repeat(43)}`)
      // The framework's own 404, not a confirm page.
      expect(answer.status).toBe(404)
      expect(answer.headers.get('x-frame-options')).toBeNull()
      expect(await answer.text()).not.toContain('Nothing was changed.')
    })

    it('gives the session token only to a poll that presents the poll secret (B-secret-2)', async () => {
      const auth = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider(), requirePollSecret: true })
      const url = await host(auth, {})
      const created = await postJson(`${url}/auth/create_scene`, { device_id: 'tv' })
      const { scene_str: scene, poll_secret: secret } = created.body as { scene_str: string; poll_secret: string }
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'pending' })
      await auth.handleScan({ sceneStr: scene, openid: 'alice' })
      const refused = await fetchJson(`${url}/auth/status?scene=${scene}`)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ detail: expect.stringContaining('poll secret') })
      expect((await fetchJson(`${url}/auth/status?scene=${scene}&wait=5`)).status).toBe(403)
      const stream = await fetch(`${url}/auth/events?scene=${scene}`)
      expect(stream.status).toBe(403)
      await stream.body?.cancel()
      const withHeader = await fetchJson(`${url}/auth/status?scene=${scene}`, { headers: { 'x-scanauth-poll-secret': secret } })
      expect(withHeader.body).toMatchObject({ status: 'authorized', session_token: expect.any(String) })
      // Never from the query string, which access logs keep beside scene= (B-secret-2).
      expect((await fetchJson(`${url}/auth/status?scene=${scene}&poll_secret=${secret}`)).status).toBe(403)
    })
  })
}
