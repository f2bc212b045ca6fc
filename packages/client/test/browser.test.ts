// The same flows in Chromium (Debian's, through playwright-core; never a download): the built ESM
// bundle (dist/index.js, built first when missing or older than src/) is loaded into a page that a
// loopback proxy serves beside the example server's routes (one origin, so no CORS). Signing in over
// the event stream (counted at the proxy), behind a proxy refusing or holding the stream silent,
// need_purchase then a purchase paid through the Pay emulator, and an abort that leaves no request open.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startExample, type Example } from './support/example'
import { startProxy, type EventsMode, type OwnPage, type Proxy } from './support/proxy'

const CHROMIUM = '/usr/bin/chromium'
const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const BUNDLE = `${PACKAGE}dist/index.js`

// Without chromium (apt-get install -y chromium) the test is skipped on a workstation, but fails in CI.
const missing = !existsSync(CHROMIUM)
if (missing && !process.env.CI) console.warn(`client browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

/** Builds the package unless dist/index.js is newer than every source file. */
function builtBundle(): string {
  const newestSource = Math.max(...readdirSync(`${PACKAGE}src`).map((f) => statSync(`${PACKAGE}src/${f}`).mtimeMs))
  if (!existsSync(BUNDLE) || statSync(BUNDLE).mtimeMs < newestSource) {
    const built = spawnSync('npm', ['run', 'build'], { cwd: PACKAGE, encoding: 'utf8' })
    if (built.status !== 0) throw new Error(`building @scanauth/client failed:\n${built.stdout}${built.stderr}`)
  }
  return readFileSync(BUNDLE, 'utf8')
}

describe.skipIf(missing && !process.env.CI)('@scanauth/client in chromium', () => {
  let browser: Browser
  let example: Example
  let pages: Record<string, OwnPage>
  const proxies: Proxy[] = []

  beforeAll(async () => {
    pages = {
      '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><title>client</title><p>client test</p>' },
      '/client.js': { type: 'text/javascript; charset=utf-8', body: builtBundle() },
      // Served here, so that the proxy counts only the client's requests.
      '/favicon.ico': { type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg"/>' },
    }
    example = await startExample({ freeTrialDays: 0.0007 })
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await Promise.all(proxies.map((p) => p.close()))
    await example?.server.close()
  })

  async function open(mode: EventsMode): Promise<{ page: Page; proxy: Proxy }> {
    const proxy = await startProxy(example.server.url, mode, pages)
    proxies.push(proxy)
    const page = await browser.newPage()
    await page.goto(`${proxy.url}/`)
    // The page's own code is given as strings: this project's TypeScript has no DOM types.
    await page.evaluate(`(async () => {
      const { createScanAuthClient } = await import('/client.js')
      window.client = createScanAuthClient({ baseUrl: '/auth' })
      window.codes = []
      window.transports = []
      window.controller = new AbortController()
    })()`)
    return { page, proxy }
  }

  /** Starts a sign-in in the page; the emulated phone scans its first code as `openid` (unless null). */
  async function signIn(page: Page, openid: string | null, options = '{}'): Promise<unknown> {
    const outcome = page.evaluate(`window.client.signIn({
        deviceId: 'chromium', signal: window.controller.signal, ...${options},
        onCode: (c) => window.codes.push(c),
        onStatus: (s) => window.transports.push(s.transport + ':' + s.status),
      }).then((r) => r, (e) => ({ error: e.code, name: e.name }))`)
    const sceneStr = (await (await page.waitForFunction('window.codes[0]?.sceneStr')).jsonValue()) as string
    if (openid !== null) await example.scan(sceneStr, openid)
    return outcome
  }

  it('signs in over the event stream with 2 requests', async () => {
    const { page, proxy } = await open('pass')
    expect(await signIn(page, 'o_chromium_events')).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
    expect(await page.evaluate('window.transports.at(-1)')).toBe('events:authorized')
    await page.waitForTimeout(300)
    expect(proxy.requests).toEqual(['/auth/create_scene', '/auth/events'])
    await page.close()
  })

  for (const [mode, name] of [[{ refuse: 502 }, 'refuses'], ['silent', 'holds silent']] as Array<[EventsMode, string]>) {
    it(`falls back to the long poll when a proxy ${name} the stream`, async () => {
      const { page, proxy } = await open(mode)
      expect(await signIn(page, `o_chromium_${name.length}`)).toMatchObject({ status: 'authorized' })
      expect(await page.evaluate('window.transports.at(-1)')).toBe('long-poll:authorized')
      expect(proxy.requests.slice(0, 3)).toEqual(['/auth/create_scene', '/auth/events', '/auth/status'])
      await page.close()
    })
  }

  it('need_purchase, then a purchase paid through the Pay emulator', async () => {
    const { page } = await open('pass')
    example.clock.ahead = 0
    expect(await signIn(page, 'o_chromium_buyer')).toMatchObject({ status: 'authorized' })
    example.clock.ahead = 61_000
    await page.evaluate('window.codes = []')
    const needs = (await signIn(page, 'o_chromium_buyer')) as { status: string; sceneStr: string }
    expect(needs.status).toBe('need_purchase')
    const paid = page.evaluate(`(async () => {
      const [plan] = await window.client.listPlans()
      return window.client.purchase({ sceneStr: ${JSON.stringify(needs.sceneStr)}, plan: plan.id, onCode: (o) => (window.order = o) })
    })()`)
    const orderId = (await (await page.waitForFunction('window.order?.orderId')).jsonValue()) as string
    await example.pay(orderId)
    expect(await paid).toMatchObject({ status: 'authorized', orderId, sceneStr: needs.sceneStr })
    example.clock.ahead = 0
    await page.close()
  })

  it('an abort rejects aborted and leaves no request open', async () => {
    const { page, proxy } = await open('pass')
    const outcome = signIn(page, null)
    await page.waitForFunction('window.transports.length > 0')
    await page.evaluate('window.controller.abort()')
    expect(await outcome).toEqual({ error: 'aborted', name: 'ScanAuthClientError' })
    await vi.waitFor(async () => expect([proxy.inFlight(), await example.openRequests()]).toEqual([0, 0]), { timeout: 3000, interval: 50 })
    await page.close()
  })
})
