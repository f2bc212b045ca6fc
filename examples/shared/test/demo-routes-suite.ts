/**
 * The demo routes and the emulators only where nothing is real (docs/security.md, "The example
 * servers"; examples/shared/src/demo-mode.ts), the same for Express and Koa: `POST /demo/pay` pays any
 * order through the WeChat Pay emulator and `POST /demo/emulator-scan` signs anyone in, so beside a
 * real Official Account or real WeChat Pay they answer 404 unless `SCANAUTH_DEMO=1`, and a real
 * account with the WeChat Pay emulator does not start. Servers are configured from environment
 * variables (`configFromEnv`, as `npm start`); the "real" Official Account and WeChat Pay are
 * emulators this test starts itself, reached only through `WECHAT_API_BASE` and `WECHATPAY_*`. Real
 * sockets, no stand-ins. Also: the demo routes take JSON only, so a cross-site form or text/plain post
 * reaches them without a body.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createPendingScene, fetchJson, postJson } from '@scanauth/testkit'
import { startWechatEmulator, startWechatPayEmulator, type WechatEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import { ConfigError, configFromEnv } from '../src/config'
import type { RunningServer } from '../src/serve'
import type { StartServer } from './app-suite'

/** A free trial of about a minute, and a step of the clock past it. */
const SHORT_TRIAL_DAYS = '0.0007'
const PAST_TRIAL_MS = 61_000

/** A pay code as WeChat Pay answers one: the image route draws it in every mode. */
const CODE_URL = 'weixin://wxpay/bizpayurl?pr=demo123'

/** An order id of the right form that no one opened. */
const UNKNOWN_ORDER = `SA${'0'.repeat(26)}`

/** What the demo routes answer when they are off. */
const OFF = { status: 404, body: { detail: 'Not found: the demo routes are off unless the server is fully emulated or SCANAUTH_DEMO=1' } }

/** The refusal of a real Official Account with the WeChat Pay emulator, as a person reads it. */
const refusal = (unset: string) =>
  `WECHAT_APP_ID is a real Official Account but WECHATPAY_MCHID is unset: the WeChat Pay emulator would take the payments, and POST /demo/pay would pay any order for nothing. Set WECHATPAY_MCHID (real WeChat Pay), unset ${unset} (no payments), or set SCANAUTH_DEMO=1 (a demo; never in production)`

