/**
 * Paying on the phone that scanned (`payments.phone`, docs/behaviour.md B-phone-1…10): the three
 * operations behind the phone pages. WeChat web OAuth says who opened a page; a scan's one-time
 * ticket names the device waiting for the purchase; the plans page's token (page-tokens.ts) lets
 * only its last page buy; the order page believes WeChat Pay, never the cashier's `ok`, and grants
 * through the same idempotent path as the payment notification.
 *
 * @module
 */
import type { ScanAuth } from '../service/api'
import type { PaymentOutcome, PlanView } from '../orders/api'
import type { ProviderTransaction } from '../orders/provider'
import type { OrderStore } from '../orders/context'
import type { JsapiPurchase, JsapiPurchaseInput } from '../orders/purchase'
import type { PhoneEntryStep, PhoneOrderStep, PhonePayStep, PhonePayView } from './api'
import type { ResolvedPhone } from '../orders/options'
import { ScanAuthError } from '../errors'
import { digestSecret, displayLabel, oauthStateOf, SECRET_PATTERN } from '../rules/confirm'
import { isPaidState, isWithinScenePurchaseWindow } from '../rules/orders'
import { isWeChatBrowser, phoneTicketState } from '../rules/phone'
import { SECOND } from '../rules/time'
import { newSecret, ORDER_ID_PATTERN } from '../service/random'
import { parseInput } from '../service/validation'
import { iso } from '../service/views'
import type { SceneRecord } from '../store/records'
import { checkPageToken, issuePageToken } from './page-tokens'
import { phoneOrderOpenInput, phonePayOpenInput, phonePlanChoice } from './validation'

/** What the phone pages share with the rest of the service. */
export interface PhoneContext {
  store: OrderStore
  now: () => number
  phone: ResolvedPhone
  listPlans: () => PlanView[]
  getUser: ScanAuth['getUser']
  queryOrder: (outTradeNo: string) => Promise<ProviderTransaction | null>
  purchaseJsapi: (input: JsapiPurchaseInput) => Promise<JsapiPurchase>
  applyPayment: (report: ProviderTransaction) => Promise<PaymentOutcome>
  /** The "remind me" link for a person, or null (reminders/methods.ts). */
  remindMeUrl: (openid: string) => Promise<string | null>
}

/** The phone pages' operations, and what the scan and the confirm page need of them. */
export type PhoneMethods = Pick<ScanAuth, 'openPhonePay' | 'choosePhonePlan' | 'openPhoneOrder'> & {
  /** A new phone ticket for a scan: the secret for its link and the digest for its scene (B-phone-2). */
  newTicket(): { ticket: string; ticketHash: string }
  /** The link of a `need_purchase` scan's reply: `{phone.url}pay?ticket=…`. */
  payUrlOf(ticket: string): string
  /**
   * The plans of a confirmation that ended in `need_purchase`, for the confirm page to offer at once
   * (B-phone-8): the confirm ticket, now the scene's phone ticket, is spent by it.
   */
  plansAfterConfirmation(input: { userId: number; ticket: string }): Promise<PhonePayView>
}

/** The key of the counter that makes a ticket single-use (B-phone-4). */
const ticketUseKey = (ticketHash: string) => `phone:ticket:${ticketHash}`

