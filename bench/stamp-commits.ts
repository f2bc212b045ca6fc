/**
 * A store that notes when its first commit began: the start of a scan → waiting device latency, in
 * the process that scans (`bench/push-latency.ts` in one instance, `bench/push-scanner.ts` as a child).
 *
 * @module
 */
import type { Store } from '@scanauth/core'

/** A store whose `commit` first notes the time, for the latency's start. */
export interface StampedStore {
  store: Store
  /** `process.hrtime.bigint()` just before the first commit since {@link StampedStore.reset}. */
  readonly firstCommitNs: bigint | null
  reset(): void
}

/**
 * Wraps `store` so that its first `commit` after `reset()` notes the time just before it runs. A
 * delegating wrapper (every other member is the store's own), not a stand-in: the commit is real.
 */
export function stampCommits(store: Store): StampedStore {
  let stamp: bigint | null = null
  const wrapped = new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'commit') {
        return (...args: Parameters<Store['commit']>) => {
          stamp ??= process.hrtime.bigint()
          return target.commit(...args)
        }
      }
      const value: unknown = Reflect.get(target, name, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    store: wrapped,
    get firstCommitNs() {
      return stamp
    },
    reset() {
      stamp = null
    },
  }
}
