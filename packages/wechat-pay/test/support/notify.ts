// Notifications as WeChat Pay posts them, and a stand-in `auth` that records what it is asked: the
// seam between the handler and core (core's own tests cover applyPayment and applyRefund).
import type { PaymentOutcome, ProviderRefund, ProviderTransaction, RefundOutcome } from '@scanauth/core'
import { API_V3_KEY, APPID, MCHID, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID } from './keys'
import { notification, type NotificationInput, type SignAs } from './pay-side'

export const NOW = Date.parse('2026-01-01T00:00:00Z')

export function transactionResource(overrides: Record<string, unknown> = {}) {
  return {
    appid: APPID,
    mchid: MCHID,
    out_trade_no: 'SA2026000001',
    transaction_id: '4200000000202601010001',
    trade_type: 'NATIVE',
    trade_state: 'SUCCESS',
    trade_state_desc: '支付成功',
    bank_type: 'OTHERS',
    attach: '',
    success_time: '2026-01-01T08:01:00+08:00',
    payer: { openid: 'o_payer' },
    amount: { total: 1990, payer_total: 1990, currency: 'CNY', payer_currency: 'CNY' },
    ...overrides,
  }
}

export function refundResource(overrides: Record<string, unknown> = {}) {
  return {
    mchid: MCHID,
    transaction_id: '4200000000202601010001',
    out_trade_no: 'SA2026000001',
    refund_id: '50000000382019052709732678859',
    out_refund_no: 'R2026000001',
    refund_status: 'SUCCESS',
    success_time: '2026-01-02T08:00:00+08:00',
    user_received_account: '招商银行信用卡0403',
    amount: { total: 1990, refund: 1990, payer_total: 1990, payer_refund: 1990 },
    ...overrides,
  }
}

type Options = Partial<Omit<NotificationInput, 'sign'>> & { sign?: Partial<SignAs>; publicKeyMode?: boolean }

/** A signed, encrypted notification (a paid transaction unless told otherwise). */
export function paidNotification(options: Options = {}) {
  const { sign, publicKeyMode, ...rest } = options
  return notification({
    eventType: 'TRANSACTION.SUCCESS',
    resource: transactionResource(),
    apiV3Key: API_V3_KEY,
    ...rest,
    sign: {
      key: publicKeyMode ? payPublicKey.privateKey : platform.privateKey,
      serial: publicKeyMode ? PUB_KEY_ID : PLATFORM_SERIAL,
      timestamp: NOW / 1000,
      ...sign,
    },
  })
}

export function refundNotification(eventType = 'REFUND.SUCCESS', overrides: Record<string, unknown> = {}) {
  return paidNotification({ eventType, originalType: 'refund', associatedData: 'refund', resource: refundResource(overrides) })
}

/** Records every call; answers what the test sets, or throws it. */
export class RecordingAuth {
  payments: ProviderTransaction[] = []
  refunds: ProviderRefund[] = []
  paymentOutcome: PaymentOutcome | Error = { result: 'granted', orderId: 'SA2026000001', authorizationId: 1 }
  refundOutcome: RefundOutcome | Error = { result: 'refunded', orderId: 'SA2026000001', revokedAuthorizationId: 1 }

  applyPayment = async (transaction: ProviderTransaction): Promise<PaymentOutcome> => {
    this.payments.push(transaction)
    if (this.paymentOutcome instanceof Error) throw this.paymentOutcome
    return this.paymentOutcome
  }

  applyRefund = async (refund: ProviderRefund): Promise<RefundOutcome> => {
    this.refunds.push(refund)
    if (this.refundOutcome instanceof Error) throw this.refundOutcome
    return this.refundOutcome
  }
}
