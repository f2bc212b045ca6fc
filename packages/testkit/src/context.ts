/**
 * The per-test context of the contract suite: a fresh harness, a manual clock, a recording QR
 * provider and a scanauth instance over the store under test.
 */
import { afterEach, beforeEach } from 'vitest'
import { createScanAuth, type ScanAuth, type Store } from '@scanauth/core'
import { ManualClock } from './clock'
import type { HarnessFactory, StoreHarness, StoreSnapshot } from './harness'
import { RecordingQrProvider } from './qr'

/** Lifetimes the suite configures (the defaults of createScanAuth, docs/behaviour.md). */
export const SCENE_TTL_SECONDS = 300
export const SESSION_TTL_HOURS = 168
export const FREE_TRIAL_DAYS = 7
export const SECOND = 1000
export const HOUR = 3600 * SECOND
export const DAY = 24 * HOUR

export interface ContractContext {
  clock: ManualClock
  qr: RecordingQrProvider
  harness: StoreHarness
  store: Store
  auth: ScanAuth
  /** `n` scanauth instances sharing the clock, spread over the store and its peers (other connections). */
  auths(n: number): Promise<ScanAuth[]>
  /** `n` stores over the same data (other connections where the store has peers), for instances of your own. */
  stores(n: number): Promise<Store[]>
  /** Every stored record, read straight from the backend. */
  dump(): Promise<StoreSnapshot>
}

/** A scanauth instance over `store` with the suite's settings. */
export function authOver(store: Store, clock: ManualClock, qr: RecordingQrProvider): ScanAuth {
  return createScanAuth({
    store,
    qr,
    now: clock.now,
    sceneTtlSeconds: SCENE_TTL_SECONDS,
    sessionTtlHours: SESSION_TTL_HOURS,
    freeTrialDays: FREE_TRIAL_DAYS,
  })
}

/**
 * Registers beforeEach/afterEach that build and tear down a context, and returns its getter.
 * Call inside a `describe`.
 */
export function useContext(factory: HarnessFactory): () => ContractContext {
  let current: ContractContext | null = null
  beforeEach(async () => {
    const harness = await factory()
    const clock = new ManualClock()
    const qr = new RecordingQrProvider()
    const peers: Store[] = []
    current = {
      clock,
      qr,
      harness,
      store: harness.store,
      auth: authOver(harness.store, clock, qr),
      async stores(n) {
        // Up to four connections; stores beyond that share them round-robin.
        while (harness.openPeer && peers.length < Math.min(3, n - 1)) peers.push(await harness.openPeer())
        const stores = [harness.store, ...peers]
        return Array.from({ length: n }, (_, i) => stores[i % stores.length] as Store)
      },
      async auths(n) {
        return (await this.stores(n)).map((store) => authOver(store, clock, qr))
      },
      dump: async () => harness.dump(),
    }
  })
  afterEach(async () => {
    await current?.harness.cleanup()
    current = null
  })
  return () => {
    if (current === null) throw new Error('contract context used outside a test')
    return current
  }
}
