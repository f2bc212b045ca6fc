/**
 * The emulated WeChat Pay API v3 endpoints, after the request signature was checked: WeChat's
 * paths, its answer shapes and its error codes.
 *
 * | endpoint | answers |
 * |---|---|
 * | `POST /v3/pay/transactions/native` | 200 `{code_url}`; 400 PARAM_ERROR / ORDER_CLOSED / INVALID_REQUEST; 403 OUT_TRADE_NO_USED / ORDERPAID |
 * | `POST /v3/pay/transactions/jsapi` | 200 `{prepay_id}`; as Native, plus 400 APPID_MCHID_NOT_MATCH and PARAM_ERROR "appid和openid不匹配" |
 * | `GET /v3/pay/transactions/out-trade-no/{no}?mchid=` | 200 transaction; 404 ORDER_NOT_EXIST |
 * | `GET /v3/pay/transactions/id/{transaction_id}?mchid=` | 200 transaction; 404 ORDER_NOT_EXIST |
 * | `POST /v3/pay/transactions/out-trade-no/{no}/close` | 204; 403 ORDERPAID; 404 ORDER_NOT_EXIST |
 * | `POST /v3/refund/domestic/refunds` | 200 refund; 400 INVALID_REQUEST; 404 RESOURCE_NOT_EXISTS |
 * | `GET /v3/refund/domestic/refunds/{out_refund_no}` | 200 refund; 404 RESOURCE_NOT_EXISTS |
 *
 * @module
 */
import { paramError, payError, type PayAnswer } from './answers'
import type { OrderBook } from './orders'
import type { RefundBook } from './refunds'
import { jsonObject, validateJsapiOrder, validateNativeOrder, validateRefund } from './validate'

/** What the endpoints work on. */
export interface PayApiContext {
  mchid: string
  appid: string
  orders: OrderBook
  refunds: RefundBook
  /** Whether an openid is a user of an appid (the `openidBelongs` option). */
  openidBelongs(appid: string, openid: string): boolean
}

/** The request, as the endpoints see it. */
export interface PayApiRequest {
  method: string
  url: URL
  body: Buffer
}

type Route = { method: string; pattern: RegExp; handle: (context: PayApiContext, request: PayApiRequest, params: string[]) => PayAnswer }

const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/v3\/pay\/transactions\/native$/, handle: createNative },
  { method: 'POST', pattern: /^\/v3\/pay\/transactions\/jsapi$/, handle: createJsapi },
  { method: 'GET', pattern: /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)$/, handle: queryByOutTradeNo },
  { method: 'GET', pattern: /^\/v3\/pay\/transactions\/id\/([^/]+)$/, handle: queryByTransactionId },
  { method: 'POST', pattern: /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)\/close$/, handle: closeOrder },
  { method: 'POST', pattern: /^\/v3\/refund\/domestic\/refunds$/, handle: createRefund },
  { method: 'GET', pattern: /^\/v3\/refund\/domestic\/refunds\/([^/]+)$/, handle: queryRefund },
]

/** Answers one API request (its signature already checked). */
export function answerPayApi(context: PayApiContext, request: PayApiRequest): PayAnswer {
  let pathMatched = false
  for (const route of ROUTES) {
    const match = route.pattern.exec(request.url.pathname)
    if (match === null) continue
    pathMatched = true
    if (route.method !== request.method) continue
    let params: string[]
    try {
      params = match.slice(1).map((part) => decodeURIComponent(part))
    } catch {
      return payError(400, 'PARAM_ERROR', 'the path is not valid percent-encoding')
    }
    return route.handle(context, request, params)
  }
  if (pathMatched) return payError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed here`)
  return payError(404, 'NOT_FOUND', `the emulator has no endpoint ${request.url.pathname}`)
}

/** The 400 for a body that is not a JSON object. */
function notJson(): PayAnswer {
  return payError(400, 'PARAM_ERROR', 'the body must be a JSON object', { location: 'body' })
}

/** The `mchid` query parameter of the query endpoints, checked against the merchant, or the 400. */
function queryMchid(context: PayApiContext, request: PayApiRequest): PayAnswer | null {
  const mchid = request.url.searchParams.get('mchid')
  if (mchid === null || mchid === '') return paramError('mchid', 'is required', undefined, 'query')
  if (mchid !== context.mchid) return paramError('mchid', 'does not match the merchant that signed the request', mchid, 'query')
  return null
}

function createNative(context: PayApiContext, request: PayApiRequest): PayAnswer {
  const body = jsonObject(request.body)
  if (body === null) return notJson()
  const input = validateNativeOrder(body)
  if ('status' in input) return input
  if (input.mchid !== context.mchid) return paramError('mchid', 'does not match the merchant that signed the request', input.mchid)
  if (input.appid !== context.appid) return paramError('appid', 'is not bound to this mchid', input.appid)
  return context.orders.create(input, 'NATIVE')
}

/**
 * A JSAPI order: the Native checks of the body, then the two pairings WeChat checks for a payer
 * (reference phone-pay-reminders-admin.md §1.2): the appid bound to the merchant, the openid a user
 * of that appid. Their codes and messages are WeChat's own, which merchants search for.
 */
function createJsapi(context: PayApiContext, request: PayApiRequest): PayAnswer {
  const body = jsonObject(request.body)
  if (body === null) return notJson()
  const input = validateJsapiOrder(body)
  if ('status' in input) return input
  if (input.mchid !== context.mchid) return paramError('mchid', 'does not match the merchant that signed the request', input.mchid)
  if (input.appid !== context.appid) return payError(400, 'APPID_MCHID_NOT_MATCH', 'appid和mch_id不匹配')
  if (!context.openidBelongs(input.appid, input.payerOpenid!)) {
    return payError(400, 'PARAM_ERROR', 'appid和openid不匹配', { field: '#/properties/payer/properties/openid', value: input.payerOpenid, location: 'body' })
  }
  return context.orders.create(input, 'JSAPI')
}

function queryByOutTradeNo(context: PayApiContext, request: PayApiRequest, [outTradeNo]: string[]): PayAnswer {
  const refused = queryMchid(context, request)
  if (refused) return refused
  const order = context.orders.get(outTradeNo!)
  if (order === undefined) return payError(404, 'ORDER_NOT_EXIST', 'the order does not exist')
  return { status: 200, body: context.orders.transaction(order) }
}

function queryByTransactionId(context: PayApiContext, request: PayApiRequest, [transactionId]: string[]): PayAnswer {
  const refused = queryMchid(context, request)
  if (refused) return refused
  const order = context.orders.byTransactionId(transactionId!)
  if (order === undefined) return payError(404, 'ORDER_NOT_EXIST', 'the order does not exist')
  return { status: 200, body: context.orders.transaction(order) }
}

function closeOrder(context: PayApiContext, request: PayApiRequest, [outTradeNo]: string[]): PayAnswer {
  const body = jsonObject(request.body)
  if (body === null) return notJson()
  if (typeof body.mchid !== 'string' || body.mchid === '') return paramError('mchid', 'is required')
  if (body.mchid !== context.mchid) return paramError('mchid', 'does not match the merchant that signed the request', body.mchid)
  return context.orders.close(outTradeNo!)
}

function createRefund(context: PayApiContext, request: PayApiRequest): PayAnswer {
  const body = jsonObject(request.body)
  if (body === null) return notJson()
  const input = validateRefund(body)
  if ('status' in input) return input
  return context.refunds.create(input)
}

function queryRefund(context: PayApiContext, _request: PayApiRequest, [outRefundNo]: string[]): PayAnswer {
  return context.refunds.query(outRefundNo!)
}
