/**
 * `@scanauth/koa`: Koa 3 middleware for scanauth. Thin translations of core's framework-neutral HTTP
 * handler and of the WeChat callback of `@scanauth/wechat`: every rule lives there (see
 * `docs/behaviour.md`); this package only moves requests and responses between Koa and them.
 *
 * - {@link scanAuthMiddleware}: the scanauth routes (`create_scene`, `status` with its long poll, `events`,
 *   `session`, `consume`, `logout`) under `basePath`.
 * - {@link wechatCallbackMiddleware}: the Official Account's push URL (URL verification and events).
 * - {@link wechatPayNotifyMiddleware}: WeChat Pay's `notify_url` over the raw body (`@scanauth/wechat-pay`).
 * - {@link requireSession} and {@link requireAuthorization}: guards for the app's own routes, the
 *   verified session on `ctx.state.scanauth`.
 *
 * ```ts
 * app.use(scanAuthMiddleware(auth, { basePath: '/auth' }))
 * app.use(wechatCallbackMiddleware(createWechatCallback({ auth, token, appId }), { path: '/wechat/callback' }))
 * app.use(bodyParser())                 // before or after: both read what the other left
 * ```
 *
 * @packageDocumentation
 */
export { scanAuthMiddleware, type ScanAuthMiddlewareOptions } from './scanauth-middleware'
export { requireSession, requireAuthorization, type ScanAuthState, type SessionGuardOptions, type AuthorizationGuardMiddlewareOptions } from './guards'
export { wechatCallbackMiddleware, type WechatCallbackMiddlewareOptions } from './wechat-callback'
export { wechatPayNotifyMiddleware, type WechatPayNotifyMiddlewareOptions } from './wechat-pay-notify'
// What `createWechatPayNotificationHandler` of `@scanauth/wechat-pay` takes and returns, under this
// package's names (see raw-notification.ts).
export { type RawNotificationHandler as WechatPayNotificationHandler, type RawNotificationRequest as WechatPayNotificationRequest } from './raw-notification'
