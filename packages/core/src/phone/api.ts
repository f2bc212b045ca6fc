/**
 * The public shape of paying on the phone that scanned (`payments.phone`, docs/behaviour.md
 * B-phone-1…10): the option, and the inputs and steps of the three page operations behind
 * `{base}/m/pay` and `{base}/m/order`. The HTTP handler renders the steps as pages; an app with
 * pages of its own can call the operations directly.
 *
 * @module
 */
import type { JsapiPayParameters } from '../orders/provider'
import type { PlanView } from '../orders/api'
import type { WebOAuthProvider } from '../service/web-oauth'
import type { Authorization } from '../service/views'

/** The `payments.phone` option of `createScanAuth` (docs/payments.md, "Paying on the phone"). */
export interface PhonePayOptions {
  /**
   * The public address of the phone pages' directory, the HTTP handler's `{base}/m/`, e.g.
   * `https://app.example/auth/m/`: the scan's reply links to `pay?ticket=…` under it, and WeChat
   * OAuth sends the phone back there. Register it (or its domain) as WeChat Pay's payment directory
   * and its host as the account's web authorization domain. A function is asked each time (for a
   * server that learns its address once it listens).
   */
  url: string | (() => string)
  /** Who opened a page: WeChat web OAuth, `snsapi_base` (`createWechatWebOAuth` of `@scanauth/wechat`). */
  oauth: WebOAuthProvider
  /** How long the link of a `need_purchase` scan works, in minutes, 1–1440. Default 30 (B-phone-2). */
  ticketTtlMinutes?: number
  /**
   * **Only with an emulator, never in production.** The address of a `WeixinJSBridge` stand-in
   * script (`@scanauth/wechat-emulator`'s `jsapiBridgeUrl`): the pages load it, and, since it plays
   * WeChat's in-app browser, they no longer ask for WeChat's user agent (B-phone-3).
   */
  emulatorBridgeUrl?: string
}

/** Input of {@link ScanAuth.openPhonePay}: the query of `GET {base}/m/pay` and the browser's user agent. */
export interface PhonePayOpenInput {
  /** The one-time ticket of a scan's link (B-phone-2); absent on a page for the person's own account. */
  ticket?: string
  /** The OAuth `code` WeChat came back with; absent on the first visit. */
  code?: string
  /** The OAuth `state` WeChat came back with; must be the one sent. */
  state?: string
  /** The browser's `User-Agent`: outside WeChat the page says to open the link in WeChat (B-phone-3). */
  userAgent?: string
}

/** Input of {@link ScanAuth.choosePhonePlan}: the fields of a plans page's form. */
export interface PhonePlanChoice {
  /** The page's CSRF token (hidden field `csrf`). */
  csrf: string
  /** The plan's id (the button `name="plan"`); absent: show the plans again (the cashier's cancel). */
  plan?: string
  /** The phone's address, for the per-address purchase limit (B-rate-11). */
  clientAddress?: string
}

/** Input of {@link ScanAuth.openPhoneOrder}: the query of `GET {base}/m/order`. */
export interface PhoneOrderOpenInput {
  /** The order's id (`out_trade_no`). */
  orderId: string
  /** The OAuth `code` WeChat came back with; absent on the first visit. */
  code?: string
  /** The OAuth `state` WeChat came back with; must be the one sent. */
  state?: string
  /** The browser's `User-Agent` (B-phone-3). */
  userAgent?: string
}

/** What the plans page shows the person WeChat OAuth identified (B-phone-4). */
export interface PhonePayView {
  /** The page's CSRF token, for its forms' hidden field: only the page shown last buys (B-phone-5). */
  csrf: string
  /** The waiting device a ticket named, made safe to show (not HTML-escaped); null on a page without one. */
  deviceLabel: string | null
  /** The person's current authorization, or null. */
  current: Authorization | null
  /** What is queued behind it, in activation order. */
  queue: Authorization[]
  /** The catalog. */
  plans: PlanView[]
}

/** The cashier page of a JSAPI order (B-phone-6). */
export interface PhoneCashier {
  /** The order's id: the cashier goes to `order?id=…` on `ok`. */
  orderId: string
  /** The plan's description and price in fen, as the order records them. */
  description: string
  /** The price in fen. */
  amountFen: number
  /** The waiting device, when the purchase is for one; null otherwise. */
  deviceLabel: string | null
  /** The six parameters of `getBrandWCPayRequest`, signed. */
  parameters: JsapiPayParameters
  /** The page's CSRF token, still good: `cancel` posts it back to show the plans (B-phone-6). */
  csrf: string
  /** The emulator's bridge script (`payments.phone.emulatorBridgeUrl`), or null in production. */
  emulatorBridgeUrl: string | null
}

/** What the order page shows (B-phone-7). */
export interface PhoneOrderView {
  /** The order's id. */
  orderId: string
  /** The plan's description. */
  description: string
  /** The price in fen. */
  amountFen: number
  /** `paid`, or `refunded` once refunded in full. An unpaid order is refused (`order_not_paid`). */
  status: 'paid' | 'refunded'
  /** When the payment was applied, ISO 8601. */
  paidAt: string | null
  /** The device the order was for, made safe to show; null for a purchase without one. */
  deviceLabel: string | null
  /** The person's current authorization after the payment, or null. */
  current: Authorization | null
  /** The "remind me before it ends" link (with `reminders` and a one-time subscription, B-remind-6), or null. */
  remindUrl: string | null
}

/** The steps every phone page may answer before it knows who is there. */
export type PhoneEntryStep =
  | {
      /** First visit: send the phone to WeChat web OAuth (302 to `location`). */
      step: 'authorize'
      /** The OAuth address. */
      location: string
    }
  | {
      /** Not WeChat's browser: the page says to open the link in WeChat (B-phone-3). */
      step: 'open_in_wechat'
    }

/** Result of {@link ScanAuth.openPhonePay} and {@link ScanAuth.choosePhonePlan}. */
export type PhonePayStep =
  | PhoneEntryStep
  | {
      /** The plans page. */
      step: 'plans'
      /** What it shows. */
      view: PhonePayView
    }
  | {
      /** The cashier page of the order just opened or reused. */
      step: 'cashier'
      /** What it carries. */
      cashier: PhoneCashier
    }

/** Result of {@link ScanAuth.openPhoneOrder}. */
export type PhoneOrderStep =
  | PhoneEntryStep
  | {
      /** The paid order. */
      step: 'order'
      /** What the page shows. */
      view: PhoneOrderView
    }
