/**
 * What both example servers share apart from their framework and configuration: the store (opened
 * by `open-store.ts`), the WeChat side (the real API or an emulator started in-process), WeChat Pay
 * (`pay-wiring.ts`, the same choice) and paying on the phone that scanned (`phonePayOf`), reminders
 * before access ends (`reminder-wiring.ts`, with `SCANAUTH_REMINDERS`), logging, the demo page's files
 * and its endpoints (`demo.ts`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createScanAuth, ScanAuthError, type RateLimitOptions, type ScanAuth, type SendRemindersInput, type SendRemindersResult } from '@scanauth/core'
import { createWechatCallback, createWechatQrProvider, createWechatWebOAuth, type WechatCallback } from '@scanauth/wechat'
import { startWechatEmulator, type WechatEmulator, type WechatPayEmulator } from '@scanauth/wechat-emulator'
import type { WechatPayNotificationHandler } from '@scanauth/wechat-pay'
import { DEFAULT_PLANS, type ExampleConfig, type WechatConfig } from './config'
import { openStore } from './open-store'
import { startPurgeTimer } from './purge-timer'
import { startReconcileTimer } from './reconcile-timer'
import { paymentsOffNotify, startPaySide, type PaySide } from './pay-wiring'
import { emulatorTemplateOptions, reminderLine, reminderSide, startReminderTimer } from './reminder-wiring'
import { demoModeOf } from './demo-mode'
import { clientBundle } from './client-bundle'
import { DEMO_OFF, demoPay, demoQr, demoScan, EMULATED_PHONE_OPENID, type DemoContext, type DemoResponse } from './demo'

type Emulator = WechatEmulator

/** The parts an example server is assembled from. */
export interface Wiring {
  /** The scanauth instance (scene creation is logged). */
  auth: ScanAuth
  /** The WeChat push handler for `/wechat/callback`. */
  wechatCallback: WechatCallback
  /** The in-process emulator, when no account is configured. */
  emulator: Emulator | null
  /** The in-process WeChat Pay emulator, when no merchant is configured (`WECHATPAY_MCHID`) and payments are on. */
  payEmulator: WechatPayEmulator | null
  /** WeChat Pay's notification handler, for `POST /wechatpay/notify` (it needs the raw body); 404 when payments are off. */
  wechatPayNotify: WechatPayNotificationHandler
  /** `/demo/config`, `/demo/emulator-scan` and `/demo/pay` answer (else 404): fully emulated, or `SCANAUTH_DEMO=1` (demo-mode.ts). */
  demoRoutes: boolean
  log(line: string): void
  /**
   * Call once the server listens at `baseUrl`: points the emulator's pushes at our callback, and
   * gives the WeChat Pay client its notify URL.
   */
  listening(baseUrl: string): Promise<void>
  /** `GET /demo/config`: what the demo page should offer, and the emulated phone's openid (404 unless {@link Wiring.demoRoutes}). */
  demoConfig(): DemoResponse
  /** `POST /demo/emulator-scan` `{scene_str, openid}`: the emulated phone scans the scene (emulator mode and {@link Wiring.demoRoutes} only). */
  demoScan(body: unknown): Promise<DemoResponse>
  /** `POST /demo/pay` `{order_id}`: the emulated phone pays the order (WeChat Pay emulator and {@link Wiring.demoRoutes} only). */
  demoPay(body: unknown): Promise<DemoResponse>
  /** `GET /demo/qr.svg?text=`: a WeChat Pay `code_url` as an SVG QR code. */
  demoQr(text: unknown): Promise<DemoResponse>
  /**
   * One pass of reminders now (`auth.sendReminders(input)`), logged as the timer's passes are (also
   * when nothing was due). Rejects with core's `reminders_not_configured` without `SCANAUTH_REMINDERS`.
   */
  sendReminders(input?: SendRemindersInput): Promise<SendRemindersResult>
  /** Logs an unexpected error behind a 500 answer (the answer itself reveals nothing). */
  logError(error: unknown): void
  /** Logs a request worth seeing (errors); successful polls and page files stay quiet. */
  logRequest(method: string, path: string, status: number): void
  /** Stops the timers, closes the emulators and the store. */
  close(): Promise<void>
}

/**
 * Path of the demo page's files (`index.html`, `app.js`, `lib.js`, `pay.js`, `style.css`), served by both
 * examples. The page's `/client.js` is not among them: it is `@scanauth/client` bundled (`client-bundle.ts`).
 */
