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
export { describeHttpRoutes, type HttpRoutesHost, type HttpHostOptions, type HttpRoutesSuiteOptions } from './http/routes-suite'
export { fetchJson, postJson, type JsonAnswer } from './http/fetch-json'
export { createPendingScene, pollAuthorized, useSession, type AuthorizedPoll } from './http/flow'
export { listen, serverPerTest, closedPort, type Listening } from './http/serve'
export { openEventStream, readSse, type EventStream, type SseMessage } from './http/sse'
export { WatchCountingStore } from './http/watch-counting-store'
export { slowReader, type SlowReader, type SlowReadResult } from './http/slow-reader'
export { forkWorker, type ForkWorkerOptions, type WorkerExit, type WorkerHandle, type WorkerReply } from './processes/worker-process'
export { eventually, told, within, NOTICE_MS } from './waiting'
