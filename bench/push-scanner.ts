/**
 * The scanning process of `bench/push-latency.ts`'s two-process rows: a `createScanAuth` on a store
 * of its own over the parent's data (the SQLite file, or the Redis key prefix, named in `argv`),
 * scanning scenes on the parent's word and telling it when each scan's commit began.
 *
 *   argv: <sqlite | redis> <file | key prefix>      env: REDIS_URL
 *
 * Messages: the parent sends `{ type: 'scan', sceneStr, openid }`, answered with {@link ScanDone};
 * `{ type: 'close' }` closes the store and exits.
 *
 * @module
 */
import { createScanAuth } from '@scanauth/core'
import { NO_RATE_LIMITS } from './lib'
import { stampCommits } from './stamp-commits'
import { constantQr, openBenchStore } from './stores'

/** Sent once the store is open. */
export interface ScannerReady {
  type: 'ready'
}

/** The answer to a scan. */
export interface ScanDone {
  type: 'scanned'
  /** `process.hrtime.bigint()` just before the scan's commit, as a decimal string (IPC has no bigint). */
  commitNs: string
  /** `handleScan`'s result. */
  result: string
}

async function main(): Promise<void> {
  const [kind, where] = process.argv.slice(2)
  if (process.send === undefined || (kind !== 'sqlite' && kind !== 'redis' && kind !== 'postgres') || where === undefined) {
    throw new Error('bench/push-scanner.ts runs as a child of bench/push-latency.ts: <sqlite | redis | postgres> <file | prefix | schema>')
  }
  const opened = await openBenchStore(kind, where)
  const stamped = stampCommits(opened.store)
  const auth = createScanAuth({ store: stamped.store, qr: constantQr, sceneTtlSeconds: 3600, rateLimits: NO_RATE_LIMITS })
  process.on('message', (message: { type?: string; sceneStr?: string; openid?: string }) => {
    if (message.type === 'scan') {
      void (async () => {
        stamped.reset()
        const { result } = await auth.handleScan({ sceneStr: message.sceneStr as string, openid: message.openid as string })
        process.send?.({ type: 'scanned', commitNs: String(stamped.firstCommitNs), result } satisfies ScanDone)
      })()
    }
    if (message.type === 'close') process.disconnect()
  })
  // Asked to close, or the parent went away without saying so: close the store and exit.
  process.on('disconnect', () => void opened.close().finally(() => process.exit(0)))
  process.send({ type: 'ready' } satisfies ScannerReady)
}

await main()
