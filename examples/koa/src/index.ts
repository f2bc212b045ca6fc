/**
 * `@scanauth/example-koa`: Koa 3 middleware for scanauth.
 *
 * @module
 */
export { scanAuthMiddleware, wechatCallbackMiddleware, type ScanAuthMiddlewareOptions, type WechatCallback } from './middleware'
