/**
 * `@scanauth/example-express`: Express 5 middleware for scanauth.
 *
 * @module
 */
export { scanAuthRouter, wechatCallbackMiddleware, type ScanAuthRouterOptions, type WechatCallback } from './middleware'
