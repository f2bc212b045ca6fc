/**
 * When the demo routes answer, and which mixes of real and emulated parts may start at all.
 *
 * `POST /demo/emulator-scan` signs anyone in as anyone, and `POST /demo/pay` pays any order through
 * the in-process WeChat Pay emulator, whose notifications `/wechatpay/notify` trusts. Beside a real
 * part they are a door: a real Official Account needs a public callback, so its server is reachable,
 * and an order paid by the emulator is access for nothing. Hence (docs/security.md, "The example
 * servers"):
 *
 * - `/demo/config`, `/demo/emulator-scan` and `/demo/pay` answer only when the server is fully
 *   emulated (no `WECHAT_APP_ID`, no `WECHATPAY_MCHID`), or with `SCANAUTH_DEMO=1`, which the log
 *   warns about; 404 otherwise. `SCANAUTH_DEMO=0` turns them off even when fully emulated.
 *   `/demo/qr.svg` always answers: it only draws a `weixin://wxpay/` text as an image (no store, no
 *   emulator), and the page needs it to show a real order's pay code.
 * - A real Official Account with the WeChat Pay emulator does not start unless `SCANAUTH_DEMO=1`.
 *   (From the environment, a real account without `WECHATPAY_MCHID` runs without payments instead,
 *   when nothing asks for them: config.ts.)
 * - An emulated Official Account with real WeChat Pay starts with the demo routes off: the emulated
 *   scan would let anyone sign in and open orders at the real merchant. The emulator's own page
 *   (on 127.0.0.1 only) still scans. `/demo/pay` cannot pay a real order in any mode: it only talks
 *   to the in-process WeChat Pay emulator, which does not run then.
 *
 * @module
 */
import { ConfigError } from './config-error'

/** Whether the demo routes answer, and the start-up line that says why (none when fully emulated by default). */
export interface DemoMode {
  /** `/demo/config`, `/demo/emulator-scan` and `/demo/pay` answer; 404 otherwise. */
  routes: boolean
  /** One line for the log: the warning of `SCANAUTH_DEMO=1`, or that the routes are off. */
  line: string | undefined
}

/** The demo routes that act as the phone, or describe it; `/demo/qr.svg` is not among them. */
const ROUTES = '/demo/config, /demo/emulator-scan and /demo/pay'

/**
 * What the demo mode depends on: the parts of the example's configuration (`ExampleConfig`) that say
 * which platforms are real. Written out here so that config.ts, which checks the mode, and this
 * module do not import each other.
 */
export interface DemoModeInput {
  /** The Official Account: `account` when real (`WECHAT_APP_ID`), `emulator` otherwise. */
  wechat: { kind: string }
  /** WeChat Pay: `merchant` when real (`WECHATPAY_MCHID`), `emulator`, `none`; absent means `emulator`. */
  wechatPay?: { kind: string }
  /** `SCANAUTH_DEMO`: true turns the demo routes on, false off, absent decides by the platforms. */
  demo?: boolean
}

/**
 * The demo mode of `config`. Throws a {@link ConfigError} for a real Official Account with the WeChat
 * Pay emulator (`wechatPay` absent or `emulator`) unless `demo` is true.
 */
export function demoModeOf(config: DemoModeInput): DemoMode {
  const pay = config.wechatPay?.kind ?? 'emulator'
  const realAccount = config.wechat.kind === 'account'
  if (realAccount && pay === 'emulator' && config.demo !== true) throw new ConfigError(emulatedPayRefusal([]))
  const real = [realAccount ? 'a real Official Account (WECHAT_APP_ID)' : '', pay === 'merchant' ? 'real WeChat Pay (WECHATPAY_MCHID)' : ''].filter(Boolean).join(' and ')

  if (config.demo === true) {
    const dangers = [
      config.wechat.kind === 'emulator' ? 'POST /demo/emulator-scan signs anyone in as anyone' : '',
      pay === 'emulator' ? 'POST /demo/pay pays any order for nothing' : '',
    ].filter(Boolean)
    const what = dangers.length === 0 ? 'nothing here for them to emulate' : dangers.join(' and ')
    return { routes: true, line: `WARNING: SCANAUTH_DEMO=1: the demo routes are on${real === '' ? '' : ` beside ${real}`}: ${what}, for anyone who can reach this server; never set it in production` }
  }
  if (config.demo === false) return { routes: false, line: `demo routes off (SCANAUTH_DEMO=0): ${ROUTES} answer 404` }
  if (real === '') return { routes: true, line: undefined }
  return { routes: false, line: `demo routes off beside ${real}: ${ROUTES} answer 404 (SCANAUTH_DEMO=1 turns them on, never in production)` }
}

/**
 * The refusal of a real Official Account with the WeChat Pay emulator. `wanted` names the variables
 * that asked for payments (`SCANAUTH_PLANS`, `WECHATPAY_NOTIFY_URL`), if any.
 */
export function emulatedPayRefusal(wanted: readonly string[]): string {
  const unset = wanted.length === 0 ? 'SCANAUTH_PLANS' : wanted.join(' and ')
  return `WECHAT_APP_ID is a real Official Account but WECHATPAY_MCHID is unset: the WeChat Pay emulator would take the payments, and POST /demo/pay would pay any order for nothing. Set WECHATPAY_MCHID (real WeChat Pay), unset ${unset} (no payments), or set SCANAUTH_DEMO=1 (a demo; never in production)`
}
