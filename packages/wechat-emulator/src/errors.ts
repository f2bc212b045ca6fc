/**
 * The one error class of the emulators (the Official Account and WeChat Pay) and its codes:
 * everything either throws, or rejects with, is a {@link WechatEmulatorError}.
 *
 * @module
 */

/** What went wrong, machine-readable. */
export type WechatEmulatorErrorCode =
  /** The options of `startWechatEmulator` or `startWechatPayEmulator` are invalid; the message names the option. */
  | 'invalid_options'
  /** An argument of `scan`, `push`, `failNext`, `openInWechat`, or of a WeChat Pay emulator method (`pay`, `setKnobs`, `addMerchantKey`), is missing or wrong; the message names it. */
  | 'invalid_argument'
  /** `scan({ ticket })` names a ticket this emulator never issued. */
  | 'unknown_ticket'
  /** `scan` of a code that has expired: WeChat shows "expired" and sends nothing, and so does the emulator. */
  | 'expired_code'
  /** A push was asked for before a callback URL was set (`setCallbackUrl` or the `callbackUrl` option). */
  | 'no_callback_url'
  /** WeChat Pay: `clientOptions()` of an emulator that generated no merchant key (`merchantPublicKeys` without `generateMerchantKey`). */
  | 'no_merchant_key'
  /**
   * `openInWechat`: the authorize page refuses the request (another appid, no redirect_uri, a scope
   * other than `snsapi_base`/`snsapi_userinfo`), the link leads to the real WeChat authorize page, or
   * it redirects more than 10 times. The message says which.
   */
  | 'oauth_refused'
  /**
   * `confirmSubscription`: the subscribemsg confirm page refuses the link (another appid, a scene
   * outside 0–10000, a template id not the account's, no redirect_url, a bad `reserved`), the link
   * leads to the real WeChat page or never reaches the confirm page, or it redirects more than 10
   * times. The message says which.
   */
  | 'subscribe_refused'
  /** A push was asked for, or was under way, when the emulator was closed. */
  | 'closed'
  /** WeChat Pay: `pay({ outTradeNo })`, `pay({ codeUrl })` or `pay({ prepayId })` names an order (or code_url, prepay_id) the emulator never created. */
  | 'unknown_order'
  /** WeChat Pay: `pay` of an order that is already paid (SUCCESS or REFUND): the phone shows "already paid". */
  | 'order_paid'
  /** WeChat Pay: `pay` of a closed order. */
  | 'order_closed'
  /** WeChat Pay: `pay` of an order past its `time_expire` (it still reads NOTPAY, but can no longer be paid). */
  | 'order_expired'
  /** WeChat Pay: `pay({ codeUrl })` with a code_url older than its 2-hour lifetime. */
  | 'code_url_expired'
  /** WeChat Pay: `pay({ prepayId })` with a prepay_id older than its 2-hour lifetime. */
  | 'prepay_id_expired'
  /** WeChat Pay: `pay` of a JSAPI order as someone other than its `payer.openid` (WeChat's cashier is bound to that payer). */
  | 'wrong_payer'

/**
 * An error of the WeChat emulator.
 *
 * @example
 * ```ts
 * import { WechatEmulatorError, type WechatEmulator } from '@scanauth/wechat-emulator'
 *
 * declare const emulator: WechatEmulator
 * declare const ticket: string
 * try {
 *   await emulator.scan({ ticket, openid: 'o_user_1' })
 * } catch (error) {
 *   if (error instanceof WechatEmulatorError && error.code === 'expired_code') console.log('create a new scene')
 *   else throw error
 * }
 * ```
 */
export class WechatEmulatorError extends Error {
  /** Machine-readable code. */
  readonly code: WechatEmulatorErrorCode

  constructor(code: WechatEmulatorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WechatEmulatorError'
    this.code = code
  }
}
