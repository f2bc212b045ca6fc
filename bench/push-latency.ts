/**
 * Scan → waiting device: how long after a scan commits does a device waiting on `waitForStatus`
 * (the long poll's and the event stream's wait, docs/behaviour.md B-wait-1) have its answer?
 *
 * Each sample creates a pending scene, starts a waiter on it, lets it settle (a few ms plus a random
 * part, so the scan does not fall at a fixed phase of SQLite's change timer), then has the scanning
 * side call `handleScan`. The time runs from just before the scanning process calls `Store.commit`
 * (a stamp taken by a wrapper of its store) to the moment the waiter's promise resolves with
 * `authorized`: the commit itself, the store's change notification, the waiter's read of the
 * scene, user and session, and the answer. Across processes the scanner is a child with its own
 * store on the same data (`bench/push-scanner.ts`) and sends its stamp over IPC; both stamps are
 * `process.hrtime.bigint()`, which on Linux reads `CLOCK_MONOTONIC`, one clock for every process of
 * the machine. A background waiter on another scene keeps the store's subscription open during the
 * whole run, as other waiting devices would on a live server.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { ask, startChild, stopChild } from './child'
import { latencyRow, type LatencyRow } from './latency-rows'
import { NO_RATE_LIMITS } from './lib'
import { CHANNEL_SETTING, payLatencySamples } from './push-pay'
import type { ScanDone, ScannerReady } from './push-scanner'
import { stampCommits } from './stamp-commits'
import { constantQr, openBenchStore, type StoreKind } from './stores'

/** Options of {@link benchLatency}. */
export interface BenchLatencyOptions {
  /** Samples per row. Default 500. */
  samples?: number
  /** Warm-up samples per row, not recorded. Default 20. */
  warmup?: number
  /** Samples of each paid row, Native and JSAPI (each opens an order at the emulator and waits for a payer, so they are slower). Default 200. */
  paySamples?: number
  /**
   * Which rows: `scan` (one instance and two processes), `pay` (a pay code paid, Native, on SQLite and
   * Redis), `phone` (paid on the phone, JSAPI, on every store). Default all three.
   */
  parts?: ReadonlyArray<'scan' | 'pay' | 'phone'>
}

/** The scanning side of a sample: scans, and says when its commit began. */
type Scan = (sceneStr: string, openid: string) => Promise<{ commitNs: bigint; result: string }>

/** Measures `samples` latencies (µs) of `waiter` woken by `scan`, after `warmup` unrecorded ones. */
async function sampleLatencies(waiter: ScanAuth, scan: Scan, samples: number, warmup: number): Promise<number[]> {
  const out: number[] = []
  const keeper = new AbortController()
  const { sceneStr: kept } = await waiter.createScene({ deviceId: 'bench-push-keeper' })
  // Keeps the subscription (and SQLite's change timer) running between samples; aborted at the end.
  const keeping = waiter.waitForStatus(kept, { timeoutMs: 600_000, signal: keeper.signal }).catch(() => undefined)
  try {
    for (let i = 0; i < warmup + samples; i++) {
      const { sceneStr } = await waiter.createScene({ deviceId: 'bench-push' })
      let answeredNs = 0n
      const waiting = waiter.waitForStatus(sceneStr, { timeoutMs: 30_000 }).then((status) => {
        answeredNs = process.hrtime.bigint()
        return status
      })
      await sleep(3 + Math.random() * 25)
      const { commitNs, result } = await scan(sceneStr, `bench-push-${i}`)
      const status = await waiting
      if (result !== 'authorized' || status.status !== 'authorized') throw new Error(`push bench: scan ${result}, waiter ${status.status}`)
      if (i >= warmup) out.push(Number(answeredNs - commitNs) / 1000)
    }
  } finally {
    keeper.abort()
    await keeping
  }
  return out
}

/** Waiter and scanner in one process, on one store. */
async function oneInstance(kind: StoreKind, samples: number, warmup: number): Promise<LatencyRow> {
  const opened = await openBenchStore(kind)
  try {
    const stamped = stampCommits(opened.store)
    const auth = createScanAuth({ store: stamped.store, qr: constantQr, sceneTtlSeconds: 3600, rateLimits: NO_RATE_LIMITS })
    const scan: Scan = async (sceneStr, openid) => {
      stamped.reset()
      const { result } = await auth.handleScan({ sceneStr, openid })
      return { commitNs: stamped.firstCommitNs as bigint, result }
    }
    return latencyRow(kind, 'one instance', await sampleLatencies(auth, scan, samples, warmup), true)
  } finally {
    await opened.close()
  }
}

/** The waiter here; the scanner a child process with its own store on the same file, prefix or schema. */
async function twoProcesses(kind: 'sqlite' | 'redis' | 'postgres', samples: number, warmup: number): Promise<LatencyRow> {
  const opened = await openBenchStore(kind)
  try {
    const auth = createScanAuth({ store: opened.store, qr: constantQr, sceneTtlSeconds: 3600, rateLimits: NO_RATE_LIMITS })
    const { child } = await startChild<ScannerReady>('push-scanner.ts', [kind, opened.where])
    try {
      const scan: Scan = async (sceneStr, openid) => {
        const done = await ask<ScanDone>(child, { type: 'scan', sceneStr, openid }, 'scanned')
        return { commitNs: BigInt(done.commitNs), result: done.result }
      }
      // The goal holds where processes share a networked store (SQLite's is a timer, `changePollMs`).
      return latencyRow(kind, 'two processes', await sampleLatencies(auth, scan, samples, warmup), kind !== 'sqlite')
    } finally {
      await stopChild(child)
    }
  } finally {
    await opened.close()
  }
}

/**
 * Measures the latency rows: one instance on each store, then two processes on SQLite, Redis and
 * PostgreSQL (`scan`); a pay code paid through the WeChat Pay emulator on SQLite and Redis (`pay`);
 * paid on the phone that scanned, a JSAPI order, on every store (`phone`).
 */
export async function benchLatency(options: BenchLatencyOptions = {}): Promise<LatencyRow[]> {
  const { samples = 500, warmup = 20, paySamples = 200, parts = ['scan', 'pay', 'phone'] } = options
  const rows: LatencyRow[] = []
  if (parts.includes('scan')) {
    for (const kind of ['memory', 'sqlite', 'redis', 'postgres'] as const) rows.push(await oneInstance(kind, samples, warmup))
    for (const kind of ['sqlite', 'redis', 'postgres'] as const) rows.push(await twoProcesses(kind, samples, warmup))
  }
  // No goal on the Native rows: issue 18 asks for the figures. Issue 27 sets the scan rows' 50 ms on the JSAPI ones.
  if (parts.includes('pay')) {
    for (const kind of ['sqlite', 'redis'] as const) rows.push(latencyRow(kind, CHANNEL_SETTING.native, await payLatencySamples(kind, 'native', paySamples, warmup), false))
  }
  if (parts.includes('phone')) {
    for (const kind of ['memory', 'sqlite', 'redis', 'postgres'] as const) {
      rows.push(latencyRow(kind, CHANNEL_SETTING.jsapi, await payLatencySamples(kind, 'jsapi', paySamples, warmup), true))
    }
  }
  return rows
}
