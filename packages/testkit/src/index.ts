/**
 * `@scanauth/testkit`: the Store contract suite every scanauth store runs, and the tools it uses.
 *
 * ```ts
 * // test/contract.test.ts of a store package
 * import { describeStoreContract } from '@scanauth/testkit'
 * describeStoreContract('MyStore', async () => ({ store, dump, cleanup }))
 * ```
 *
 * @packageDocumentation
 */
export { describeStoreContract } from './contract'
export type { StoreHarness, HarnessFactory, StoreSnapshot } from './harness'
export { checkInvariants } from './invariants'
export { ManualClock } from './clock'
export { RecordingQrProvider } from './qr'
