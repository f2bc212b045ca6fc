/**
 * Throughput under load, for the network stores (`bench/redis.ts`, `bench/postgres.ts`): an
 * operation and its baseline each driven by a fixed number of calls in flight, in interleaved
 * rounds, with the round trips one call cost read from a counter on the driver.
 *
 * @module
 */
import { summarize, type BenchRow, type Measurement } from './lib'

/** A row of a network store: the common row plus the round trips one call cost. */
export interface RoundTripRow extends BenchRow {
  /** Round trips per call, counted on the driver (commands for Redis, statements for PostgreSQL). */
  roundTripsPerOp: number
  /** The same for the baseline. */
  baselineRoundTripsPerOp?: number
}

/** One operation to measure: `run(i)` is call number `i`; `available(i)` says whether call `i` can run. */
export interface ConcurrentWork {
  run: (i: number) => Promise<unknown>
  available?: (i: number) => boolean
}

/** A measured side of a pair: the figures and the round trips one call sent. */
export type CountedMeasurement = Measurement & { roundTripsPerOp: number }

/** How a pair is driven. */
export interface ConcurrentOptions {
  /** Calls in flight at once, on each side. */
  concurrency: number
  /** Round trips sent so far on the driver (a counter that only grows). */
  roundTrips: () => number
  /** Measured rounds per side. Default 8. */
  rounds?: number
  /** Length of a round, ms. Default 180. */
  roundMs?: number
  /** Calls per side before measuring, not recorded. Default 300. */
  warmupOps?: number
}

/**
 * Measures an operation and its baseline with `concurrency` calls in flight, interleaved: `rounds`
 * rounds of `roundMs` each, alternating which side goes first, so that both sides see the same
 * background load (the machine is shared). Throughput is calls completed per wall-clock second
 * summed over the rounds; latencies are per call. A warm-up of `warmupOps` calls per side comes
 * first. Round trips per call are the counter's growth over the rounds divided by the calls.
 */
export async function measureConcurrentPair(
  work: ConcurrentWork,
  baseline: ConcurrentWork,
  { concurrency, roundTrips, rounds = 8, roundMs = 180, warmupOps = 300 }: ConcurrentOptions,
): Promise<[CountedMeasurement, CountedMeasurement]> {
  const sides = [work, baseline].map((w) => ({ w, next: 0, samples: [] as number[], wallMs: 0, sent: 0 }))
  const lanes = (side: (typeof sides)[number], keepGoing: () => boolean, record: boolean) =>
    Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (keepGoing() && (side.w.available?.(side.next) ?? true)) {
          const i = side.next++
          const start = process.hrtime.bigint()
          await side.w.run(i)
          if (record) side.samples.push(Number(process.hrtime.bigint() - start) / 1000)
        }
      }),
    )
  for (const side of sides) await lanes(side, () => side.next < warmupOps, false)
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const before = roundTrips()
      const began = performance.now()
      const stopAt = began + roundMs
      await lanes(side, () => performance.now() < stopAt, true)
      side.wallMs += performance.now() - began
      side.sent += roundTrips() - before
    }
  }
  return sides.map((side) => ({
    ...summarize(side.samples),
    opsPerSec: (side.samples.length / side.wallMs) * 1000,
    roundTripsPerOp: side.sent / side.samples.length,
  })) as [CountedMeasurement, CountedMeasurement]
}

/** The round trips of each row and of its baseline, as a Markdown table. */
export function roundTripTable(rows: RoundTripRow[]): string {
  const lines = ['| operation | round trips per call | baseline | baseline round trips |', '|---|---:|---|---:|']
  for (const r of rows) {
    lines.push(`| ${r.operation} | ${r.roundTripsPerOp.toFixed(2)} | ${r.baseline?.name ?? ''} | ${r.baselineRoundTripsPerOp?.toFixed(2) ?? ''} |`)
  }
  return lines.join('\n')
}
