/**
 * The public shape of confirm on the phone (`confirm: 'link'`, docs/behaviour.md B-confirm-1…12):
 * the web OAuth provider core asks who opened a confirm link, and the inputs and results of
 * `openConfirmation` and `decideConfirmation`.
 *
 * @module
 */
import type { PhonePayView } from '../phone/api'

export type { WebOAuthProvider } from './web-oauth'
import type { WebOAuthProvider } from './web-oauth'

/** Options of confirm on the phone, under `createScanAuth({ confirm: 'link', confirmation })`. */
export interface ConfirmationOptions {
  /**
   * The public address of the confirm page (the HTTP handler's `GET {base}/confirm`), e.g.
   * `https://app.example/auth/confirm`. The scan's reply links to it with the ticket, and WeChat
   * OAuth sends the phone back to it. Its host must be the account's web authorization domain. A
   * function is asked at each scan (for a server that learns its address once it listens).
   */
  url?: string | (() => string)
  /** Who opened the link: WeChat web OAuth (`createWechatWebOAuth`). Required to serve the page. */
  oauth?: WebOAuthProvider
  /** How long a scan waits for its decision, in seconds (the ticket's life, B-confirm-2). Default 120. */
  ticketTtlSeconds?: number
}

/** Input of `openConfirmation`: the confirm page's query. */
export interface ConfirmationOpenInput {
  /** The `ticket` of the confirm link. */
  ticket: string
  /** The OAuth `code` WeChat came back with; absent on the first visit. */
  code?: string
  /** The OAuth `state` WeChat came back with; must be the one sent (B-confirm-6). */
  state?: string
}

/** What the confirm page shows about the device (B-confirm-5). */
export interface ConfirmationView {
  /** The scene's `device_id`, made safe to show: no bidirectional controls nor invisible characters, control characters replaced. Not HTML-escaped. */
  deviceLabel: string
  /** Where the code was requested from, masked (`203.0.113.*`), or null when unknown. */
  requestedFrom: string | null
  /** How long ago the code was requested, in whole seconds. */
  ageSeconds: number
  /** When the ticket expires (epoch ms). */
  expiresAt: number
}

/** Result of `openConfirmation`. */
export type ConfirmationStep =
  | {
      /** First visit: send the phone to WeChat web OAuth (302 to `location`). */
      step: 'authorize'
      /** The OAuth address. */
      location: string
    }
  | {
      /** The scanner is verified: show the page with its two forms. */
      step: 'decide'
      /** The ticket, for the forms' hidden field. */
      ticket: string
      /** A fresh CSRF token for the forms' hidden field (only its digest is stored; it replaces the previous one). */
      csrf: string
      /** What to show. */
      view: ConfirmationView
    }

/** Input of `decideConfirmation`: the fields of the confirm page's form. */
export interface ConfirmationDecisionInput {
  /** The ticket (hidden field). */
  ticket: string
  /** The CSRF token (hidden field). */
  csrf: string
  /** The button pressed. */
  decision: 'confirm' | 'deny'
}

/** Result of `decideConfirmation`. */
export interface ConfirmationDecisionResult {
  /** `authorized` or `need_purchase` after a confirmation (the scan transaction's answer), `denied` after a denial. */
  result: 'authorized' | 'need_purchase' | 'denied'
  /** The scanner's user after a confirmation; absent after a denial. */
  userId?: number
  /** The device, as the page showed it. */
  deviceLabel: string
  /**
   * With `payments.phone`, on `need_purchase`: the plans, for the confirm page to offer at once
   * (B-phone-8); the page's forms post to `{base}/m/pay`.
   */
  payment?: PhonePayView
}
