/**
 * What WeChat's cashier checks when a page calls `getBrandWCPayRequest` (reference
 * phone-pay-reminders-admin.md §1.3): the six parameters, `paySign` by the merchant's API key over
 * `appId\ntimeStamp\nnonceStr\npackage\n` (`signType` not signed), the appId bound to the merchant,
 * a `timeStamp` in Unix seconds near now, a `prepay_id` it issued that can still be paid, and the
 * person paying being the order's `payer.openid`. The answer is a reason a developer can act on, as
 * the emulator cannot show WeChat's own error dialogue.
 *
 * Decision: the `timeStamp` window is the request-signature window (`clockToleranceSeconds`, 300 s by
 * default), checked both when the cashier opens and when Pay is pressed. WeChat documents no window
 * for it; the check is there to catch milliseconds and stale cached parameters, not to time people out.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto'
import { PREPAY_ID_TTL_MS, type OrderBook, type StoredOrder } from './orders'
import { rsaVerify, signedMessage } from './signature'

/** The parameters as the page passes them to `WeixinJSBridge.invoke`. */
export interface CashierParameters {
  appId: string
  timeStamp: string
  nonceStr: string
  package: string
  signType: string
  paySign: string
}

/** What the checks need. */
export interface CashierContext {
  /** The AppID bound to the merchant. */
  appid: string
  /** The merchant's API public keys. */
  merchantKeys: KeyObject[]
  orders: OrderBook
  /** The emulator's clock, epoch milliseconds. */
  now: number
  toleranceSeconds: number
}

/** The cashier's verdict: the order and its prepay_id, or why WeChat would answer `fail`. */
export type CashierCheck = { ok: true; order: StoredOrder; prepayId: string } | { ok: false; reason: string }

const FIELDS = ['appId', 'timeStamp', 'nonceStr', 'package', 'signType', 'paySign'] as const

/** The six parameters out of a JSON value, or why not. */
export function cashierParameters(value: unknown): CashierParameters | { reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reason: 'the parameters must be an object { appId, timeStamp, nonceStr, package, signType, paySign }' }
  const record = value as Record<string, unknown>
  for (const field of FIELDS) {
    if (typeof record[field] !== 'string' || record[field] === '') return { reason: `${field} is missing or not a string` }
  }
  return Object.fromEntries(FIELDS.map((field) => [field, record[field]])) as unknown as CashierParameters
}

/** Checks `params` as the cashier would for the person `viewer`; pays nothing. */
export function checkCashier(context: CashierContext, params: CashierParameters, viewer: string): CashierCheck {
  const fail = (reason: string): CashierCheck => ({ ok: false, reason })
  if (params.signType !== 'RSA') return fail(`signType must be RSA for API v3 (got ${params.signType})`)
  if (params.appId !== context.appid) return fail(`appId ${params.appId} is not the AppID bound to the merchant (${context.appid})`)
  if (params.nonceStr.length > 32) return fail('nonceStr is longer than 32 characters')
  if (params.package.length > 128) return fail('package is longer than 128 characters')
  const message = signedMessage([params.appId, params.timeStamp, params.nonceStr, params.package])
  if (!context.merchantKeys.some((key) => rsaVerify(message, params.paySign, key))) {
    return fail('paySign does not verify with the merchant API key over appId\\ntimeStamp\\nnonceStr\\npackage\\n')
  }
  if (!/^\d{1,11}$/.test(params.timeStamp)) {
    return fail(/^\d{12,}$/.test(params.timeStamp) ? 'timeStamp must be Unix seconds, not milliseconds' : 'timeStamp must be Unix seconds as a decimal string')
  }
  const skew = Number(params.timeStamp) - Math.floor(context.now / 1000)
  if (Math.abs(skew) > context.toleranceSeconds) {
    return fail(`timeStamp is ${Math.abs(skew)} s ${skew < 0 ? 'old' : 'ahead'}; allowed ±${context.toleranceSeconds} s`)
  }
  const match = /^prepay_id=(.+)$/.exec(params.package)
  if (match === null) return fail('package must be prepay_id=<the prepay_id of a JSAPI order>')
  const prepayId = match[1]!
  const order = context.orders.byPrepayId(prepayId)
  if (order === undefined) return fail(`unknown prepay_id ${prepayId}`)
  if (context.now >= order.prepayIds.get(prepayId)! + PREPAY_ID_TTL_MS) return fail('the prepay_id is older than 2 hours; place the order again for a new one')
  const no = order.input.outTradeNo
  if (order.state === 'SUCCESS') return fail(`order ${no} is already paid`)
  if (order.state === 'CLOSED') return fail(`order ${no} is closed`)
  if (!context.orders.payable(order)) return fail(`order ${no} is past its time_expire`)
  if (order.input.payerOpenid !== viewer) {
    return fail(`order ${no} is for payer ${order.input.payerOpenid}, but the person paying is ${viewer} (the wxemu_openid cookie, else the payerOpenid option)`)
  }
  return { ok: true, order, prepayId }
}
