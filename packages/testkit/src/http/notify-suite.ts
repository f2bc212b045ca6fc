/**
 * `describeWechatPayNotifyRoutes`: WeChat Pay's payment notifications as a framework adapter serves
 * them, one suite for every adapter (the Express and Koa middlewares, the Fetch handler on Hono, ...).
 * scanauth opens an order at the WeChat Pay emulator through the real client, the emulated payer
 * pays, and the emulator's signed, encrypted notification crosses a real socket into the app. What
 * counts is what WeChat Pay is answered (its retries depend on it), what the emulator's delivery log
 * shows, and whether the buyer got the plan.
 *
 * The testkit is published and depends on neither `@scanauth/wechat-pay` nor
 * `@scanauth/wechat-emulator`, so the caller injects the world (the emulator, a client of it, a
 * selling scanauth and the handler's options) and the suite describes what it uses of it by shape.
 *
 * @module
 */
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_NOTIFY_MAX_BODY_BYTES } from '@scanauth/core'
import { fetchJson, postJson } from './fetch-json'
import { notifyHostPerTest, type HeldRequest, type NotifyHost, type SellingAuth } from './notify-fixture'

/** One notification in the emulator's delivery log, as the suite reads it. */
export interface NotifyLogEntry {
  /** The notification id; a duplicate under the same id shares it. */
  id: string
  /** `real`, `probe`, `duplicate-same-id` or `duplicate-new-id`. */
  kind: string
  /** `pending`, `accepted`, `refused` (a probe answered non-2xx) or `gave-up`. */
  state: string
  /** The order it is about. */
  outTradeNo: string
  /** Every delivery attempt, oldest first. */
  attempts: ReadonlyArray<{
    /** The status answered; null when none came. */
    status: number | null
  }>
}

/** The WeChat Pay emulator (`startWechatPayEmulator` of `@scanauth/wechat-emulator`), as the suite drives it. */
export interface NotifyEmulator {
  /** Pays an order as the payer's phone would; its notification goes out in the background. */
  pay(input: { outTradeNo: string }): Promise<unknown>
  /** Resolves once every notification was delivered or given up. */
  settled(): Promise<void>
  /** Turns on knobs: a probe signature first, duplicates under the same and under a new id. */
  setKnobs(knobs: { probeFirst?: boolean; duplicateSameId?: boolean; duplicateNewId?: boolean }): unknown
  /** Signs with a new platform key from now on; with `retireOld`, the old one is gone. */
  rotatePlatformKey(options: { retireOld: boolean }): Promise<unknown>
  /** The delivery log, oldest first. */
  notifications(): NotifyLogEntry[]
}

/** A non-2xx answer of the notification handler, as its `onError` heard it. */
export interface NotifyRefusal {
  /** Why: a `WechatPayError`, whose `code` the suite reads (`signature_invalid`, `missing_header`, `unknown_serial`). */
  error: unknown
  /** What the handler answered. */
  answer: {
    /** The status. */
    status: number
    /** The body: `{"code":"FAIL","message":…}`. */
    body: string
  }
}

/** A selling scanauth whose payment provider is a WeChat Pay client of an emulator; see {@link NotifyWorldFactory}. */
export interface NotifyWorld<O> extends SellingAuth {
  /** The emulator the orders are opened at. */
  pay: NotifyEmulator
  /** What the app under test builds its notification handler from (`createWechatPayNotificationHandler`'s options). */
  handlerOptions: O
  /** Every refusal of the handler, oldest first: `handlerOptions.onError` must push each here. */
  refusals: NotifyRefusal[]
  /** Stops the emulator, and its retries with it (the store is the caller's). */
  close(): Promise<void>
}

/** What the suite asks a world for. */
export interface NotifyWorldOptions {
  /** The `notify_url` of every order: the endpoint of the app under test. */
  notifyUrl: string
  /** The emulator's delays (ms) between retries of a notification that was not accepted. */
  retrySchedule: number[]
}

/**
 * Builds a world: starts a WeChat Pay emulator with `options.retrySchedule`, a client of it whose
 * `notifyUrl` is `options.notifyUrl` (`createWechatPayClient({ ...pay.clientOptions(), notifyUrl })`),
 * a {@link SellingAuth} over that client's provider, and the handler's options (`auth`, the
 * emulator's `verificationKeys` and `apiV3Key`, an `onError` that records {@link NotifyWorld.refusals}).
 * The suite closes each world after its test.
 */
export type NotifyWorldFactory<O> = (options: NotifyWorldOptions) => Promise<NotifyWorld<O>>

