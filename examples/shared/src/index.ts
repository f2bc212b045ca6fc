/**
 * `@scanauth/example-shared`: what the Express and Koa example servers share apart from their
 * framework: the configuration read from the environment, the store, WeChat and WeChat Pay wiring, reminders, serving and
 * shutting down, and the demo page's files (`public/`). Its test suites are at
 * `@scanauth/example-shared/testing`.
 *
 * @module
 */
export { configFromEnv, ConfigError, DEFAULT_PLANS, WECHAT_PAY_API_BASE, type ExampleConfig, type StoreConfig, type WechatConfig, type WechatPayConfig } from './config'
export { REMINDER_FACTS, type RemindersConfig, type ReminderFact } from './reminder-config'
export { EMULATED_RENEWAL_TEMPLATE_ID, EMULATED_SUBSCRIBE_TEMPLATE_ID, reminderLine } from './reminder-wiring'
export { CLIENT_SCRIPT_PATH, createWiring, PHONE_PAGES_PATH, publicFile, PUBLIC_DIR, type Wiring } from './wiring'
export { bundleClient, CLIENT_BUNDLE_FILE } from './client-bundle'
export { EMULATED_PHONE_OPENID, type DemoResponse } from './demo'
export { EMULATED_MCHID, NOTIFY_PATH } from './pay-wiring'
export { listenAndWire, main, type RunningServer } from './serve'
