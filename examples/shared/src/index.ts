/**
 * `@scanauth/example-shared`: what the Express and Koa example servers share apart from their
 * framework: the configuration read from the environment, the store and WeChat wiring, serving and
 * shutting down, and the demo page's files (`public/`). Its test suites are at
 * `@scanauth/example-shared/testing`.
 *
 * @module
 */
export { configFromEnv, ConfigError, type ExampleConfig, type StoreConfig, type WechatConfig } from './config'
export { createWiring, publicFile, PUBLIC_DIR, type Wiring } from './wiring'
export { DEMO_PURCHASE, type DemoResponse } from './demo'
export { listenAndWire, main, type RunningServer } from './serve'
