/**
 * `@scanauth/express`: Express 5 middleware for scanauth. Thin translations of core's framework-neutral
 * HTTP handler and of the WeChat callback of `@scanauth/wechat`: every rule lives there (see
 * `docs/behaviour.md`); this package only moves requests and responses between Express and them.
 *
 * - {@link scanAuthRouter}: the scanauth routes (`create_scene`, `status` with its long poll, `events`,
 *   `session`, `consume`, `logout`) as a router.
 * - {@link wechatCallbackMiddleware}: the Official Account's push URL (URL verification and events).
 * - {@link wechatPayNotifyMiddleware}: WeChat Pay's `notify_url` over the raw body (`@scanauth/wechat-pay`).
 * - {@link requireSession} and {@link requireAuthorization}: guards for the app's own routes, the
 *   verified session on `req.scanauth`.
 *
 * ```ts
 * app.use(express.json())                                   // the app's own parser is fine
 * app.use('/auth', scanAuthRouter(auth))                    // POST /auth/create_scene, GET /auth/status, ...
 * app.use('/wechat/callback', wechatCallbackMiddleware(createWechatCallback({ auth, token, appId })))
 * app.get('/api/me', requireSession({ auth }), (req, res) => void res.json(req.scanauth))
 * ```
 *
 * @packageDocumentation
 */
export { scanAuthRouter, type ScanAuthRouterOptions } from './router'
export { requireSession, requireAuthorization, type SessionGuardOptions, type AuthorizationGuardMiddlewareOptions } from './guards'
export { wechatCallbackMiddleware, type WechatCallbackMiddlewareOptions } from './wechat-callback'
export { wechatPayNotifyMiddleware, keepRawBody, type WechatPayNotifyMiddlewareOptions } from './wechat-pay-notify'
// What `createWechatPayNotificationHandler` of `@scanauth/wechat-pay` takes and returns, and the body
// limit, under this package's names (see raw-notification.ts).
export {
  DEFAULT_NOTIFY_MAX_BODY_BYTES,
  type RawNotificationHandler as WechatPayNotificationHandler,
  type RawNotificationRequest as WechatPayNotificationRequest,
} from './raw-notification'