/** What a {@link NotifyMount} mounts. */
export interface NotifyMountInput<O> {
  /** The world's handler options: build the adapter's endpoint from them. */
  handlerOptions: O
  /** The path of the `notify_url`, where the endpoint must answer. */
  path: string
  /** Give it the adapter's `onError`, and every error the framework itself reports (Koa's `error` event, Hono's `onError`). */
  onError: (error: unknown) => void
}

/** One way to mount the adapter in an app. */
export interface NotifyMount<O> {
  /** How it is mounted, for the test titles: `before app.use(express.json())`. */
  name: string
  /**
   * Mounts on `host` (with {@link NotifyHost.mount}) an app with the adapter's endpoint at
   * `input.path` and, through the app's usual JSON parser, a route of the app's own: `POST /echo`
   * answers the JSON body it was sent, parsed.
   */
  mount(host: NotifyHost, input: NotifyMountInput<O>): void
  /** Only `POST` reaches the endpoint (`app.post(path, …)`): a `GET` is the framework's to answer, not a 405 of the adapter. */
  routesOnlyPost?: boolean
}

/** A mount behind a parser that keeps no raw bytes; see {@link NotifyRoutesHost.lossy}. */
export interface LossyNotifyMount<O> extends NotifyMount<O> {
  /** What the adapter's `onError` must be told (it should name the fix). */
  reason: RegExp
}

/** How the suite asks the adapter's tests for an app. */
export interface NotifyRoutesHost<O> {
  /**
   * The ways the adapter is meant to be mounted. The cases that depend on how the bytes reach the
   * handler (delivery, forged bytes, 413/405) run on each; those about the handler's decisions
   * (probe, duplicates, an unknown key) on the first.
   */
  mounts: readonly [NotifyMount<O>, ...NotifyMount<O>[]]
  /**
   * A parser in front that keeps only the parsed object, which the adapter must refuse with 500
   * `FAIL` (WeChat Pay then retries) and report to `onError`. Absent for an endpoint that reads the
   * request itself (a Fetch handler).
   */
  lossy?: LossyNotifyMount<O>
}

/** Where the suite has the endpoint mounted, and every order's `notify_url` point. */
const NOTIFY_PATH = '/wechatpay/notify'
/** Two quick retries: a refused delivery gives up within milliseconds. */
const QUICK_RETRIES = [5, 5]
/** The adapters' default body limit; real notifications are about 1 KiB. */
// The adapters' default notify body limit: one constant, from core.
const MAX_BODY_BYTES = DEFAULT_NOTIFY_MAX_BODY_BYTES
const PAID_ONCE = { order: 'paid', device: 'authorized', grants: 1 }
const UNTOUCHED = { order: 'open', device: 'need_purchase', grants: 0 }
const FAIL = { code: 'FAIL', message: expect.any(String) }

/** The emulator's delivery log for one order: each notification's kind, state and every attempt's status. */
function deliveries(pay: NotifyEmulator, orderId: string) {
  return pay
    .notifications()
    .filter((n) => n.outTradeNo === orderId)
    .map((n) => ({ kind: n.kind, state: n.state, statuses: n.attempts.map((a) => a.status) }))
}

/** The `Wechatpay-*` headers of a delivery, to replay it. */
function signatureHeaders(request: HeldRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).filter((entry): entry is [string, string] => entry[0].startsWith('wechatpay-') && typeof entry[1] === 'string'))
}

