/**
 * `@scanauth/testkit`: the Store contract suite every scanauth store runs, the route suite every
 * HTTP adapter runs, and the tools they use.
 *
 * ```ts
 * // test/contract.test.ts of a store package
 * import { describeStoreContract } from '@scanauth/testkit'
 * describeStoreContract('MyStore', async () => ({ store, dump, cleanup }))
 *
 * // test of a framework adapter: serve an app with the scanauth routes at /auth
 * import { describeHttpRoutes } from '@scanauth/testkit'
 * describeHttpRoutes('my-framework', (auth, { onError }) => serveMyApp(auth, onError), { failingStore })
 *
 * // and its WeChat Pay notification endpoint, against a world of the emulator the test builds
 * import { describeWechatPayNotifyRoutes } from '@scanauth/testkit'
 * describeWechatPayNotifyRoutes('my-framework', { mounts: [{ name: 'before the body parser', mount }] }, payWorld)
 * ```
 *
 * @packageDocumentation
 */
export { describeStoreContract } from './contract'
export type { StoreHarness, HarnessFactory, StoreSnapshot } from './harness'
export { checkInvariants } from './invariants'
export { halfAppliedWrites } from './half-applied'
export { ManualClock } from './clock'
export { RecordingQrProvider } from './qr'
export { TestWebOAuth, TEST_AUTHORIZE_BASE } from './web-oauth'
export { TestNotifier, TEST_SUBSCRIBE_BASE } from './notifier'
export { TestPaymentService, TEST_MERCHANT, type TestServiceOrder, type TestServiceCall } from './payment-service'
export { TEST_PLANS } from './suites/orders'
export { describeHttpRoutes, type HttpRoutesSuiteOptions } from './http/routes-suite'
export type { HttpRoutesHost, HttpHostOptions } from './http/host'
export { describeRouteGuards, type GuardHost, type GuardHostOptions, type RouteGuardSuiteOptions } from './http/guards-suite'
export { fetchJson, postJson, type JsonAnswer } from './http/fetch-json'
export { createPendingScene, pollAuthorized, useSession, type AuthorizedPoll } from './http/flow'
export { listen, serverPerTest, closedPort, type Listening } from './http/serve'
export {
  describeWechatPayNotifyRoutes,
  type LossyNotifyMount,
  type NotifyEmulator,
  type NotifyLogEntry,
  type NotifyMount,
  type NotifyMountInput,
  type NotifyRefusal,
  type NotifyRoutesHost,
  type NotifyWorld,
  type NotifyWorldFactory,
  type NotifyWorldOptions,
} from './http/notify-suite'
export { notifyHostPerTest, sellingAuth, type NotifyHost, type HeldRequest, type SellingAuth, type SellingAuthOptions, type TestPurchase, type PurchaseOutcome } from './http/notify-fixture'
export { openEventStream, readSse, type EventStream, type SseMessage } from './http/sse'
export { WatchCountingStore } from './http/watch-counting-store'
export { slowReader, type SlowReader, type SlowReadResult } from './http/slow-reader'
export { forkWorker, type ForkWorkerOptions, type WorkerExit, type WorkerHandle, type WorkerReply } from './processes/worker-process'
export { eventually, told, within, NOTICE_MS } from './waiting'
export { describePaymentProcesses, type PaymentBacking, type PaymentProcessesOptions } from './processes/payment-race'
export { startPaymentRig, type PaidOrder, type PaymentRig } from './processes/payment-rig'
export { servePaymentWorker, type PaymentWorkerOptions, type WorkerStore } from './processes/payment-worker'
export { describeReminderProcesses, serveReminderWorker, type ReminderBacking, type ReminderProcessesOptions, type ReminderWorkerOptions, type ReminderCommand, type ReminderReport, type SentReminder } from './processes/reminder-race'
export type {
  CapturedNotification,
  EmulatedNotification,
  NotificationAnswer,
  NotificationHandlerFactory,
  PaymentClientSettings,
  PaymentCommand,
  PaymentEmulator,
  PaymentEmulatorFactory,
  PaymentProviderFactory,
  PaymentReport,
  PaymentWorkerSettings,
  StallPoint,
} from './processes/payment-protocol'