/** Registers the demo-mode suite for `framework`, run against its `startServer`. */
export function describeDemoRoutes(framework: 'express' | 'koa', startServer: StartServer): void {
  const running: RunningServer[] = []
  const accounts: WechatEmulator[] = []
  const merchants: WechatPayEmulator[] = []
  const temp: string[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
    await Promise.all(accounts.splice(0).map((a) => a.close()))
    await Promise.all(merchants.splice(0).map((m) => m.close()))
    for (const dir of temp.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** The server `env` configures (memory store, a free port, a short trial), on a clock the test moves. */
  async function start(env: NodeJS.ProcessEnv) {
    const config = configFromEnv({ PORT: '0', SCANAUTH_STORE: 'memory', SCANAUTH_FREE_TRIAL_DAYS: SHORT_TRIAL_DAYS, ...env })
    const lines: string[] = []
    const clock = { ahead: 0 }
    const server = await startServer({ ...config, now: () => Date.now() + clock.ahead, log: (line) => lines.push(line) })
    running.push(server)
    return { server, url: server.url, clock, lines, log: () => lines.join('\n') }
  }

  /** A "real" Official Account: an emulator of its own, reached through the WECHAT_* variables only. */
  async function realAccount() {
    const account = await startWechatEmulator({ port: 0, host: '127.0.0.1', appId: 'wx_real_account_1', appSecret: 'real-secret', token: 'real-token' })
    accounts.push(account)
    const env = { WECHAT_APP_ID: 'wx_real_account_1', WECHAT_APP_SECRET: 'real-secret', WECHAT_TOKEN: 'real-token', WECHAT_API_BASE: account.url }
    return { account, env }
  }

  /** "Real" WeChat Pay: an emulator of its own, reached through the WECHATPAY_* variables and key files only. */
  async function realMerchant(now: () => number) {
    const pay = await startWechatPayEmulator({ mchid: '1230000109', appid: 'wx_merchant_app', now })
    merchants.push(pay)
    const dir = mkdtempSync(join(tmpdir(), `scanauth-demo-${framework}-`))
    temp.push(dir)
    writeFileSync(join(dir, 'apiclient_key.pem'), pay.merchantKey!.privateKeyPem)
    writeFileSync(join(dir, 'pub_key.pem'), pay.verificationKeys[pay.platformSerial]!)
    const env = {
      WECHATPAY_MCHID: '1230000109',
      WECHATPAY_APPID: 'wx_merchant_app',
      WECHATPAY_API_V3_KEY: pay.apiV3Key,
      WECHATPAY_PRIVATE_KEY_FILE: join(dir, 'apiclient_key.pem'),
      WECHATPAY_CERT_SERIAL: pay.merchantKey!.serial,
      WECHATPAY_PUBLIC_KEY_FILE: join(dir, 'pub_key.pem'),
      WECHATPAY_PUBLIC_KEY_ID: pay.platformSerial,
      WECHATPAY_API_BASE: pay.url,
    }
    return { pay, env }
  }

  /** The answers of the three guarded demo routes, and of the pay code's image. */
  async function demoAnswers(url: string, scene: string) {
    const config = await fetchJson(`${url}/demo/config`)
    const scan = await postJson(`${url}/demo/emulator-scan`, { scene_str: scene, openid: 'o_intruder' })
    const pay = await postJson(`${url}/demo/pay`, { order_id: UNKNOWN_ORDER })
    const image = await fetch(`${url}/demo/qr.svg?text=${encodeURIComponent(CODE_URL)}`)
    await image.arrayBuffer()
    return {
      config: { status: config.status, body: config.body },
      scan: { status: scan.status, body: scan.body },
      pay: { status: pay.status, body: pay.body },
      image: image.status,
    }
  }

  describe(`the ${framework} example's demo routes and emulators`, () => {
    it('fully emulated (no WECHAT_APP_ID, no WECHATPAY_MCHID): the demo routes answer, without a warning', async () => {
      const { url, log } = await start({})
      const scene = (await createPendingScene(url, `${framework}-full`)).scene_str as string
      const answers = await demoAnswers(url, scene)
      expect(answers.config).toMatchObject({ status: 200, body: { emulator: true, pay_emulator: true } })
      expect(answers.scan).toMatchObject({ status: 200, body: { scanned: scene } })
      expect(answers.pay).toMatchObject({ status: 404, body: { code: 'unknown_order' } }) // the WeChat Pay emulator answered
      expect(answers.image).toBe(200)
      expect(log()).not.toMatch(/WARNING|demo routes off/)
    })

    it('a real Official Account with the WeChat Pay emulator refuses to start, in one line naming the way out', async () => {
      const { env } = await realAccount()
      for (const [asked, unset] of [
        [{ SCANAUTH_PLANS: JSON.stringify([{ id: 'month', description: '30 days', amount_fen: 1990, grant: { type: 'time', days: 30 } }]) }, 'SCANAUTH_PLANS'],
        [{ WECHATPAY_NOTIFY_URL: 'https://app.example/wechatpay/notify' }, 'WECHATPAY_NOTIFY_URL'],
      ] as const) {
        const failed = start({ ...env, ...asked })
        await expect(failed).rejects.toThrow(ConfigError)
        await expect(failed).rejects.toThrow(refusal(unset))
      }
      expect(refusal('SCANAUTH_PLANS')).not.toContain('\n')
      // The same for a configuration built in code: the WeChat Pay emulator, said or by default.
      for (const wechatPay of [{ kind: 'emulator' as const }, undefined]) {
        const failed = startServer({ port: 0, store: { kind: 'memory' }, wechat: { kind: 'account', appId: 'wx_real_account_1', appSecret: 'real-secret', token: 'real-token', apiBaseUrl: env.WECHAT_API_BASE }, wechatPay, log: () => {} })
        await expect(failed).rejects.toThrow(new ConfigError(refusal('SCANAUTH_PLANS')))
      }
    })

    it('a real Official Account without WECHATPAY_MCHID or SCANAUTH_PLANS runs without payments, and its demo routes answer 404', async () => {
      const { account, env } = await realAccount()
      const { server, url, log } = await start(env)
      expect(server.wiring.payEmulator).toBeNull()
      expect(server.wiring.demoRoutes).toBe(false)
      expect(log()).toContain('no WeChat Pay (a real Official Account without WECHATPAY_MCHID): payments off, nothing for sale')
      expect(log()).toContain('demo routes off beside a real Official Account (WECHAT_APP_ID): /demo/config, /demo/emulator-scan and /demo/pay answer 404 (SCANAUTH_DEMO=1 turns them on, never in production)')
      expect(log()).not.toContain('WeChat Pay emulator')

      // People sign in with the account (a scan pushed to /wechat/callback), and nothing is for sale.
      await account.setCallbackUrl(`${url}/wechat/callback`)
      const scene = (await createPendingScene(url, `${framework}-real-account`)).scene_str as string
      expect((await account.scan({ sceneStr: scene, openid: 'o_real_person' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })
      expect((await fetchJson(`${url}/auth/plans`)).body).toEqual([])
      expect((await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })).status).toBe(404)
      const notify = await fetch(`${url}/wechatpay/notify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      expect(notify.status).toBe(404)
      await notify.arrayBuffer()

      const pending = (await createPendingScene(url, `${framework}-intruder`)).scene_str as string
      expect(await demoAnswers(url, pending)).toEqual({ config: OFF, scan: OFF, pay: OFF, image: 200 })
      expect((await fetchJson(`${url}/auth/status?scene=${pending}`)).body).toEqual({ status: 'pending' })
    })

    it('SCANAUTH_DEMO=1 runs the WeChat Pay emulator beside a real Official Account, with a one-line warning, and /demo/pay pays', async () => {
      const { account, env } = await realAccount()
      const { server, url, clock, lines } = await start({ ...env, SCANAUTH_DEMO: '1' })
      expect(server.wiring.payEmulator).not.toBeNull()
      expect(lines.filter((line) => line.includes('WARNING'))).toEqual([
        expect.stringMatching(/^\S+ WARNING: SCANAUTH_DEMO=1: the demo routes are on beside a real Official Account \(WECHAT_APP_ID\): POST \/demo\/pay pays any order for nothing, for anyone who can reach this server; never set it in production$/),
      ])

      await account.setCallbackUrl(`${url}/wechat/callback`)
      const first = (await createPendingScene(url, `${framework}-demo`)).scene_str as string
      expect((await account.scan({ sceneStr: first, openid: 'o_demo_person' })).status).toBe(200)
      clock.ahead += PAST_TRIAL_MS
      const scene = (await createPendingScene(url, `${framework}-demo`)).scene_str as string
      expect((await account.scan({ sceneStr: scene, openid: 'o_demo_person' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })
      const order = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-30' })
      expect(order.status).toBe(200)
      expect((await postJson(`${url}/demo/pay`, { order_id: order.body.order_id })).status).toBe(200)
      await expect.poll(async () => (await server.wiring.auth.getOrder(order.body.order_id as string))?.status).toBe('paid')
      expect((await fetchJson(`${url}/demo/config`)).body).toMatchObject({ emulator: false, pay_emulator: true })
    })

    it('an emulated Official Account with real WeChat Pay starts with the demo routes off; SCANAUTH_DEMO=1 turns the scan on, never a payment of a real order', async () => {
      const clock = { ahead: 0 }
      const { pay, env } = await realMerchant(() => Date.now() + clock.ahead)
      const off = await start(env)
      expect(off.server.wiring.payEmulator).toBeNull()
      expect(off.server.wiring.emulator).not.toBeNull() // the only Official Account there is, on 127.0.0.1
      expect(off.log()).toContain('demo routes off beside real WeChat Pay (WECHATPAY_MCHID): /demo/config, /demo/emulator-scan and /demo/pay answer 404')
      const pending = (await createPendingScene(off.url, `${framework}-merchant`)).scene_str as string
      expect(await demoAnswers(off.url, pending)).toEqual({ config: OFF, scan: OFF, pay: OFF, image: 200 })
      expect((await fetchJson(`${off.url}/auth/status?scene=${pending}`)).body).toEqual({ status: 'pending' })
      await off.server.close()

      const on = await start({ ...env, SCANAUTH_DEMO: '1' })
      expect(on.lines.filter((line) => line.includes('WARNING'))).toEqual([
        expect.stringMatching(/ WARNING: SCANAUTH_DEMO=1: the demo routes are on beside real WeChat Pay \(WECHATPAY_MCHID\): POST \/demo\/emulator-scan signs anyone in as anyone, for anyone who can reach this server; never set it in production$/),
      ])
      const first = (await createPendingScene(on.url, `${framework}-merchant`)).scene_str as string
      expect((await postJson(`${on.url}/demo/emulator-scan`, { scene_str: first, openid: 'o_demo_buyer' })).status).toBe(200)
      on.clock.ahead += PAST_TRIAL_MS
      clock.ahead += PAST_TRIAL_MS
      const scene = (await createPendingScene(on.url, `${framework}-merchant`)).scene_str as string
      expect((await postJson(`${on.url}/demo/emulator-scan`, { scene_str: scene, openid: 'o_demo_buyer' })).status).toBe(200)
      const order = await postJson(`${on.url}/auth/purchase`, { scene, plan: 'days-30' })
      expect(order.status).toBe(200)
      // The order is the merchant's: /demo/pay has no WeChat Pay emulator to pay it with.
      expect(await postJson(`${on.url}/demo/pay`, { order_id: order.body.order_id })).toMatchObject({ status: 404, body: { detail: 'No WeChat Pay emulator: pay the code with WeChat' } })
      expect(pay.orders().map((o) => [o.outTradeNo, o.tradeState])).toEqual([[order.body.order_id, 'NOTPAY']])
      expect(await on.server.wiring.auth.getOrder(order.body.order_id as string)).toMatchObject({ status: 'open' })
    })

    it('SCANAUTH_DEMO=0 turns the demo routes off even fully emulated, =1 there still warns, and any other value stops the start', async () => {
      const off = await start({ SCANAUTH_DEMO: '0' })
      expect(off.log()).toContain('demo routes off (SCANAUTH_DEMO=0): /demo/config, /demo/emulator-scan and /demo/pay answer 404')
      const pending = (await createPendingScene(off.url, `${framework}-zero`)).scene_str as string
      expect(await demoAnswers(off.url, pending)).toEqual({ config: OFF, scan: OFF, pay: OFF, image: 200 })
      expect((await fetchJson(`${off.url}/auth/status?scene=${pending}`)).body).toEqual({ status: 'pending' })

      const on = await start({ SCANAUTH_DEMO: 'true' })
      expect(on.lines.filter((line) => line.includes('WARNING'))).toEqual([
        expect.stringMatching(/ WARNING: SCANAUTH_DEMO=1: the demo routes are on: POST \/demo\/emulator-scan signs anyone in as anyone and POST \/demo\/pay pays any order for nothing, for anyone who can reach this server; never set it in production$/),
      ])

      for (const raw of ['yes', 'on', '2']) {
        expect(() => configFromEnv({ SCANAUTH_DEMO: raw }), raw).toThrow(new ConfigError(`SCANAUTH_DEMO must be 1 (the demo routes on, whatever is real) or 0 (off), not "${raw}"`))
      }
    })

    it('takes JSON only on the demo routes and the app\'s own, as express.json(): a cross-site form or text/plain post has no body', async () => {
      const { server, url, clock } = await start({})
      const post = async (path: string, type: string, body: string) => {
        const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': type }, body })
        return { status: res.status, body: (await res.json()) as Record<string, unknown> }
      }
      const FORM = 'application/x-www-form-urlencoded'
      const TEXT = 'text/plain'

      // What an HTML form on any site can post: <form enctype="text/plain"> makes `name=value` JSON.
      const scene = (await createPendingScene(url, `${framework}-csrf`)).scene_str as string
      const scanFields = { scene_str: scene, openid: 'o_cross_site' }
      expect(await post('/demo/emulator-scan', FORM, new URLSearchParams(scanFields).toString())).toMatchObject({ status: 400, body: { detail: 'scene_str is required' } })
      expect(await post('/demo/emulator-scan', TEXT, JSON.stringify(scanFields))).toMatchObject({ status: 400, body: { detail: 'scene_str is required' } })
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'pending' })
      // scanauth's routes read a body no parser took themselves, and refuse a form: no scene is made.
      const form = await post('/auth/create_scene', FORM, 'device_id=cross-site')
      expect(form.status).toBeGreaterThanOrEqual(400)
      expect(form.status).toBeLessThan(500)

      // An order that can be paid: a form or text/plain post does not pay it; JSON does.
      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'o_buyer' })).status).toBe(200)
      clock.ahead += PAST_TRIAL_MS
      const again = (await createPendingScene(url, `${framework}-csrf`)).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: again, openid: 'o_buyer' })).status).toBe(200)
      const order = (await postJson(`${url}/auth/purchase`, { scene: again, plan: 'days-7' })).body.order_id as string
      const payFields = { order_id: order }
      for (const [type, body] of [[FORM, new URLSearchParams(payFields).toString()], [TEXT, JSON.stringify(payFields)]] as const) {
        expect(await post('/demo/pay', type, body), type).toMatchObject({ status: 400, body: { detail: 'order_id is required: the order_id POST /auth/purchase answered' } })
      }
      expect(server.wiring.payEmulator!.orders().map((o) => o.tradeState)).toEqual(['NOTPAY'])
      expect(await server.wiring.auth.getOrder(order)).toMatchObject({ status: 'open' })
      expect((await postJson(`${url}/demo/pay`, payFields)).status).toBe(200)
    })
  })
}