export const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url))

const PUBLIC_FILES: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/lib.js': ['lib.js', 'text/javascript; charset=utf-8'],
  '/pay.js': ['pay.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
}

/** The URL path of `@scanauth/client` bundled for the page. */
export const CLIENT_SCRIPT_PATH = '/client.js'

/**
 * One of the demo page's files by URL path, or undefined (for servers without a static-file
 * middleware); {@link CLIENT_SCRIPT_PATH} is the client's bundle, which servers with a static-file
 * middleware must route here too.
 */
export async function publicFile(path: string): Promise<{ body: Buffer; type: string } | undefined> {
  if (path === CLIENT_SCRIPT_PATH) return { body: Buffer.from(await clientBundle()), type: 'text/javascript; charset=utf-8' }
  const entry = PUBLIC_FILES[path]
  if (entry === undefined) return undefined
  return { body: await readFile(resolve(PUBLIC_DIR, entry[0])), type: entry[1] }
}

/** The emulated Official Account (any values work: the emulator and this server share them). */
const EMULATED = { appId: 'wx00e0demo00emulator', appSecret: 'emulator-app-secret', token: 'emulator-token' }

/**
 * The emulated account's Token and EncodingAESKey: the ones `WECHAT_TOKEN` / `WECHAT_ENCODING_AES_KEY`
 * gave, so that pushes signed by hand (`curl`) check out and safe mode can be tried locally; else the
 * emulator's own token and a fresh key for this run. With a key the emulator pushes in safe mode,
 * without one (a token given alone) in plain mode. `says` is the start-up line's account of it.
 */
function emulatedSecrets(config: Extract<WechatConfig, { kind: 'emulator' }>): { token: string; encodingAESKey?: string; says: string } {
  if (config.token === undefined && config.encodingAESKey === undefined) {
    return { token: EMULATED.token, encodingAESKey: randomBytes(32).toString('base64').slice(0, 43), says: 'its own token and a fresh EncodingAESKey, safe mode' }
  }
  const token = config.token ?? EMULATED.token
  const tokenSays = config.token === undefined ? `token "${EMULATED.token}" (set WECHAT_TOKEN to choose one)` : 'WECHAT_TOKEN'
  return config.encodingAESKey === undefined
    ? { token, says: `${tokenSays}, plain mode (no WECHAT_ENCODING_AES_KEY)` }
    : { token, encodingAESKey: config.encodingAESKey, says: `${tokenSays} and WECHAT_ENCODING_AES_KEY, safe mode` }
}

