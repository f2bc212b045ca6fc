/**
 * `@scanauth/wechat`: the WeChat Official Account platform for scanauth.
 *
 * - {@link createWechatQrProvider}: core's `QrProvider` on the WeChat API (stable or classic access
 *   token, cached and shared, temporary `QR_STR_SCENE` codes).
 * - {@link createWechatCallback}: the account's push URL: signature, replay window, safe-mode AES,
 *   scans to `auth.handleScan`, everything else to `onMessage`, an answer within 5 seconds.
 * - {@link createWechatWebOAuth}: core's `WebOAuthProvider` on WeChat web OAuth (`snsapi_base`), for
 *   confirm on the phone (`confirm: 'link'`): who opened a confirm link.
 * - {@link createWechatReminderNotifier}: core's `ReminderNotifier` on the account's one-time
 *   subscription, template and customer-service messages, every send error mapped to what the
 *   reminder pass does next; its `subscription` builds the subscribemsg confirm link.
 * - {@link createWechatFetchHandler}: that callback as a Fetch-standard `(Request) => Promise<Response>`
 *   (Hono, Next.js route handlers, Bun, Deno).
 * - {@link parseXml}, {@link buildXml}, {@link textField}: the narrow XML of pushes and replies (no DTD,
 *   no entities), for code that speaks to a callback the way WeChat does (e.g. `@scanauth/wechat-emulator`).
 * - The emulator for local work and tests is a separate package: `@scanauth/wechat-emulator`.
 *
 * @packageDocumentation
 */
export {
  createWechatQrProvider,
  WECHAT_API_BASE_URL,
  WECHAT_IMAGE_BASE_URL,
  type WechatQrProvider,
  type WechatQrProviderOptions,
  type WechatQrCode,
} from './qr-provider'
export type { TokenCache, CachedToken } from './token'
export type { FetchLike } from './api-client'
export type { WechatAccessTokens } from './access-token'
export { createWechatReminderNotifier, channelOrder } from './reminder-notifier'
export {
  WECHAT_SUBSCRIBE_CONFIRM_URL,
  DEFAULT_REMINDER_CHANNELS,
  DEFAULT_CUSTOM_WINDOW_MS,
  MAX_CUSTOM_WINDOW_MS,
  type WechatReminderChannel,
  type WechatReminderNotifierOptions,
  type WechatReminderTemplateData,
  type WechatTemplateField,
} from './reminder-options'
export { classifyReminderError, REMINDER_ERRCODES, type ReminderFailure, type ReminderErrcodeRule } from './reminder-errors'
export { REMINDER_ENDPOINTS } from './reminder-channels'
export {
  reminderFacts,
  defaultReminderText,
  defaultTemplateData,
  cutText,
  TEMPLATE_FIELD_MAX_CHARS,
  SUBSCRIBE_CONTENT_MAX_CHARS,
  SUBSCRIBE_TITLE_MAX_CHARS,
  type ReminderFacts,
} from './reminder-text'
export { WechatError, WechatApiError, WechatHttpError, TOKEN_ERRCODES, type WechatErrorCode, type WechatHttpFailure } from './errors'
export { createWechatCallback } from './callback'
export { createWechatFetchHandler, type WechatFetchHandlerOptions } from './fetch-callback'
export {
  DEFAULT_PUSH_MAX_BODY_BYTES,
  type WechatCallback,
  type WechatCallbackOptions,
  type WechatCallbackRequest,
  type WechatCallbackResponse,
  type WechatMessageContext,
} from './callback-options'
export { SUBSCRIBE_SCENE_PREFIX, sceneOfScan, DELIVERY_REPORT_EVENTS, isDeliveryReport, type WechatMessage } from './message'
export { DEFAULT_REPLY_TEXTS, defaultReply, needPurchaseReplyText, signedInReplyText, SUCCESS_BODY } from './reply'
export { confirmReplyText } from './confirm-reply'
export { createWechatWebOAuth, WECHAT_AUTHORIZE_URL, REFUSED_CODE_ERRCODES, type WechatWebOAuthOptions } from './web-oauth'
export { computeSignature, verifySignature, verifyMsgSignature } from './signature'
export { decodeAesKey, encryptMessage, decryptMessage, WechatCryptoError, type DecryptedMessage } from './crypto'
export { parseXml, buildXml, textField, WechatXmlError, type XmlValue, type XmlObject } from './xml'
