/**
 * `@scanauth/wechat-pay`: WeChat Pay API v3 for scanauth, on `fetch` and `node:crypto`.
 *
 * - {@link createWechatPayClient}: Native and JSAPI orders, query, close, refund and refund query;
 *   requests signed `WECHATPAY2-SHA256-RSA2048`, every 2xx answer verified before it is believed.
 * - {@link jsapiPayParameters}: the signed parameters of WeChat's cashier
 *   (`WeixinJSBridge.invoke('getBrandWCPayRequest', …)`) for a JSAPI order.
 * - {@link createWechatPayProvider}: core's `PaymentProvider` on that client.
 * - {@link createWechatPayNotificationHandler} and {@link createWechatPayFetchHandler}: the
 *   `notify_url` endpoint, verified over the raw bytes, decrypted, applied through
 *   `auth.applyPayment` / `auth.applyRefund`.
 * - {@link parseWechatPayNotification}, {@link verifyWechatPaySignature}, {@link decryptAesGcm}: the
 *   building blocks, for code of your own.
 * - {@link WechatPayError}: the one error class, with a documented `code`.
 *
 * Verification keys are a map from `Wechatpay-Serial` (platform certificate serial or
 * `PUB_KEY_ID_…`) to a key, so both key modes and the migration between them need no code change.
 *
 * @packageDocumentation
 */
export {
  createWechatPayClient,
  WECHAT_PAY_API_BASE,
  type WechatPayClient,
  type WechatPayClientOptions,
  type NativeOrderInput,
  type NativeOrderResult,
  type JsapiOrderInput,
  type JsapiOrderResult,
  type RefundInput,
} from './client'
export { jsapiPayParameters, jsapiPaySignMessage, type JsapiPayParametersInput, type JsapiSignedFields } from './jsapi'
// The cashier's parameters are core's type (a provider answers them); re-exported for convenience.
export type { JsapiPayParameters } from '@scanauth/core'
export type { FetchLike } from './http'
export { createWechatPayProvider } from './provider'
export {
  parseWechatPayNotification,
  type ParseNotificationOptions,
  type WechatPayNotification,
} from './notification'
export {
  createWechatPayNotificationHandler,
  type WechatPayNotificationHandler,
  type WechatPayNotificationHandlerOptions,
  type WechatPayNotificationResponse,
  type WechatPayRejection,
} from './notification-handler'
export { createWechatPayFetchHandler, asFetchHandler, type WechatPayFetchHandlerOptions } from './fetch-handler'
// A notification as the host received it (headers and raw body), under both of its names, and the
// body limit: the shape `@scanauth/express` and `@scanauth/koa` hand a notification handler too.
export {
  DEFAULT_NOTIFY_MAX_BODY_BYTES,
  type RawNotificationRequest as WechatPayNotificationRequest,
  type RawNotificationRequest as WechatPayNotificationHttpRequest,
} from './raw-notification'
export {
  toProviderRefund,
  toProviderTransaction,
  type WechatPayRefund,
  type WechatPayRefundAmount,
  type WechatPayTransaction,
  type WechatPayTransactionAmount,
} from './resources'
export {
  createVerificationKeySet,
  PUBLIC_KEY_ID_PREFIX,
  type VerificationKeyInput,
  type VerificationKeys,
  type VerificationKeySet,
} from './keys'
export {
  verifyWechatPaySignature,
  DEFAULT_MAX_SKEW_SECONDS,
  type HeaderBag,
  type SignedMessage,
  type VerifySignatureOptions,
} from './verify'
export {
  SIGNATURE_SCHEME,
  authorizationHeader,
  requestSignatureMessage,
  responseSignatureMessage,
  signMessage,
  verifyMessage,
  type AuthorizationInput,
  type RequestSignatureInput,
} from './signature'
export { decryptAesGcm, encryptAesGcm, RESOURCE_ALGORITHM, type AesGcmInput } from './aes-gcm'
export { formatBeijingTime, OUT_TRADE_NO_PATTERN, OUT_REFUND_NO_PATTERN } from './validate'
export { WechatPayError, type WechatPayErrorCode, type WechatPayErrorDetails } from './errors'