/** Builds the store, the platform and the scanauth instance for `config`. */
export async function createWiring(config: ExampleConfig, framework: string): Promise<Wiring> {
  const write = config.log ?? ((line: string) => console.log(line))
  const log = (line: string) => write(`${new Date().toISOString()} ${line}`)
  const cleanup: Array<() => Promise<unknown> | unknown> = []
  const closeAll = async () => {
    for (const step of cleanup.splice(0).reverse()) await step()
  }

  try {
    // Before anything is opened: a real Official Account with the WeChat Pay emulator stops here.
    const demoMode = demoModeOf(config)
    const { store, close: closeStore, label } = await openStore(config.store, log)
    cleanup.push(closeStore)

    let emulator: Emulator | null = null
    let account: Extract<WechatConfig, { kind: 'account' }>
    let platform: string
    if (config.wechat.kind === 'emulator') {
      const { token, encodingAESKey, says } = emulatedSecrets(config.wechat)
      emulator = await startWechatEmulator({
        port: 0,
        host: '127.0.0.1',
        ...EMULATED,
        token,
        encodingAESKey,
        demoOpenid: EMULATED_PHONE_OPENID,
        // The reminders' templates, so that the emulator refuses any other id as WeChat would (40037).
        ...emulatorTemplateOptions(config.reminders),
      })
      cleanup.push(() => emulator?.close())
      account = { kind: 'account', ...EMULATED, token, encodingAESKey, apiBaseUrl: emulator.url }
      platform = `WeChat emulator at ${emulator.url} with ${says}`
    } else {
      account = config.wechat
      platform = `WeChat account ${account.appId}${account.apiBaseUrl ? ` via ${account.apiBaseUrl}` : ''}`
    }
    // Payments off (a real account without a merchant): no WeChat Pay at all, nothing for sale.
    const pay = config.wechatPay?.kind === 'none' ? null : await startPaySide(config, account.appId, log)
    if (pay !== null) cleanup.push(() => pay.close())
    const plans = config.plans ?? DEFAULT_PLANS.map((plan) => ({ ...plan, grant: { ...plan.grant } }))

    // Confirm on the phone: the page's public address is known from SCANAUTH_PUBLIC_URL, else once the
    // server listens; web OAuth goes to the emulator's authorize page, or to WeChat's.
    let publicBase = config.publicUrl
    const confirm = config.confirm ?? 'scan'
    const oauth = createWechatWebOAuth({
      appId: account.appId,
      appSecret: account.appSecret,
      ...(account.apiBaseUrl === undefined ? {} : { apiBase: account.apiBaseUrl }),
      ...(emulator === null ? {} : { authorizeBase: `${emulator.url}/connect/oauth2/authorize` }),
    })
    // Paying on the phone that scanned (payments.phone): on whenever payments are on and the phone
    // pages have a public address, with the same web OAuth as the confirm page.
    const phone = phonePayOf(config, emulator, pay)
    const phonePagesUrl = () => {
      if (publicBase === undefined) throw new Error('the server is not listening yet: no public address for the phone pay link')
      return `${publicBase}${PHONE_PAGES_PATH}`
    }
    const qr = createWechatQrProvider({ appId: account.appId, appSecret: account.appSecret, apiBaseUrl: account.apiBaseUrl })
    // Reminders before access ends (SCANAUTH_REMINDERS): their links go to the phone pages wherever a
    // phone reaches them: SCANAUTH_PUBLIC_URL, or the listening address for the emulated phone.
    const pagesReachable = config.publicUrl !== undefined || emulator !== null
    const reminders =
      config.reminders === undefined
        ? null
        : reminderSide(config.reminders, {
            appId: account.appId,
            tokens: qr,
            emulator,
            ...(account.apiBaseUrl === undefined ? {} : { apiBaseUrl: account.apiBaseUrl }),
            pagesUrl: pagesReachable ? phonePagesUrl : undefined,
            pagesSays: pagesReachable
              ? `links to the phone pages ${config.publicUrl === undefined ? `(${PHONE_PAGES_PATH}) at the listening address` : `at ${config.publicUrl}${PHONE_PAGES_PATH}`}`
              : 'no links (set SCANAUTH_PUBLIC_URL, the public https address)',
            log,
          })
    const core = createScanAuth({
      confirm,
      confirmation: {
        url: () => {
          if (publicBase === undefined) throw new Error('the server is not listening yet: no public address for the confirm link')
          return `${publicBase}/auth/confirm`
        },
        oauth,
      },
      requirePollSecret: config.requirePollSecret ?? false,
      store,
      qr,
      sceneTtlSeconds: config.sceneTtlSeconds,
      freeTrialDays: config.freeTrialDays,
      rateLimits: rateLimitsOf(config),
      now: config.now,
      ...(pay === null
        ? {}
        : {
            payments: {
              provider: pay.provider,
              plans,
              ...(phone.on ? { phone: { url: phonePagesUrl, oauth, ...(phone.bridgeUrl === undefined ? {} : { emulatorBridgeUrl: phone.bridgeUrl }) } } : {}),
            },
          }),
      ...(reminders === null ? {} : { reminders: reminders.option }),
      hooks: {
        onScan: (e) => log(`scan ${e.sceneStr} by ${e.openid}: ${e.result}${e.userId === undefined ? '' : ` (user ${e.userId})`}`),
        onConfirm: (e) => log(`confirm page: ${e.result}${e.userId === undefined ? '' : ` (user ${e.userId})`}`),
        onActivate: ({ authorization: a }) =>
          log(`authorization ${a.id} (${a.type}, ${a.source}) active for user ${a.userId}${a.endAt ? ` until ${a.endAt}` : ''}`),
        onOrderPaid: (e) =>
          log(`order ${e.orderId} paid (transaction ${e.transactionId ?? '?'}): plan ${e.planId} for user ${e.userId}, authorization ${e.authorizationId}`),
        // An authentic report that does not match our order: a misconfiguration or fraud (B-order-5).
        onPaymentRejected: (e) => log(`payment rejected: ${e.kind} of order ${e.orderId} (${e.reason}; mchid ${e.mchid}, ${e.amountFen} fen)`),
        onHookError: (error) => log(`hook failed: ${String(error)}`),
      },
    })
    // The instance as it is, with scene creation and purchases logged.
    const auth: ScanAuth = {
      ...core,
      async createScene(input) {
        try {
          const scene = await core.createScene(input)
          log(`scene ${scene.sceneStr} created for device ${input.deviceId} (${scene.expiresIn} s)`)
          return scene
        } catch (error) {
          log(`scene creation failed: ${error instanceof Error ? error.message : String(error)}`)
          throw error
        }
      },
      async purchase(input) {
        try {
          const order = await core.purchase(input)
          const buyer = input.sceneStr === undefined ? 'a session' : `scene ${input.sceneStr}`
          log(`order ${order.orderId} for ${buyer}: plan ${input.plan}, ${order.amountFen} fen, payable until ${order.expiresAt}`)
          return order
        } catch (error) {
          log(`purchase failed: ${error instanceof Error ? error.message : String(error)}`)
          throw error
        }
      },
      // A plan chosen on the phone pages (payments.phone): the JSAPI order behind the cashier page.
      async choosePhonePlan(input) {
        const step = await core.choosePhonePlan(input)
        if (step.step === 'cashier') {
          const { orderId, description, amountFen, deviceLabel } = step.cashier
          log(`order ${orderId} on the phone${deviceLabel === null ? '' : ` for device ${deviceLabel}`}: ${description}, ${amountFen} fen`)
        }
        return step
      },
    }
    const wechatCallback = createWechatCallback({
      auth,
      // The same store as the service: replayed and repeated pushes are refused on every instance.
      store,
      appId: account.appId,
      token: account.token,
      encodingAESKey: account.encodingAESKey,
      onError: (error) => log(`wechat callback error: ${error instanceof Error ? error.message : String(error)}`),
    })

    // Pushed after the store: stopped (and a running purge awaited) before the store closes.
    const purgeEveryMs = config.purgeEveryMs ?? 3600_000
    if (purgeEveryMs !== false) cleanup.push(startPurgeTimer(store, { everyMs: purgeEveryMs, now: config.now ?? Date.now, log }))
    const purgeSays = purgeEveryMs === false ? 'no purge' : `purge every ${purgeEveryMs / 60_000} min`
    // After the pay side: stopped (and a running reconciliation awaited) before its emulator closes.
    const reconcileEveryMs = pay === null ? false : (config.reconcileEveryMs ?? 60_000)
    if (reconcileEveryMs !== false) cleanup.push(startReconcileTimer(auth, { everyMs: reconcileEveryMs, log }))
    const reconcileSays = reconcileEveryMs === false ? 'no reconciliation' : `reconcile every ${reconcileEveryMs / 60_000} min`
    // After the emulator and the store: stopped (and a running pass awaited) before they close.
    if (reminders !== null && reminders.everyMs !== false) cleanup.push(startReminderTimer(auth, { everyMs: reminders.everyMs, log }))

    const demo: DemoContext = { auth, emulator, payEmulator: pay?.emulator ?? null, routes: demoMode.routes, log }
    const confirmSays = confirm === 'link' ? `, confirm on the phone${config.publicUrl === undefined ? '' : ` at ${config.publicUrl}/auth/confirm`}` : ''
    const secretSays = config.requirePollSecret === true ? ', poll secrets required' : ''
    log(`scanauth example (${framework}): store ${label} (${purgeSays}), ${platform}${confirmSays}${secretSays}`)
    if (pay === null) log('no WeChat Pay (a real Official Account without WECHATPAY_MCHID): payments off, nothing for sale')
    else log(`${pay.says}: ${plans.length} plans (${plans.map((p) => p.id).join(', ')}), ${reconcileSays}, ${phone.says}`)
    if (reminders !== null) log(reminders.says)
    if (reminders?.warning !== undefined) log(reminders.warning)
    if (demoMode.line !== undefined) log(demoMode.line)

    return {
      auth,
      wechatCallback,
      emulator,
      payEmulator: demo.payEmulator,
      wechatPayNotify: pay === null ? paymentsOffNotify : pay.notificationHandler(auth),
      demoRoutes: demoMode.routes,
      log,
      async listening(baseUrl) {
        publicBase ??= baseUrl
        await emulator?.setCallbackUrl(`${baseUrl}/wechat/callback`)
        pay?.listening(baseUrl)
      },
      demoConfig: () => (!demoMode.routes ? DEMO_OFF : {
        status: 200,
        body: {
          framework,
          store: config.store.kind,
          emulator: emulator !== null,
          // Who "Scan with the emulated phone" scans as: the emulator's own page's default user too.
          demo_openid: emulator === null ? null : EMULATED_PHONE_OPENID,
          pay_emulator: demo.payEmulator !== null,
          // A need_purchase scan's reply links to the phone pages (payments.phone).
          phone_pay: phone.on,
          confirm,
          // A scan that signs in gets "Remind me before it ends" in its reply (SCANAUTH_REMINDERS).
          reminders: auth.reminderSubscription,
        },
      }),
      demoScan: (body) => demoScan(demo, body),
      demoPay: (body) => demoPay(demo, body),
      demoQr: (text) => demoQr(text),
      async sendReminders(input) {
        const result = await auth.sendReminders(input)
        log(input?.dryRun === true ? `${reminderLine(result)} (dry run: ${result.due} due, nothing sent)` : reminderLine(result))
        return result
      },
      logError(error) {
        // A 502 is WeChat or WeChat Pay failing, whose own text the caller never sees (B-wire-5): the
        // createScene and purchase wrappers above log it already, with that text.
        if (error instanceof ScanAuthError && error.status === 502) return
        log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      },
      logRequest(method, path, status) {
        if (status >= 400) log(`${method} ${path} -> ${status}`)
      },
      close: closeAll,
    }
  } catch (error) {
    await closeAll()
    throw error
  }
}

