// What the demo page's Chromium tests (browser.test.ts, browser-purchase.test.ts) share: Debian's
// chromium through playwright-core (never a download), example servers with a clock the test moves,
// and reading the page. Page-side code is given as strings: this project's TypeScript has no DOM types.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { ExampleConfig, RunningServer } from '@scanauth/example-shared'
import { startServer } from '../src/app'

const CHROMIUM = '/usr/bin/chromium'
/** Where the screenshots go (not committed). */
export const OUTPUT = fileURLToPath(new URL('../test-output/', import.meta.url))
export const DAY = 24 * 3600 * 1000
/** A free trial of about a minute (SCANAUTH_FREE_TRIAL_DAYS=0.0007), so "Purchase needed" comes quickly. */
export const SHORT_TRIAL_DAYS = 0.0007
/** Just past that trial. */
export const AFTER_SHORT_TRIAL = 61_000

/** Without chromium (apt-get install -y chromium) the tests are skipped on a workstation, but fail in CI. */
export const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI
if (skipBrowser) console.warn(`browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

/** Starts headless chromium; the screenshot folder is made too. */
export function launchChromium(): Promise<Browser> {
  mkdirSync(OUTPUT, { recursive: true })
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/** An example server (memory store, the emulators) whose clock runs `clock.ahead` ms ahead of the real one. */
export async function clockedServer(overrides: Partial<ExampleConfig> = {}): Promise<{ running: RunningServer; clock: { ahead: number } }> {
  const clock = { ahead: 0 }
  const running = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'memory' },
    wechat: { kind: 'emulator' },
    now: () => Date.now() + clock.ahead,
    log: () => {},
    ...overrides,
  })
  return { running, clock }
}

/** Collects the page's uncaught errors; the tests expect none. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  return errors
}

export function sceneOf(page: Page): Promise<string | undefined> {
  return page.locator('#card').getAttribute('data-scene').then((v) => v ?? undefined)
}

/** Waits until the QR image of the current scene has loaded, and returns that scene. */
export async function qrLoaded(page: Page): Promise<string | undefined> {
  await page.waitForFunction(`(() => {
    const img = document.getElementById('qr')
    return document.getElementById('card').dataset.state === 'pending' && !img.hidden && img.complete && img.naturalWidth > 0
  })()`)
  return sceneOf(page)
}

/** Signs in with the emulated phone, then moves past the trial and scans again: "Purchase needed". */
export async function reachPurchaseNeeded(page: Page, clock: { ahead: number }, tap = false) {
  const press = (name: string) => (tap ? page.getByRole('button', { name }).tap() : page.getByRole('button', { name }).click())
  await qrLoaded(page)
  await press('Scan with the emulated phone')
  await page.getByRole('heading', { name: 'Authorized' }).waitFor()
  clock.ahead += AFTER_SHORT_TRIAL
  await press('Sign out')
  await qrLoaded(page)
  await press('Scan with the emulated phone')
  await page.getByRole('heading', { name: 'Purchase needed' }).waitFor()
}

/** The plan cards shown, as their visible text on one line each. */
export async function planCards(page: Page): Promise<string[]> {
  await page.locator('#plans button.plan').first().waitFor()
  return (await page.locator('#plans button.plan').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())
}

/** Waits until the pay code's image has loaded. */
export async function payCodeLoaded(page: Page) {
  await page.waitForFunction(`(() => {
    const img = document.getElementById('pay-qr')
    return document.getElementById('card').dataset.state === 'paying' && img.complete && img.naturalWidth > 0
  })()`)
}

/** The answers of POST /auth/purchase the page received, in order. */
export function purchaseAnswers(page: Page): Array<Promise<{ status: number; body: Record<string, unknown> }>> {
  const answers: Array<Promise<{ status: number; body: Record<string, unknown> }>> = []
  page.on('response', (response) => {
    if (new URL(response.url()).pathname === '/auth/purchase') answers.push(response.json().then((body: Record<string, unknown>) => ({ status: response.status(), body })))
  })
  return answers
}

/** The status of `GET /auth/session` for `token`. */
export async function sessionStatus(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })
  await res.arrayBuffer()
  return res.status
}

/** The scanauth requests the page makes (`/auth/...`, path and query), in order. */
export function authRequests(page: Page): string[] {
  const seen: string[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname.startsWith('/auth/')) seen.push(`${url.pathname}${url.search}`)
  })
  return seen
}

/** How the client waits on the current scene (`events`, `long-poll` or `poll`), as the page last heard. */
export const transportOf = (page: Page) => page.locator('#card').getAttribute('data-transport')

export const savedToken = (page: Page) => page.evaluate(`localStorage.getItem('scanauth.session')`) as Promise<string | null>

/**
 * Every visible button lies inside the viewport with its whole label (nothing cut off at either
 * side or below), and the page does not scroll sideways.
 */
export async function expectNoClippedButton(page: Page, width: number) {
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width)
  const clipped = await page.evaluate(`[...document.querySelectorAll('button')]
    .filter((b) => b.offsetParent !== null)
    .map((b) => ({ label: b.textContent, box: b.getBoundingClientRect(), sw: b.scrollWidth, cw: b.clientWidth, sh: b.scrollHeight, ch: b.clientHeight }))
    .filter((b) => b.box.left < 0 || b.box.right > ${width} || b.sw > b.cw || b.sh > b.ch)
    .map((b) => b.label)`)
  expect(clipped).toEqual([])
}

/** The repository root, where `npm start` runs. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** The example server started as `npm start` starts it, and the addresses its start-up lines name. */
export interface StartedExample {
  child: ChildProcess
  /** The app: `http://127.0.0.1:<port>`. */
  url: string
  /** The WeChat (Official Account) emulator. */
  wechatUrl: string
  /** The WeChat Pay emulator. */
  payUrl: string
  /** Everything it printed so far. */
  output(): string
  exited: Promise<unknown>
  /** Stops npm and the server it started (its own process group). */
  stop(): Promise<void>
}

/**
 * `npm start` from the repository root, fully emulated, on a free port, with a memory store and
 * `env` on top (none of the runner's scanauth, WeChat or store variables leak in); resolves once it listens.
 */
export async function startExample(env: Record<string, string>): Promise<StartedExample> {
  const childEnv: NodeJS.ProcessEnv = { npm_config_update_notifier: 'false' }
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(WECHAT_|WECHATPAY_|SCANAUTH_|REDIS_URL$|DATABASE_URL$|PORT$|HOST$|npm_)/i.test(key)) childEnv[key] = value
  }
  Object.assign(childEnv, { PORT: '0', SCANAUTH_STORE: 'memory' }, env)
  // Its own process group, so that the end of the test stops npm and the server it started.
  const child = spawn('npm', ['start'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  const exited = new Promise((ok) => child.once('exit', ok))
  const url = await new Promise<string>((ok, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) ok(match[1]!)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('close', (code, signal) => fail(new Error(`npm start exited (${code ?? signal}) before listening:\n${output}`)))
  })
  const named = (pattern: RegExp) => {
    const match = pattern.exec(output)
    if (match === null) throw new Error(`the start-up lines do not say ${pattern}:\n${output}`)
    return match[1]!
  }
  return {
    child,
    url,
    wechatUrl: named(/WeChat emulator at (http:\/\/\S+) with/),
    payUrl: named(/WeChat Pay emulator at (http:\/\/\S+) \(/),
    output: () => output,
    exited,
    async stop() {
      if (child.pid !== undefined && child.exitCode === null) {
        process.kill(-child.pid, 'SIGTERM')
        await exited
      }
    },
  }
}
