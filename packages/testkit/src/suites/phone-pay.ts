/**
 * Paying on the phone that scanned (docs/behaviour.md, B-phone-1…10) on the store under test,
 * through `createScanAuth` with `payments.phone`: the ticket a `need_purchase` scan leaves on its
 * scene, the plans page after WeChat OAuth, the CSRF token of the page last shown, the JSAPI order
 * (its channel, its payer, the scene it serves), the order page that believes WeChat Pay and not the
 * cashier, and every refusal changing nothing.
 */
import { describe, expect, it } from 'vitest'
import type { PhonePayStep, PhoneOrderStep, ScanAuth, ScanResult } from '@scanauth/core'
import type { ContractContext } from '../context'
import { TestPaymentService } from '../payment-service'
import { expectScanAuthError, sceneIn } from '../steps'
import { TestWebOAuth } from '../web-oauth'
import { endTrial, MINUTE, sellingAuthWith } from './selling'

const PHONE_URL = 'https://app.example.test/auth/m/'
const WECHAT = 'Mozilla/5.0 (iPhone) AppleWebKit/605.1.15 Mobile/15E148 MicroMessenger/8.0.50 NetType/WIFI'

interface PhoneWorld {
  ctx: ContractContext
  service: TestPaymentService
  oauth: TestWebOAuth
  auth: ScanAuth
}

function world(ctx: ContractContext, extra: { confirm?: boolean } = {}): PhoneWorld {
  const service = new TestPaymentService(ctx.clock.now)
  const oauth = new TestWebOAuth()
  const confirm = extra.confirm === true ? { confirm: 'link' as const, confirmation: { url: 'https://app.example.test/auth/confirm', oauth } } : {}
  const auth = sellingAuthWith(ctx, service, { phone: { url: PHONE_URL, oauth }, ...confirm })
  return { ctx, service, oauth, auth }
}

/** A scene scanned by `openid` after the trial: need_purchase, with its pay link's ticket. */
async function needPurchaseScan(w: PhoneWorld, openid = 'alice', deviceId = 'tv-livingroom'): Promise<{ sceneStr: string; ticket: string; scan: ScanResult }> {
  const { sceneStr } = await w.auth.createScene({ deviceId })
  const scan = await w.auth.handleScan({ sceneStr, openid })
  expect(scan).toMatchObject({ result: 'need_purchase', payUrl: expect.stringContaining(`${PHONE_URL}pay?ticket=`) })
  const ticket = new URL((scan as { payUrl: string }).payUrl).searchParams.get('ticket') as string
  return { sceneStr, ticket, scan }
}

/** The plans page `openid` gets for `ticket` (or without one) after WeChat OAuth. */
async function plansFor(w: PhoneWorld, openid: string, ticket?: string): Promise<Extract<PhonePayStep, { step: 'plans' }>> {
  const first = await w.auth.openPhonePay({ ...(ticket === undefined ? {} : { ticket }), userAgent: WECHAT })
  if (first.step !== 'authorize') throw new Error(`expected the OAuth redirect first, got ${first.step}`)
  const redirect = new URL(new URL(first.location).searchParams.get('redirect_uri') as string)
  const state = new URL(first.location).searchParams.get('state') as string
  const step = await w.auth.openPhonePay({ ...Object.fromEntries(redirect.searchParams), code: w.oauth.issueCode(openid), state, userAgent: WECHAT })
  if (step.step !== 'plans') throw new Error(`expected the plans page, got ${step.step}`)
  return step
}

/** The order page `openid` gets for `orderId` after WeChat OAuth. */
async function orderPageFor(w: PhoneWorld, openid: string, orderId: string): Promise<PhoneOrderStep> {
  const first = await w.auth.openPhoneOrder({ orderId, userAgent: WECHAT })
  if (first.step !== 'authorize') throw new Error(`expected the OAuth redirect first, got ${first.step}`)
  const state = new URL(first.location).searchParams.get('state') as string
  return w.auth.openPhoneOrder({ orderId, code: w.oauth.issueCode(openid), state, userAgent: WECHAT })
}

/** The cashier of the plan `plan` chosen on the page whose token is `csrf`. */
async function cashierOf(w: PhoneWorld, csrf: string, plan = 'days-30') {
  const step = await w.auth.choosePhonePlan({ csrf, plan })
  if (step.step !== 'cashier') throw new Error(`expected the cashier, got ${step.step}`)
  return step.cashier
}

