/**
 * A payment service in process memory with WeChat Pay's order rules, for tests of the order
 * operations on every store (the contract suite). It plays the service, not the wire: re-entry
 * answers a fresh code for the same order, other parameters are refused (`OUT_TRADE_NO_USED`), a
 * paid order cannot be closed (`paid`), an order past its deadline cannot be paid. The wire itself
 * (signatures, notifications, retries) is tested in `@scanauth/wechat-pay` against the emulator.
 *
 * @module
 */
import type { JsapiPayParameters, PaymentMerchant, PaymentProvider, ProviderCloseResult, ProviderJsapiOrderRequest, ProviderOrderRequest, ProviderRefund, ProviderTransaction } from '@scanauth/core'

/** One order as the test service keeps it. */
export interface TestServiceOrder {
  /** What core asked for when it opened the order (with `payerOpenid` for a JSAPI order). */
  request: ProviderOrderRequest | ProviderJsapiOrderRequest
  /** `NATIVE` or `JSAPI`: how it was opened. */
  tradeType: 'NATIVE' | 'JSAPI'
  /** `NOTPAY`, `SUCCESS`, `CLOSED` or `REFUND`. */
  tradeState: 'NOTPAY' | 'SUCCESS' | 'CLOSED' | 'REFUND'
  /** Set once paid. */
  transactionId: string | null
  /** How many codes were handed out for it (1 + re-entries). */
  codes: number
  /** Refunded so far, in fen. */
  refundedFen: number
}

/** The calls core made, in order, for assertions ("nothing reached the payment service"). */
export type TestServiceCall = {
  /** The provider method called. */ method: 'createNativeOrder' | 'createJsapiOrder' | 'queryOrder' | 'closeOrder'
  /** The order it was called for. */ outTradeNo: string
}

/** The merchant every test service speaks for unless told otherwise. */
export const TEST_MERCHANT: PaymentMerchant = { mchid: '1900000109', appid: 'wx0000000000test' }

/** A {@link PaymentProvider} over process memory; see the module comment. */
export class TestPaymentService implements PaymentProvider {
  readonly merchant: PaymentMerchant
  /** Every order it was asked to open, by `outTradeNo`. */
  readonly orders = new Map<string, TestServiceOrder>()
  /** Every call, in order. */
  readonly calls: TestServiceCall[] = []
  /** When set, every call throws an Error with this message (the service is down). */
  failWith: string | null = null
  private transactions = 0

  constructor(private readonly now: () => number, merchant: PaymentMerchant = TEST_MERCHANT) {
    this.merchant = { ...merchant }
  }

  async createNativeOrder(request: ProviderOrderRequest): Promise<{
    /** `weixin://wxpay/…`, ending in how many codes the order has had. */ codeUrl: string
  }> {
    this.record('createNativeOrder', request.outTradeNo)
    return { codeUrl: this.codeOf(request.outTradeNo, this.open(request, 'NATIVE')) }
  }

  /**
   * A JSAPI order for `payerOpenid`: its cashier parameters, `package` naming the same prepay id on
   * every re-entry. `paySign` is not a signature here (the wire is `@scanauth/wechat-pay`'s to test):
   * it names the order and the payer, so a test can tell which order a page carries.
   */
  async createJsapiOrder(request: ProviderJsapiOrderRequest): Promise<JsapiPayParameters> {
    this.record('createJsapiOrder', request.outTradeNo)
    this.open(request, 'JSAPI')
    return {
      appId: this.merchant.appid,
      timeStamp: String(Math.floor(this.now() / 1000)),
      nonceStr: 'testnonce',
      package: `prepay_id=wx${request.outTradeNo}`,
      signType: 'RSA',
      paySign: `test:${request.outTradeNo}:${request.payerOpenid}`,
    }
  }

  /** Opens the order, or re-enters it with the same parameters: answers how many times it was asked for. */
  private open(request: ProviderOrderRequest | ProviderJsapiOrderRequest, tradeType: TestServiceOrder['tradeType']): number {
    const stored = this.orders.get(request.outTradeNo)
    if (stored === undefined) {
      this.orders.set(request.outTradeNo, { request: { ...request }, tradeType, tradeState: 'NOTPAY', transactionId: null, codes: 1, refundedFen: 0 })
      return 1
    }
    if (stored.tradeType !== tradeType || JSON.stringify(stored.request) !== JSON.stringify(request)) throw new Error('OUT_TRADE_NO_USED: the order exists with other parameters')
    if (stored.tradeState !== 'NOTPAY') throw new Error(`ORDERPAID or ORDERCLOSED: the order is ${stored.tradeState}`)
    return ++stored.codes
  }

  async queryOrder(outTradeNo: string): Promise<ProviderTransaction | null> {
    this.record('queryOrder', outTradeNo)
    const stored = this.orders.get(outTradeNo)
    return stored === undefined ? null : this.report(outTradeNo, stored)
  }

  async closeOrder(outTradeNo: string): Promise<ProviderCloseResult> {
    this.record('closeOrder', outTradeNo)
    const stored = this.orders.get(outTradeNo)
    if (stored === undefined) throw new Error('ORDER_NOT_EXIST')
    if (stored.tradeState === 'SUCCESS' || stored.tradeState === 'REFUND') return 'paid'
    stored.tradeState = 'CLOSED'
    return 'closed'
  }

  /** The payer pays the order: answers the report a paid notification carries. Throws when it cannot be paid. */
  pay(outTradeNo: string): ProviderTransaction {
    const stored = this.orders.get(outTradeNo)
    if (stored === undefined) throw new Error(`no order ${outTradeNo}`)
    if (stored.tradeState !== 'NOTPAY' || this.now() >= stored.request.expiresAt) throw new Error(`order ${outTradeNo} cannot be paid (${stored.tradeState})`)
    stored.tradeState = 'SUCCESS'
    stored.transactionId = `42000000${String(++this.transactions).padStart(20, '0')}`
    return this.report(outTradeNo, stored)
  }

  /** A successful refund of `amountFen` of a paid order: answers the report a `REFUND.SUCCESS` notification carries. */
  refund(outTradeNo: string, outRefundNo: string, amountFen: number): ProviderRefund {
    const stored = this.orders.get(outTradeNo)
    if (stored === undefined || stored.transactionId === null) throw new Error(`order ${outTradeNo} is not paid`)
    stored.refundedFen += amountFen
    stored.tradeState = 'REFUND'
    return {
      mchid: this.merchant.mchid,
      outTradeNo,
      transactionId: stored.transactionId,
      outRefundNo,
      refundId: `50000000${outRefundNo}`,
      refundStatus: 'SUCCESS',
      amount: { refund: amountFen, total: stored.request.amountFen },
    }
  }

  /** The order's report as a query answers it. */
  private report(outTradeNo: string, stored: TestServiceOrder): ProviderTransaction {
    return {
      mchid: this.merchant.mchid,
      appid: this.merchant.appid,
      outTradeNo,
      transactionId: stored.transactionId,
      tradeState: stored.tradeState,
      amount: { total: stored.request.amountFen, currency: 'CNY' },
    }
  }

  private codeOf(outTradeNo: string, n: number): string {
    return `weixin://wxpay/bizpayurl?pr=${outTradeNo}-${n}`
  }

  private record(method: TestServiceCall['method'], outTradeNo: string): void {
    this.calls.push({ method, outTradeNo })
    if (this.failWith !== null) throw new Error(this.failWith)
  }
}
