/**
 * The latency table of `npm run bench`'s push part: its rows, the goal some of them carry, and the
 * table as Markdown. In a module of its own so that every part that measures rows
 * (`bench/push-latency.ts`, `bench/push-client.ts`) and the report use it without importing each other.
 *
 * @module
 */
import { summarize } from './lib'
import type { PAY_SETTING, PHONE_SETTING } from './push-pay'
import { STORE_LABEL, type StoreKind } from './stores'

/** The setting of the client's latency row. */
export const CLIENT_SETTING = 'emulator scan → @scanauth/client signIn resolved (Express, child)'
/** The setting of the raw stream's latency row. */
export const RAW_STREAM_SETTING = 'emulator scan → raw event stream read by the bench (Express, child)'

/** One line of the latency table. */
export interface LatencyRow {
  /** The store the waiter and the scanner share. */
  store: StoreKind
  /**
   * `one instance`: waiter and scanner in one process on one store; `two processes`: the scanner is
   * a child with its own store; {@link PAY_SETTING}: a pay code paid, seen on an event stream (`bench/push-pay.ts`);
   * {@link PHONE_SETTING}: the same paid on the phone that scanned, a JSAPI order (`bench/push-pay.ts`, issue 27);
   * {@link RAW_STREAM_SETTING} and {@link CLIENT_SETTING}: the emulator's scan seen by a device over HTTP (`bench/push-client.ts`).
   */
  setting: 'one instance' | 'two processes' | typeof PAY_SETTING | typeof PHONE_SETTING | typeof RAW_STREAM_SETTING | typeof CLIENT_SETTING
  /** Samples measured (after warm-up). */
  samples: number
  /** Median, 99th percentile and largest latency, milliseconds. */
  p50Ms: number
  p99Ms: number
  maxMs: number
  /** The p99 it should stay under, in milliseconds, when there is a goal. */
  targetP99Ms?: number
}

/**
 * The goal of issue #13: a scan reaches the waiting device within 50 ms (p99), in one instance and across processes through a
 * networked store (Redis, PostgreSQL); issue 27 sets the same on a payment made on the phone (JSAPI), on every store.
 */
export const LATENCY_TARGET_MS = 50

/** A row of the latency table from samples in µs; `target` sets issue 13's goal on it. */
export function latencyRow(store: StoreKind, setting: LatencyRow['setting'], samplesUs: number[], target: boolean): LatencyRow {
  const m = summarize(samplesUs)
  const row: LatencyRow = { store, setting, samples: m.ops, p50Ms: m.p50Us / 1000, p99Ms: m.p99Us / 1000, maxMs: Math.max(...samplesUs) / 1000 }
  if (target) row.targetP99Ms = LATENCY_TARGET_MS
  return row
}

/** The latency rows as a Markdown table. */
export function latencyTable(rows: LatencyRow[]): string {
  const ms = (x: number) => x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  const lines = ['| store | waiter and scanner (or payer) | samples | p50 ms | p99 ms | max ms | goal |', '|---|---|---:|---:|---:|---:|---|']
  for (const r of rows) {
    const goal = r.targetP99Ms === undefined ? '' : `p99 ≤ ${r.targetP99Ms} ms ${r.p99Ms <= r.targetP99Ms ? '✓' : '✗'}`
    lines.push(`| ${STORE_LABEL[r.store]} | ${r.setting} | ${r.samples} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${ms(r.maxMs)} | ${goal} |`)
  }
  return lines.join('\n')
}