/** POSTs `body` to the host's notification path as JSON with `headers`, read by `fetchJson`. */
function postNotification(host: NotifyHost, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetchJson(`${host.url}${NOTIFY_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
}

/** The `code` of a `WechatPayError` (what `onError` was told). */
const codeOf = (error: unknown): unknown => (error as { code?: unknown }).code

/**
 * Registers the notification suite for one framework adapter: on every mount, a payment notification
 * answered 204 and granted once (the app's own JSON route still parsed), altered bytes and a missing
 * signature refused 401 with nothing changed, 413 past 64 KiB and 405 for `GET`; on the first, a
 * probe signature refused then the real notification granted once, duplicates under the same and a
 * new id granted once, and a key the app does not hold refused 401 through every retry; and, given
 * a {@link NotifyRoutesHost.lossy} mount, its 500. Real sockets, the real emulator and client (from
 * `world`), core on whatever store `world` gives. Test the rest of the framework's own next to it.
 *
 * @param framework - Its name, for the test titles.
 * @param host - The adapter's mounts.
 * @param world - Builds the emulator, client and selling scanauth of one test.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { wechatPayNotifyMiddleware } from '@scanauth/express'
 * import { describeWechatPayNotifyRoutes, type NotifyWorldFactory } from '@scanauth/testkit'
 * import { createWechatPayNotificationHandler, type WechatPayNotificationHandlerOptions } from '@scanauth/wechat-pay'
 *
 * // startWechatPayEmulator, createWechatPayClient({ ...pay.clientOptions(), notifyUrl }), sellingAuth(…)
 * declare const payWorld: NotifyWorldFactory<WechatPayNotificationHandlerOptions>
 *
 * describeWechatPayNotifyRoutes('express', {
 *   mounts: [{
 *     name: 'before app.use(express.json())',
 *     mount(host, { handlerOptions, path, onError }) {
 *       const app = express()
 *       app.use(path, wechatPayNotifyMiddleware(createWechatPayNotificationHandler(handlerOptions), { onError }))
 *       app.use(express.json())
 *       app.post('/echo', (req, res) => void res.json(req.body))
 *       host.mount(app)
 *     },
 *   }],
 * }, payWorld)
 * ```
 */
export function describeWechatPayNotifyRoutes<O>(framework: string, host: NotifyRoutesHost<O>, world: NotifyWorldFactory<O>): void {
  const newHost = notifyHostPerTest()
  const worlds: Array<NotifyWorld<O>> = []
  afterEach(async () => {
    // A retry in flight must not outlive the test.
    await Promise.all(worlds.splice(0).map((w) => w.close()))
  })

  /** A world with the app mounted on a host of its own; `errors` is what the adapter and the framework reported. */
  async function mounted(mount: NotifyMount<O>, retrySchedule = QUICK_RETRIES) {
    const notifyHost = await newHost()
    const built = await world({ notifyUrl: `${notifyHost.url}${NOTIFY_PATH}`, retrySchedule })
    worlds.push(built)
    const errors: unknown[] = []
    mount.mount(notifyHost, { handlerOptions: built.handlerOptions, path: NOTIFY_PATH, onError: (error) => void errors.push(error) })
    return Object.assign(built, { host: notifyHost, errors })
  }

  /** Buys, pays, and waits until the emulator delivered (or gave up) every notification. */
  async function boughtAndPaid(w: NotifyWorld<O>) {
    const bought = await w.buy()
    await w.pay.pay({ outTradeNo: bought.orderId })
    await w.pay.settled()
    return bought
  }

  const [first] = host.mounts
  const { lossy } = host

  describe(`the ${framework} adapter's WeChat Pay notifications, with the emulator`, () => {
    for (const mount of host.mounts) {
      it(`mounted ${mount.name}: the payment notification is answered 204 and grants the plan`, async () => {
        const w = await mounted(mount)
        const bought = await w.buy()
        expect(await w.outcome(bought)).toEqual(UNTOUCHED)
        await w.pay.pay({ outTradeNo: bought.orderId })
        await w.pay.settled()
        expect(deliveries(w.pay, bought.orderId)).toEqual([{ kind: 'real', state: 'accepted', statuses: [204] }])
        // No poll needed: the 204 is sent only once core has committed the grant, and settled() waited for it.
        expect(await w.outcome(bought)).toEqual(PAID_ONCE)
        expect(await w.auth.getStatus(bought.sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
        expect([w.refusals, w.errors]).toEqual([[], []])
        expect((await postJson(`${w.host.url}/echo`, { still: 'parsed' })).body).toEqual({ still: 'parsed' })
      })

      it(`mounted ${mount.name}: refuses altered bytes and a missing signature with 401 FAIL and changes nothing; the genuine bytes then pass`, async () => {
        // The first delivery is held (the app is "down"), so a genuine signed notification is in hand
        // while the order is still open; the long retry delay keeps the emulator out of the way.
        const w = await mounted(mount, [60_000])
        w.host.hold()
        const bought = await w.buy()
        await w.pay.pay({ outTradeNo: bought.orderId })
        const genuine = await w.host.firstHeld()
        w.host.release()
        const headers = signatureHeaders(genuine)
        expect(Object.keys(headers).sort()).toEqual(['wechatpay-nonce', 'wechatpay-serial', 'wechatpay-signature', 'wechatpay-signature-type', 'wechatpay-timestamp'])
        // `summary` is outside the encrypted resource: only the signature stands between it and a forger.
        const altered = genuine.body.toString('utf8').replace('"summary":"', '"summary":"forged ')
        expect(altered).not.toBe(genuine.body.toString('utf8'))
        expect(await postNotification(w.host, altered, headers)).toMatchObject({ status: 401, body: FAIL })
        expect(await postNotification(w.host, genuine.body)).toMatchObject({ status: 401, body: FAIL })
        expect(w.refusals.map((r) => codeOf(r.error))).toEqual(['signature_invalid', 'missing_header'])
        expect(await w.outcome(bought)).toEqual(UNTOUCHED)
        // Same headers, the bytes as signed: accepted. The refusals were about the bytes and the headers.
        expect((await postNotification(w.host, genuine.body, headers)).status).toBe(204)
        expect(await w.outcome(bought)).toEqual(PAID_ONCE)
        expect(w.errors).toEqual([])
      })

      it(`mounted ${mount.name}: 413 for a body over 64 KiB${mount.routesOnlyPost ? '' : ', 405 for GET'}`, async () => {
        const w = await mounted(mount)
        const oversized = JSON.stringify({ id: 'EV-1', padding: 'x'.repeat(MAX_BODY_BYTES) })
        expect(await postNotification(w.host, oversized)).toMatchObject({ status: 413, body: FAIL })
        if (!mount.routesOnlyPost) {
          const get = await fetchJson(`${w.host.url}${NOTIFY_PATH}`)
          expect(get).toMatchObject({ status: 405, body: { code: 'FAIL' } })
          expect(get.headers.get('allow')).toBe('POST')
        }
        expect([w.refusals, w.errors]).toEqual([[], []])
      })
    }

    it('answers the probe signature 4xx, then the real notification 204, and grants once', async () => {
      const w = await mounted(first)
      w.pay.setKnobs({ probeFirst: true })
      const bought = await boughtAndPaid(w)
      expect(deliveries(w.pay, bought.orderId)).toEqual([
        { kind: 'probe', state: 'refused', statuses: [401] },
        { kind: 'real', state: 'accepted', statuses: [204] },
      ])
      expect(w.refusals.map((r) => [codeOf(r.error), r.answer.status])).toEqual([['signature_invalid', 401]])
      expect(await w.outcome(bought)).toEqual(PAID_ONCE)
    })

    it('grants once when the notification comes again, under the same id and under a new one', async () => {
      const w = await mounted(first)
      w.pay.setKnobs({ duplicateSameId: true, duplicateNewId: true })
      const bought = await boughtAndPaid(w)
      expect(deliveries(w.pay, bought.orderId)).toEqual([
        { kind: 'real', state: 'accepted', statuses: [204] },
        { kind: 'duplicate-same-id', state: 'accepted', statuses: [204] },
        { kind: 'duplicate-new-id', state: 'accepted', statuses: [204] },
      ])
      const [real, sameId, newId] = w.pay.notifications()
      expect(sameId?.id).toBe(real?.id)
      expect(newId?.id).not.toBe(real?.id)
      expect(await w.outcome(bought)).toEqual(PAID_ONCE)
    })

    it('refuses with 401 a notification signed with a key the app does not hold (WeChat Pay rotated it)', async () => {
      const w = await mounted(first)
      const bought = await w.buy()
      // The app keeps the keys it was configured with; WeChat Pay now signs with a key it never got.
      await w.pay.rotatePlatformKey({ retireOld: true })
      await w.pay.pay({ outTradeNo: bought.orderId })
      await w.pay.settled()
      expect(deliveries(w.pay, bought.orderId)).toEqual([{ kind: 'real', state: 'gave-up', statuses: [401, 401, 401] }])
      expect(w.refusals.map((r) => [codeOf(r.error), r.answer.status, JSON.parse(r.answer.body).code])).toEqual(Array(3).fill(['unknown_serial', 401, 'FAIL']))
      expect(await w.outcome(bought)).toEqual(UNTOUCHED)
    })

    if (lossy !== undefined) {
      it(`mounted ${lossy.name}: 500 FAIL, onError is told why, nothing is granted, and WeChat Pay retries`, async () => {
        const w = await mounted(lossy)
        const bought = await boughtAndPaid(w)
        // Every attempt (the first and the two quick retries) was refused, none lost silently.
        expect(deliveries(w.pay, bought.orderId)).toEqual([{ kind: 'real', state: 'gave-up', statuses: [500, 500, 500] }])
        expect(w.errors.map(String)).toEqual(Array(3).fill(expect.stringMatching(lossy.reason)))
        expect(await w.outcome(bought)).toEqual(UNTOUCHED)
        // The handler never saw those deliveries: the refusal is the adapter's.
        expect(w.refusals).toEqual([])
        expect(await postNotification(w.host, '{"id":"EV-1"}')).toMatchObject({ status: 500, body: FAIL })
      })
    }
  })
}
