/**
 * `createWechatPayProvider`: core's `PaymentProvider` on a {@link WechatPayClient}. A translation
 * only; the rules about orders (reuse, closing replaced orders, checking a paid report against the
 * order) stay in core (B-order-2…5).
 *
 * A JSAPI order is opened with exactly the fields a Native order sends, plus the payer: core asks
 * again with the same request when a phone comes back to an open order, and WeChat Pay answers the
 * same order's current `prepay_id` only when every parameter is the same (re-entry). The cashier's
 * parameters are signed fresh on each call (new `timeStamp` and `nonceStr`) for that prepay id.
 *
 * @module
 */
import type { PaymentProvider } from '@scanauth/core'
import type { WechatPayClient } from './client'
import { toProviderTransaction } from './resources'

/**
 * The provider core's `payments` option takes.
 *
 * @example
 * ```ts
 * import { createWechatPayClient, createWechatPayProvider, type WechatPayClientOptions } from '@scanauth/wechat-pay'
 *
 * declare const options: WechatPayClientOptions
 * const provider = createWechatPayProvider(createWechatPayClient(options))
 * const { codeUrl } = await provider.createNativeOrder({
 *   outTradeNo: 'SA0001', description: '30-day pass', amountFen: 1990, expiresAt: Date.now() + 15 * 60_000,
 * })
 * // On the phone, inside WeChat: the cashier's parameters for the payer's openid under the appid.
 * const parameters = await provider.createJsapiOrder?.({
 *   outTradeNo: 'SA0002', description: '30-day pass', amountFen: 1990, expiresAt: Date.now() + 15 * 60_000, payerOpenid: 'o_payer',
 * })
 * ```
 */
export function createWechatPayProvider(client: WechatPayClient): PaymentProvider {
  return {
    merchant: { mchid: client.mchid, appid: client.appid },
    createNativeOrder: (order) =>
      client.createNativeOrder({ outTradeNo: order.outTradeNo, description: order.description, amountFen: order.amountFen, expiresAt: order.expiresAt }),
    async createJsapiOrder(order) {
      const { prepayId } = await client.createJsapiOrder({
        outTradeNo: order.outTradeNo,
        description: order.description,
        amountFen: order.amountFen,
        expiresAt: order.expiresAt,
        payerOpenid: order.payerOpenid,
      })
      return client.signJsapiPayParameters(prepayId)
    },
    async queryOrder(outTradeNo) {
      const transaction = await client.queryOrder(outTradeNo)
      return transaction === null ? null : toProviderTransaction(transaction)
    },
    closeOrder: (outTradeNo) => client.closeOrder(outTradeNo),
  }
}