export function phonePaySuite(get: () => ContractContext): void {
  describe('paying on the phone (B-phone-1…10)', () => {
    it('B-phone-2, B-phone-4…7: scan → link → plans → JSAPI order for the scene → paid → the device is authorized', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      const { sceneStr, ticket } = await needPurchaseScan(w)
      // The scene keeps the scanner and only the ticket's digest (B-phone-2).
      const snapshot = await w.ctx.dump()
      expect(sceneIn(snapshot, sceneStr).confirmation).toMatchObject({ scannedBy: 'alice', csrfHash: null })
      expect(JSON.stringify(snapshot)).not.toContain(ticket)

      const { view } = await plansFor(w, 'alice', ticket)
      expect(view).toMatchObject({ deviceLabel: 'tv-livingroom', current: null, queue: [], plans: [{ id: 'days-30' }, { id: 'points-100' }] })
      const cashier = await cashierOf(w, view.csrf)
      expect(cashier).toMatchObject({ description: '30 days', amountFen: 1990, deviceLabel: 'tv-livingroom', csrf: view.csrf, emulatorBridgeUrl: null })
      expect(cashier.parameters).toMatchObject({ appId: w.service.merchant.appid, package: `prepay_id=wx${cashier.orderId}`, signType: 'RSA' })
      // The payer is the person the page identified; the order serves the scene's device (B-phone-1).
      expect(w.service.orders.get(cashier.orderId)?.request).toMatchObject({ payerOpenid: 'alice', amountFen: 1990 })
      expect(await w.auth.getOrder(cashier.orderId)).toMatchObject({ status: 'open', channel: 'jsapi', sceneStr, planId: 'days-30' })
      expect(await w.auth.openOrderOfScene(sceneStr)).toMatchObject({ orderId: cashier.orderId })

      // The cashier's ok before any payment: the order page asks WeChat Pay and grants nothing (B-phone-7).
      await expectScanAuthError(orderPageFor(w, 'alice', cashier.orderId), 'order_not_paid', 409)
      expect(await w.auth.getStatus(sceneStr)).toMatchObject({ status: 'need_purchase' })

      // Paid, without the notification yet: the order page finds it paid and grants; the device sees it.
      w.service.pay(cashier.orderId)
      const paid = await orderPageFor(w, 'alice', cashier.orderId)
      expect(paid).toMatchObject({ step: 'order', view: { orderId: cashier.orderId, status: 'paid', deviceLabel: 'tv-livingroom', current: { type: 'time' } } })
      expect(await w.auth.getStatus(sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
      // The notification that arrives afterwards changes nothing: one grant (B-order-6).
      const report = await w.service.queryOrder(cashier.orderId)
      expect(await w.auth.applyPayment(report as NonNullable<typeof report>)).toMatchObject({ result: 'already_applied' })
      const grants = (await w.ctx.dump()).authorizations.filter((a) => a.source === 'purchase')
      expect(grants).toHaveLength(1)
    })

    it('B-phone-4: the ticket opens one page, for the scanner only; another openid is refused without spending it', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      await endTrial(w.ctx, w.auth, 'mallory')
      const { ticket } = await needPurchaseScan(w)
      const first = await w.auth.openPhonePay({ ticket, userAgent: WECHAT })
      const state = first.step === 'authorize' ? (new URL(first.location).searchParams.get('state') as string) : ''
      await expectScanAuthError(w.auth.openPhonePay({ ticket, code: w.oauth.issueCode('mallory'), state, userAgent: WECHAT }), 'phone_wrong_user', 403)
      // The scanner still gets the page: the refusal above did not use the ticket.
      await plansFor(w, 'alice', ticket)
      await expectScanAuthError(w.auth.openPhonePay({ ticket, code: w.oauth.issueCode('alice'), state, userAgent: WECHAT }), 'phone_ticket_used', 410)
      // A made-up ticket, and one past its 30 minutes.
      await expectScanAuthError(w.auth.openPhonePay({ ticket: 'x'.repeat(43), userAgent: WECHAT }), 'phone_ticket_invalid', 404)
      const late = await needPurchaseScan(w)
      w.ctx.clock.advance(30 * MINUTE)
      await expectScanAuthError(w.auth.openPhonePay({ ticket: late.ticket, userAgent: WECHAT }), 'phone_ticket_expired', 410)
    })

    it('B-phone-3: outside WeChat the page says to open it there; WeChat refusing the code or unreachable refuses the page', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      const { ticket } = await needPurchaseScan(w)
      expect(await w.auth.openPhonePay({ ticket, userAgent: 'Mozilla/5.0 (Macintosh) Safari/605.1.15' })).toEqual({ step: 'open_in_wechat' })
      expect(await w.auth.openPhoneOrder({ orderId: 'SA' + '0'.repeat(26) })).toEqual({ step: 'open_in_wechat' })
      const first = await w.auth.openPhonePay({ ticket, userAgent: WECHAT })
      expect(first).toMatchObject({ step: 'authorize', location: expect.stringContaining('scope=snsapi_base') })
      const state = first.step === 'authorize' ? (new URL(first.location).searchParams.get('state') as string) : ''
      await expectScanAuthError(w.auth.openPhonePay({ ticket, code: 'not-a-code', state, userAgent: WECHAT }), 'phone_oauth_refused', 400)
      await expectScanAuthError(w.auth.openPhonePay({ ticket, code: w.oauth.issueCode('alice'), state: 'other', userAgent: WECHAT }), 'invalid_request', 400)
      w.oauth.failWith = new Error('connect ECONNREFUSED')
      await expectScanAuthError(w.auth.openPhonePay({ ticket, code: 'any', state, userAgent: WECHAT }), 'phone_oauth_failed', 502)
      w.oauth.failWith = null
      // None of these spent the ticket.
      await plansFor(w, 'alice', ticket)
    })

    it('B-phone-5: only the page shown last buys; a made-up, changed or missing token and an unknown plan open nothing', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      const older = (await plansFor(w, 'alice')).view.csrf
      const newer = (await plansFor(w, 'alice')).view.csrf
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: older, plan: 'days-30' }), 'phone_csrf_invalid', 403)
      const [claims, secret] = newer.split('.') as [string, string]
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: `${claims}.${'A'.repeat(43)}`, plan: 'days-30' }), 'phone_csrf_invalid', 403)
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: `${claims.slice(0, -2)}x.${secret}`, plan: 'days-30' }), 'phone_csrf_invalid', 403)
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: '', plan: 'days-30' }), 'phone_csrf_invalid', 403)
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: newer, plan: 'no-such-plan' }), 'plan_not_found', 404)
      expect(w.service.calls).toEqual([])
      // A double tap of the last page is one order, and the cashier's cancel shows the same page again.
      const a = await cashierOf(w, newer)
      const b = await cashierOf(w, newer)
      expect(b.orderId).toBe(a.orderId)
      expect(await w.auth.choosePhonePlan({ csrf: newer })).toMatchObject({ step: 'plans', view: { csrf: newer } })
      // The page's purchase is for the account alone: no device named it.
      expect(await w.auth.getOrder(a.orderId)).toMatchObject({ status: 'open', channel: 'jsapi', sceneStr: null })
      w.ctx.clock.advance(30 * MINUTE)
      await expectScanAuthError(w.auth.choosePhonePlan({ csrf: newer, plan: 'days-30' }), 'phone_csrf_invalid', 403)
    })

    it('B-phone-1: a phone order and the device code replace each other; one device never has two payable orders', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      const { sceneStr, ticket } = await needPurchaseScan(w)
      const device = await w.auth.purchase({ sceneStr, plan: 'days-30' })
      // The device may say that the phone got a link (B-phone-2).
      expect(device.phoneLink).toBe(true)
      const cashier = await cashierOf(w, (await plansFor(w, 'alice', ticket)).view.csrf)
      expect(cashier.orderId).not.toBe(device.orderId)
      expect(await w.auth.getOrder(device.orderId)).toMatchObject({ status: 'closed', channel: 'native' })
      expect(w.service.orders.get(device.orderId)?.tradeState).toBe('CLOSED')
      expect(await w.auth.openOrderOfScene(sceneStr)).toMatchObject({ orderId: cashier.orderId, channel: 'jsapi' })
    })

    it('B-phone-7: the order page shows only the person\'s own order', async () => {
      const w = world(get())
      await endTrial(w.ctx, w.auth, 'alice')
      await endTrial(w.ctx, w.auth, 'mallory')
      const cashier = await cashierOf(w, (await plansFor(w, 'alice')).view.csrf)
      w.service.pay(cashier.orderId)
      await expectScanAuthError(orderPageFor(w, 'mallory', cashier.orderId), 'phone_wrong_user', 403)
      await expectScanAuthError(orderPageFor(w, 'alice', 'SA' + '0'.repeat(26)), 'order_not_found', 404)
      // Mallory's look granted nothing; Alice's does.
      expect(await w.auth.getOrder(cashier.orderId)).toMatchObject({ status: 'open' })
      expect(await orderPageFor(w, 'alice', cashier.orderId)).toMatchObject({ step: 'order', view: { status: 'paid', deviceLabel: null } })
      w.service.failWith = 'connect ETIMEDOUT'
      const another = await w.auth.choosePhonePlan({ csrf: (await plansFor(w, 'alice')).view.csrf, plan: 'points-100' }).catch((error: unknown) => error)
      expect(another).toMatchObject({ code: 'payment_provider_failed', status: 502 })
    })

    it('B-phone-8: with confirm on the phone, a confirmation that ends in need_purchase offers the plans at once, for that device', async () => {
      const w = world(get(), { confirm: true })
      // The trial ends through an instance that signs in at the scan (a confirm-mode scan waits instead).
      await endTrial(w.ctx, world(w.ctx).auth, 'alice')
      const { sceneStr } = await w.auth.createScene({ deviceId: 'tv-bedroom' })
      const scan = await w.auth.handleScan({ sceneStr, openid: 'alice' })
      if (scan.result !== 'scanned') throw new Error('expected scanned')
      const first = await w.auth.openConfirmation({ ticket: scan.ticket })
      const state = first.step === 'authorize' ? (new URL(first.location).searchParams.get('state') as string) : ''
      const page = await w.auth.openConfirmation({ ticket: scan.ticket, code: w.oauth.issueCode('alice'), state })
      if (page.step !== 'decide') throw new Error('expected the decision page')
      const decided = await w.auth.decideConfirmation({ ticket: scan.ticket, csrf: page.csrf, decision: 'confirm' })
      expect(decided).toMatchObject({ result: 'need_purchase', payment: { deviceLabel: 'tv-bedroom', current: null, plans: [{ id: 'days-30' }, { id: 'points-100' }] } })
      const cashier = await cashierOf(w, decided.payment?.csrf as string, 'points-100')
      expect(await w.auth.getOrder(cashier.orderId)).toMatchObject({ channel: 'jsapi', sceneStr })
      // The confirm ticket was the page's one use: its pay link opens nothing more.
      const again = await w.auth.openPhonePay({ ticket: scan.ticket, userAgent: WECHAT })
      const againState = again.step === 'authorize' ? (new URL(again.location).searchParams.get('state') as string) : ''
      await expectScanAuthError(w.auth.openPhonePay({ ticket: scan.ticket, code: w.oauth.issueCode('alice'), state: againState, userAgent: WECHAT }), 'phone_ticket_used', 410)
      await expect(w.auth.applyPayment(w.service.pay(cashier.orderId))).resolves.toMatchObject({ result: 'granted' })
      expect(await w.auth.getStatus(sceneStr)).toMatchObject({ status: 'authorized', authorization: { type: 'points' } })
    })

    it('B-phone-2: without payments.phone nothing changes: no link, no ticket on the scene, the pages are not set up', async () => {
      const ctx = get()
      const auth = sellingAuthWith(ctx, new TestPaymentService(ctx.clock.now))
      await endTrial(ctx, auth, 'alice')
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'need_purchase', userId: 1 })
      expect(sceneIn(await ctx.dump(), sceneStr).confirmation).toBeNull()
      expect(auth.phonePay).toBe(false)
      expect(await auth.purchase({ sceneStr, plan: 'days-30' })).not.toHaveProperty('phoneLink')
      await expectScanAuthError(auth.openPhonePay({ userAgent: WECHAT }), 'phone_not_configured', 404)
      // A scan that authorizes leaves no ticket either.
      const w = world(ctx)
      const { sceneStr: signedIn } = await w.auth.createScene({ deviceId: 'tv2' })
      expect(await w.auth.handleScan({ sceneStr: signedIn, openid: 'bob' })).toEqual({ result: 'authorized', userId: 2 })
      expect(sceneIn(await ctx.dump(), signedIn).confirmation).toBeNull()
    })
  })
}