export function phoneMethods(ctx: PhoneContext): PhoneMethods {
  const { store, now, phone } = ctx
  const ticketTtlMs = phone.ticketTtlMinutes * 60 * SECOND

  /** The address of a phone page under `phone.url`, with its query. */
  function pageUrl(page: 'pay' | 'order', query: Record<string, string>): string {
    const base = typeof phone.url === 'function' ? phone.url() : phone.url
    const url = new URL(page, base.endsWith('/') ? base : `${base}/`)
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value)
    return url.toString()
  }

  /** Outside WeChat's browser (and without the emulator's bridge) there is no cashier (B-phone-3). */
  const inWeChat = (userAgent: string | undefined) => phone.emulatorBridgeUrl !== undefined || isWeChatBrowser(userAgent)

  /**
   * Before WeChat says who is there: the page outside WeChat, or the redirect to OAuth on the first
   * visit; null once WeChat came back with a code whose `state` is the one sent.
   */
  function entryStep(input: { userAgent?: string; code?: string; state?: string }, redirectUri: string, state: string): PhoneEntryStep | null {
    if (!inWeChat(input.userAgent)) return { step: 'open_in_wechat' }
    if (input.code === undefined) {
      if (input.state !== undefined) throw new ScanAuthError('invalid_request', 'WeChat came back without a code: open the link again')
      return { step: 'authorize', location: phone.oauth.authorizeUrl({ redirectUri, state }) }
    }
    if (input.state !== state) throw new ScanAuthError('invalid_request', 'The sign-in state does not match this link: open the link again')
    return null
  }

  /** The openid WeChat answers for the page's OAuth code. */
  async function whoIs(code: string): Promise<string> {
    let openid: string | null
    try {
      openid = await phone.oauth.exchangeCode(code)
    } catch (error) {
      throw new ScanAuthError('phone_oauth_failed', 'WeChat could not be asked who you are; try again in a moment', { cause: error })
    }
    if (openid === null) throw new ScanAuthError('phone_oauth_refused', 'WeChat refused this sign-in code: open the link again')
    return openid
  }

  /** The scene a ticket names while it works, or the refusal that says why (B-phone-2). */
  async function sceneOfTicket(ticketHash: string): Promise<{ scene: SceneRecord & { userId: number }; scannedBy: string; expiresAt: number }> {
    const { scene } = await store.load({ confirmTicketHash: ticketHash })
    const state = phoneTicketState(scene, ticketHash, ticketTtlMs, now())
    if (state.kind === 'unknown') throw new ScanAuthError('phone_ticket_invalid', 'This link is not valid')
    if (state.kind === 'expired') throw new ScanAuthError('phone_ticket_expired', 'This link has expired: buy from the device, or open the plans page from the official account')
    return state
  }

  /** What the plans page shows `openid`; a fresh page token unless `csrf` is still the page's. */
  async function plansView(openid: string, scene: SceneRecord | null, ticketHash: string | null, csrf?: string): Promise<PhonePayView> {
    const user = await ctx.getUser({ openid })
    if (user === null) throw new ScanAuthError('user_not_found', 'There is no account for you yet: scan the code a device shows first')
    return {
      csrf: csrf ?? (await issuePageToken(store, { openid, ticketHash }, now())),
      deviceLabel: scene === null ? null : displayLabel(scene.deviceId),
      current: user.current,
      queue: user.queue,
      plans: ctx.listPlans(),
    }
  }

  /** The scene a page's purchase is for, while its ticket still serves this person; else none (B-phone-5). */
  async function sceneForPurchase(ticketHash: string | null, openid: string): Promise<SceneRecord | null> {
    if (ticketHash === null) return null
    const { scene } = await store.load({ confirmTicketHash: ticketHash })
    const state = phoneTicketState(scene, ticketHash, ticketTtlMs, now())
    return state.kind === 'open' && state.scannedBy === openid ? state.scene : null
  }

  return {
    newTicket() {
      const ticket = newSecret()
      return { ticket, ticketHash: digestSecret(ticket) }
    },

    payUrlOf: (ticket) => pageUrl('pay', { ticket }),

    async plansAfterConfirmation({ userId, ticket }) {
      const ticketHash = digestSecret(ticket)
      const user = await ctx.getUser({ userId })
      if (user === null) throw new ScanAuthError('user_not_found', `No user with id ${userId}`)
      const { scene } = await store.load({ confirmTicketHash: ticketHash })
      // The confirm page is the ticket's one use: its link opens nothing more (B-phone-8).
      await store.incrementCounter(ticketUseKey(ticketHash), now() + ticketTtlMs, now())
      return plansView(user.openid, scene, ticketHash)
    },

    async openPhonePay(input) {
      const { ticket, code, state, userAgent } = parseInput(phonePayOpenInput, input)
      // Outside WeChat nothing is read: the page only says where to open the link (B-phone-3).
      if (!inWeChat(userAgent)) return { step: 'open_in_wechat' }
      if (ticket !== undefined && !SECRET_PATTERN.test(ticket)) throw new ScanAuthError('phone_ticket_invalid', 'This link is not valid')
      const ticketHash = ticket === undefined ? null : digestSecret(ticket)
      // A dead ticket is told before the trip to WeChat OAuth, which would change nothing.
      const found = ticketHash === null ? null : await sceneOfTicket(ticketHash)
      const redirectUri = pageUrl('pay', ticket === undefined ? {} : { ticket })
      const entry = entryStep({ userAgent, code, state }, redirectUri, oauthStateOf(`phone-pay:${ticket ?? ''}`))
      if (entry !== null) return entry
      const openid = await whoIs(code as string)
      if (found === null || ticketHash === null) return { step: 'plans', view: await plansView(openid, null, null) }
      // Checked before the ticket is spent: a forwarded link does not use up the scanner's (B-phone-4).
      if (openid !== found.scannedBy) throw new ScanAuthError('phone_wrong_user', 'This link is for the person who scanned the code')
      if ((await store.incrementCounter(ticketUseKey(ticketHash), found.expiresAt, now())) > 1) {
        throw new ScanAuthError('phone_ticket_used', 'This link was opened already: open the plans page from the official account, or scan the device again')
      }
      return { step: 'plans', view: await plansView(openid, found.scene, ticketHash) }
    },

    async choosePhonePlan(input): Promise<PhonePayStep> {
      const { csrf, plan, clientAddress } = parseInput(phonePlanChoice, input)
      const claims = await checkPageToken(store, csrf, now())
      const scene = await sceneForPurchase(claims.ticketHash, claims.openid)
      // No plan: the cashier's cancel, back to the same page with the order still open (B-phone-6).
      if (plan === undefined || plan === '') return { step: 'plans', view: await plansView(claims.openid, scene, claims.ticketHash, csrf) }
      const user = await ctx.getUser({ openid: claims.openid })
      if (user === null) throw new ScanAuthError('user_not_found', 'There is no account for you yet: scan the code a device shows first')
      // For the waiting device while it can buy (B-order-12); after that, for the account alone.
      const forScene = scene !== null && scene.userId === user.id && (isWithinScenePurchaseWindow(scene, now()) || user.current === null)
      const buyer = { userId: user.id, sceneStr: forScene ? scene.sceneStr : null }
      const { order, parameters } = await ctx.purchaseJsapi({ buyer, openid: claims.openid, plan, ...(clientAddress === undefined ? {} : { clientAddress }) })
      return {
        step: 'cashier',
        cashier: {
          orderId: order.outTradeNo,
          description: order.description,
          amountFen: order.amountFen,
          deviceLabel: forScene ? displayLabel(scene.deviceId) : null,
          parameters,
          csrf,
          emulatorBridgeUrl: phone.emulatorBridgeUrl ?? null,
        },
      }
    },

    async openPhoneOrder(input): Promise<PhoneOrderStep> {
      const { orderId, code, state, userAgent } = parseInput(phoneOrderOpenInput, input)
      const entry = entryStep({ userAgent, code, state }, pageUrl('order', { id: orderId }), oauthStateOf(`phone-order:${orderId}`))
      if (entry !== null) return entry
      const openid = await whoIs(code as string)
      let order = ORDER_ID_PATTERN.test(orderId) ? await store.loadOrder(orderId) : null
      if (order === null) throw new ScanAuthError('order_not_found', 'There is no such order')
      const user = await ctx.getUser({ openid })
      if (user === null || user.id !== order.userId) throw new ScanAuthError('phone_wrong_user', 'This order is not yours')
      if (order.status === 'open') {
        // The cashier's `ok` proves nothing: WeChat Pay is asked, and a payment it reports is applied
        // exactly as its notification would be, once, whichever comes first (B-phone-7).
        let report: ProviderTransaction | null
        try {
          report = await ctx.queryOrder(orderId)
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error)
          throw new ScanAuthError('payment_provider_failed', `The payment service failed to report the order: ${reason}`, { cause: error })
        }
        if (report !== null && isPaidState(report.tradeState)) await ctx.applyPayment(report)
        order = (await store.loadOrder(orderId)) ?? order
      }
      if (order.status === 'open') throw new ScanAuthError('order_not_paid', 'WeChat Pay has not received this payment (yet): nothing was granted')
      if (order.status === 'closed') throw new ScanAuthError('order_not_paid', 'This order was closed without a payment: nothing was granted')
      const after = await ctx.getUser({ openid })
      const scene = order.sceneStr === null ? null : (await store.load({ sceneStr: order.sceneStr })).scene
      return {
        step: 'order',
        view: {
          orderId: order.outTradeNo,
          description: order.description,
          amountFen: order.amountFen,
          status: order.status,
          paidAt: order.paidAt === null ? null : iso(order.paidAt),
          deviceLabel: scene === null ? null : displayLabel(scene.deviceId),
          current: after?.current ?? null,
          // After a purchase, where the person is anyway: a reminder before it ends (B-remind-6).
          remindUrl: order.status === 'paid' ? await ctx.remindMeUrl(openid) : null,
        },
      }
    },
  }
}

/** The phone operations of an instance without `payments.phone`: every page says it is not set up. */
export const PHONE_PAY_OFF: Pick<ScanAuth, 'openPhonePay' | 'choosePhonePlan' | 'openPhoneOrder'> = {
  openPhonePay: notConfigured,
  choosePhonePlan: notConfigured,
  openPhoneOrder: notConfigured,
}

async function notConfigured(): Promise<never> {
  throw new ScanAuthError('phone_not_configured', 'Paying on the phone is not set up on this server (payments.phone)')
}
