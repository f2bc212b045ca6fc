/**
 * The one error class of the emulator and its codes: everything it throws, or rejects with, is a
 * {@link WechatEmulatorError}.
 *
 * @module
 */

/** What went wrong, machine-readable. */
export type WechatEmulatorErrorCode =
  /** The options of `startWechatEmulator` are invalid; the message names the option. */
  | 'invalid_options'
  /** An argument of `scan`, `push` or `failNext` is missing or wrong; the message names it. */
  | 'invalid_argument'
  /** `scan({ ticket })` names a ticket this emulator never issued. */
  | 'unknown_ticket'
  /** `scan` of a code that has expired: WeChat shows "expired" and sends nothing, and so does the emulator. */
  | 'expired_code'
  /** A push was asked for before a callback URL was set (`setCallbackUrl` or the `callbackUrl` option). */
  | 'no_callback_url'
  /** A push was asked for, or was under way, when the emulator was closed. */
  | 'closed'

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