/** Where both examples mount scanauth's phone pages: `{base}/m/` under `/auth`. */
export const PHONE_PAGES_PATH = '/auth/m/'

/** Whether the example sells on the phone that scanned, with the emulator's bridge when emulated, and the start-up line's words for it. */
interface PhonePay {
  on: boolean
  /** The WeChat Pay emulator's `WeixinJSBridge` stand-in; only when both WeChat and WeChat Pay are emulated. */
  bridgeUrl?: string
  says: string
}

/**
 * Paying on the phone that scanned (core's `payments.phone`, docs/payments.md): on when payments
 * are, and
 *
 * - fully emulated: the emulated phone opens the link in a browser, and the WeChat Pay emulator's
 *   `WeixinJSBridge` stand-in plays WeChat's cashier (never otherwise: a real phone has WeChat's own);
 * - with a real Official Account and a real merchant: once `SCANAUTH_PUBLIC_URL` says where phones
 *   reach the pages (the address the server listens at is no link for a phone).
 *
 * Half emulated it is off: the emulated account's openids are not users of the real merchant's
 * AppID (WeChat Pay would refuse them), and a real phone cannot pay at the WeChat Pay emulator.
 */
function phonePayOf(config: ExampleConfig, emulator: Emulator | null, pay: PaySide | null): PhonePay {
  if (pay === null) return { on: false, says: 'no paying on the phone' }
  const at = config.publicUrl === undefined ? '' : ` at ${config.publicUrl}${PHONE_PAGES_PATH}`
  if (emulator !== null && pay.emulator !== null) {
    return { on: true, bridgeUrl: pay.emulator.jsapiBridgeUrl, says: `paying on the phone${at} (the emulator's WeixinJSBridge stand-in)` }
  }
  if (emulator === null && pay.emulator === null) {
    return config.publicUrl === undefined
      ? { on: false, says: 'no paying on the phone (set SCANAUTH_PUBLIC_URL, the public https address, to link the scanner to it)' }
      : { on: true, says: `paying on the phone${at}` }
  }
  return { on: false, says: 'no paying on the phone (WeChat and WeChat Pay must both be real, or both emulated)' }
}

/**
 * The limits the environment sets (`SCANAUTH_CREATE_SCENE_PER_MINUTE` per client address,
 * `SCANAUTH_DAILY_QR_BUDGET`); core's defaults for everything it leaves unset.
 */
function rateLimitsOf(config: ExampleConfig): RateLimitOptions {
  const limits: RateLimitOptions = {}
  const perMinute = config.createScenePerMinute
  if (perMinute !== undefined) limits.perAddress = perMinute === false ? false : { limit: perMinute, windowSeconds: 60 }
  if (config.dailyQrBudget !== undefined) limits.dailyQrBudget = config.dailyQrBudget
  return limits
}
