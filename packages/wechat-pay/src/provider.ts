/**
 * `createWechatPayProvider`: core's `PaymentProvider` on a {@link WechatPayClient}. A translation
 * only; the rules about orders (reuse, closing replaced orders, checking a paid report against the
 * order) stay in core (B-order-2…5).
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
 * ```
 */
export function createWechatPayProvider(client: WechatPayClient): PaymentProvider {
  return {
    merchant: { mchid: client.mchid, appid: client.appid },
    createNativeOrder: (order) =>
      client.createNativeOrder({ outTradeNo: order.outTradeNo, description: order.description, amountFen: order.amountFen, expiresAt: order.expiresAt }),
    async queryOrder(outTradeNo) {
      const transaction = await client.queryOrder(outTradeNo)
      return transaction === null ? null : toProviderTransaction(transaction)
    },
    closeOrder: (outTradeNo) => client.closeOrder(outTradeNo),
  }
}
