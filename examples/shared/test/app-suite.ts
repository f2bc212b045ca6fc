/**
 * The example server's behaviour, the same for Express and Koa: each project's `app.test.ts` runs it
 * with its own `startServer`. Real sockets, the WeChat emulator in-process, real stores.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { closedPort, createPendingScene, eventually, fetchJson, pollAuthorized, postJson, useSession } from '@scanauth/testkit'
import { ConfigError, type ExampleConfig } from '../src/config'
import type { RunningServer } from '../src/serve'
import { describeDemoRoutes } from './demo-routes-suite'
import { describeExamplePayments } from './pay-suite'
import { describeExampleReminders } from './reminders-suite'
import { describeExampleOnPostgres } from './postgres-suite'
import { describeSafeDefaults } from './safe-defaults-suite'

/** An example's `startServer`: builds its app for `config` and listens. */
export type StartServer = (config: ExampleConfig) => Promise<RunningServer>

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Registers the example server suite for `framework`, run against its `startServer`, its safe defaults, its demo routes, its sales, its reminders, and its run on PostgreSQL. */
export function describeExampleApp(framework: 'express' | 'koa', startServer: StartServer): void {
  describeSafeDefaults(framework, startServer)
  describeDemoRoutes(framework, startServer)
  describeExamplePayments(framework, startServer)
  describeExampleReminders(framework, startServer)
  describeExampleOnPostgres(framework, startServer)
  const running: RunningServer[] = []
  const temp: string[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
    for (const dir of temp.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  async function start(overrides: Partial<ExampleConfig> = {}) {
    const lines: string[] = []
    const server = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      wechat: { kind: 'emulator' },
      log: (line) => lines.push(line),
      ...overrides,
    })
    running.push(server)
    return { server, url: server.url, lines }
  }

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), `scanauth-${framework}-`))
    temp.push(dir)
    return dir
  }

  /** Create → the emulated phone scans (a push to /wechat/callback) → poll: the session token. */
  async function signIn(url: string, server: RunningServer, openid = 'o_test_user_1'): Promise<{ scene: string; token: string }> {
    const scene = (await createPendingScene(url, `${framework}-device`)).scene_str as string
    const push = await server.wiring.emulator!.scan({ sceneStr: scene, openid })
    expect(push.status).toBe(200)
    return { scene, token: (await pollAuthorized(url, scene)).token }
  }

  describe(`the ${framework} example server's purge timer`, () => {
    it('deletes expired records on its timer, judging expiry by the service clock, and keeps live ones', async () => {
      let now = Date.parse('2026-01-01T00:00:00Z')
      const { url, lines } = await start({ now: () => now, purgeEveryMs: 20 })
      const expired = (await createPendingScene(url, 'purge-device-1')).scene_str as string
      // Past the scene's 300 s and the day of retention, by the service's clock only.
      now += 300_000 + 24 * 3600_000
      const live = (await createPendingScene(url, 'purge-device-2')).scene_str as string
      await eventually('a purge that deleted the expired scene', () => lines.some((line) => / purge: 1 scenes, 0 sessions, \d+ counters, 0 closed orders deleted/.test(line)))
      expect((await fetchJson(`${url}/auth/status?scene=${expired}`)).status).toBe(404)
      expect((await fetchJson(`${url}/auth/status?scene=${live}`)).body).toMatchObject({ status: 'pending' })
    })

    it('purges nothing when turned off, and says so at start; an hour apart by default', async () => {
      expect((await start()).lines.find((line) => line.includes('scanauth example'))).toMatch(/store memory \(purge every 60 min\)/)
      let now = Date.parse('2026-01-01T00:00:00Z')
      const { url, lines } = await start({ now: () => now, purgeEveryMs: false })
      expect(lines.find((line) => line.includes('scanauth example'))).toMatch(/store memory \(no purge\)/)
      const scene = (await createPendingScene(url, 'purge-device')).scene_str as string
      now += 300_000 + 24 * 3600_000
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(lines.filter((line) => / purge(:| failed)/.test(line))).toEqual([])
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'expired' })
    })
  })

  describe(`the ${framework} example server`, () => {
    it('runs the whole flow through the emulator: create, scan via the callback, poll, session, consume', async () => {
      const { server, url, lines } = await start()
      const created = await createPendingScene(url, 'flow-device')
      expect(created.qr_url.startsWith(server.wiring.emulator!.url)).toBe(true)
      const image = await fetch(created.qr_url)
      expect(image.headers.get('content-type')).toBe('image/png')
      expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(100)

      const scene = created.scene_str as string
      const push = await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'o_flow_user' })
      expect(push.status).toBe(200)
      expect(push.replyError).toBeNull()

      const { token, bearer } = await pollAuthorized(url, scene)
      await useSession(url, bearer, 'flow-device')
      expect((await fetchJson(`${url}/api/me`, { headers: bearer })).body).toMatchObject({ device_id: 'flow-device' })

      // A second scan of the same code changes nothing.
      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'o_someone_else' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body.session_token).toBe(token)

      const log = lines.join('\n')
      expect(log).toContain(`scene ${scene} created for device flow-device`)
      expect(log).toContain(`scan ${scene} by o_flow_user: authorized`)
      expect(log).toContain(`scan ${scene} by o_someone_else: invalid`)
    })

    it('serves the demo page, its files, and the demo endpoints', async () => {
      const { server, url } = await start()
      const page = await fetch(`${url}/`)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(await page.text()).toContain('Sign in with WeChat')
      for (const [path, type] of [['/app.js', /javascript/], ['/lib.js', /javascript/], ['/pay.js', /javascript/], ['/client.js', /javascript/], ['/style.css', /^text\/css/], ['/favicon.svg', /^image\/svg/]] as const) {
        const res = await fetch(`${url}${path}`)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toMatch(type)
        await res.arrayBuffer()
      }
      // The page's client is @scanauth/client bundled: one ES module, nothing left to resolve.
      const client = await (await fetch(`${url}/client.js`)).text()
      expect(client).toMatch(/^\/\/ @scanauth\/client for the scanauth demo page/)
      expect(client).toMatch(/export \{[^}]*\bcreateScanAuthClient\b[^}]*\}/)
      expect(client).not.toMatch(/^\s*import\s/m)
      expect((await fetch(`${url}/wait.js`)).status).toBe(404) // the page's own waiting is gone
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'memory', emulator: true, demo_openid: 'o_emulator_demo_user', pay_emulator: true, phone_pay: true, confirm: 'scan', reminders: false })

      // The page scans as the emulated phone's user, the one the emulator's own page scans as.
      const phone = (await fetchJson(`${url}/demo/config`)).body.demo_openid as string
      expect(await (await fetch(`${server.wiring.emulator!.url}/`)).text()).toContain(`data-openid="${phone}"`)

      const { body } = await postJson(`${url}/auth/create_scene`, { device_id: 'page-device' })
      const scan = await postJson(`${url}/demo/emulator-scan`, { scene_str: body.scene_str, openid: phone })
      expect(scan.status).toBe(200)
      expect(scan.body).toMatchObject({ scanned: body.scene_str })
      expect((await fetchJson(`${url}/auth/status?scene=${body.scene_str}`)).body.status).toBe('authorized')
      expect(await server.wiring.auth.getUser({ openid: phone })).toMatchObject({ openid: phone })
      expect(server.wiring.emulator!.tickets().map((t) => t.sceneStr)).toContain(body.scene_str)

      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: 'nope', openid: 'x' })).status).toBe(400)
      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: body.scene_str, openid: 'bad openid!' })).status).toBe(400)
    })

    it('answers 400, 401, 404 and 405 with {detail}', async () => {
      const { url, lines } = await start()
      const badJson = await fetch(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id"' })
      expect(badJson.status).toBe(400) // from the app's own JSON parser, which reads JSON bodies first
      // The app's own error answers are no more cacheable than scanauth's (B-wire-2).
      expect(badJson.headers.get('cache-control')).toBe('no-store')
      expect(await badJson.json()).toEqual({ detail: expect.any(String) })
      const missing = await postJson(`${url}/auth/create_scene`, {})
      expect(missing.status).toBe(400)
      expect(missing.body.detail).toMatch(/device_id/)
      expect((await fetchJson(`${url}/auth/status`)).status).toBe(400)
      const unknown = await fetchJson(`${url}/auth/status?scene=pc_${'a'.repeat(32)}`)
      expect(unknown.status).toBe(404)
      expect(unknown.body.detail).toEqual(expect.any(String))
      const wrong = await fetchJson(`${url}/auth/status?scene=x`, { method: 'DELETE' })
      expect(wrong.status).toBe(405)
      expect(wrong.body.detail).toEqual(expect.any(String))
      expect((await fetchJson(`${url}/auth/session`)).status).toBe(401)
      const demoRefusal = await postJson(`${url}/demo/emulator-scan`, { scene_str: 'nope', openid: 'x' })
      expect(demoRefusal.status).toBe(400)
      expect(demoRefusal.headers.get('cache-control')).toBe('no-store')
      expect((await postJson(`${url}/auth/consume`, {}, { authorization: 'Bearer unknown' })).status).toBe(401)
      expect(lines.join('\n')).toContain('GET /auth/status -> 404')
    })

    it('refuses a push that is not signed by the account', async () => {
      const { url } = await start()
      const res = await fetch(`${url}/wechat/callback?signature=forged&timestamp=1&nonce=2`, {
        method: 'POST',
        headers: { 'content-type': 'text/xml' },
        body: '<xml><MsgType><![CDATA[event]]></MsgType></xml>',
      })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      await res.arrayBuffer()
    })

    it('answers 502 when the platform refuses to create the code', async () => {
      const { server, url, lines } = await start()
      server.wiring.emulator!.failNext('qrcode/create', { errcode: 45009, errmsg: 'api freq out of limit' })
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res.status).toBe(502)
      // In our words; WeChat's code and text only in the server's log (B-wire-5).
      expect(res.body.detail).toMatch(/^QR code creation failed: the messaging platform refused/)
      expect(res.body.detail).not.toContain('45009')
      expect(lines.join('\n')).toMatch(/scene creation failed: .*45009/)
      // The next one works again.
      expect((await postJson(`${url}/auth/create_scene`, { device_id: 'd' })).status).toBe(200)
    })

    it('answers 502 when the platform cannot be reached', async () => {
      const port = await closedPort()
      const { url } = await start({
        wechat: { kind: 'account', appId: 'wx_unreachable', appSecret: 's', token: 't', apiBaseUrl: `http://127.0.0.1:${port}` },
        wechatPay: { kind: 'none' },
      })
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res.status).toBe(502)
      expect(res.body.detail).toMatch(/^QR code creation failed: the messaging platform refused/)
      expect(res.body.detail).not.toContain(String(port))
      // The Official Account is real: no demo routes (demo-routes-suite.ts has the rest).
      expect((await fetchJson(`${url}/demo/config`)).status).toBe(404)
      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: `pc_${'b'.repeat(32)}`, openid: 'x' })).status).toBe(404)
      expect((await postJson(`${url}/demo/pay`, { order_id: `SA${'1'.repeat(26)}` })).status).toBe(404)
    })

    it("falls through to the app's own routes", async () => {
      const { url } = await start()
      expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok')
      expect((await fetchJson(`${url}/api/me`)).status).toBe(401)
      const notOurs = await fetch(`${url}/auth/not-a-route`)
      expect(notOurs.status).toBe(404)
      await notOurs.arrayBuffer()
      const nowhere = await fetch(`${url}/no/such/page`)
      expect(nowhere.status).toBe(404)
      await nowhere.arrayBuffer()
    })

    it('keeps scenes and sessions in SQLite across a restart', async () => {
      const filename = join(tempDir(), 'nested', 'scanauth.sqlite')
      const first = await start({ store: { kind: 'sqlite', filename } })
      expect(existsSync(filename)).toBe(true)
      const { scene, token } = await signIn(first.url, first.server)
      await first.server.close()

      const second = await start({ store: { kind: 'sqlite', filename } })
      const again = await fetchJson(`${second.url}/auth/status?scene=${scene}`)
      expect(again.body).toMatchObject({ status: 'authorized', session_token: token })
      expect((await fetchJson(`${second.url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    })

    it('names the SQLite file it cannot open, and the variable that set it', async () => {
      const dir = tempDir()
      // A folder where the file should be, and a file where its folder should be.
      mkdirSync(join(dir, 'a-folder'))
      writeFileSync(join(dir, 'a-file'), '')
      for (const filename of [join(dir, 'a-folder'), join(dir, 'a-file', 'scanauth.sqlite')]) {
        const failed = start({ store: { kind: 'sqlite', filename } })
        await expect(failed).rejects.toThrow(ConfigError)
        await expect(failed).rejects.toThrow(`cannot open the SQLite file ${filename} (SCANAUTH_SQLITE_FILE): `)
      }
    })

    it('runs on Redis', async () => {
      const keyPrefix = `scanauth-test:example-${framework}:${process.pid}:${Date.now()}:`
      const { server, url } = await start({ store: { kind: 'redis', url: REDIS_URL, keyPrefix } })
      const { token } = await signIn(url, server)
      expect((await fetchJson(`${url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
      const redis = new Redis(REDIS_URL)
      try {
        const keys = await redis.keys(`${keyPrefix}*`)
        expect(keys.length).toBeGreaterThan(0)
        await redis.del(...keys)
      } finally {
        redis.disconnect()
      }
    })
  })
}
