/**
 * Shared pieces of the benchmarks in `bench/`: the row every benchmark returns, a sequential
 * latency sampler, and a Markdown table. Benchmarks are not tests: they measure and record;
 * nothing here asserts on time.
 *
 * @module
 */

/**
 * `BENCH_QUICK=1`: the sections that know it (push, http, and the payment notification rows of the
 * store sections) run short — fewer samples, connections, orders and slices — to check that they
 * work; the figures are not of record, and docs/benchmarks.md is left alone.
 */
export const QUICK = process.env.BENCH_QUICK === '1'

/** Latency figures of one measured operation. */
export interface Measurement {
  /** Operations measured (after warm-up). */
  ops: number
  /** Operations per second, one in flight: `ops` divided by the summed time spent inside the calls. */
  opsPerSec: number
  /** Median latency, microseconds. */
  p50Us: number
  /** 99th percentile latency, microseconds. */
  p99Us: number
}

/** One line of a benchmark table: an operation measured beside its baseline in the same run. */
export interface BenchRow extends Measurement {
  /** The backend measured: `sqlite`, `redis`, `memory`, ... */
  store: string
  /** The operation, e.g. `pending poll`. */
  operation: string
  /** What the operation is compared with, and its figures from the same run. */
  baseline?: Measurement & { name: string }
  /** `opsPerSec / baseline.opsPerSec`. */
  ratio?: number
  /** The ratio the operation should reach, when there is one. */
  target?: number
}

/** How long to measure one operation. */
export interface MeasureOptions {
  /** Warm-up calls, not recorded. Default 200. */
  warmupOps?: number
  /** Stop recording after this much wall-clock time (setup included), in ms. Default 1000. */
  durationMs?: number
  /** Stop after this many recorded calls. Default 200 000. */
  maxOps?: number
}

/**
 * Measures `run` one call at a time. `setup(i)` prepares the input of call `i` outside the timed
 * part (a fresh scene for each scan, say); only `run` is timed.
 */
export async function measure<T>(
  work: { setup?: (i: number) => T | Promise<T>; run: (input: T, i: number) => unknown },
  options: MeasureOptions = {},
): Promise<Measurement> {
  const { warmupOps = 200, durationMs = 1000, maxOps = 200_000 } = options
  let i = 0
  for (; i < warmupOps; i++) await work.run((await work.setup?.(i)) as T, i)
  const samples: number[] = []
  const stopAt = performance.now() + durationMs
  while (samples.length < maxOps && performance.now() < stopAt) {
    const input = (await work.setup?.(i)) as T
    const start = process.hrtime.bigint()
    await work.run(input, i)
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
    i++
  }
  return summarize(samples)
}

/**
 * Measures an operation and its baseline in alternating slices (`slices` of each, every slice
 * `durationMs / slices` long), so that both see the same machine: a noisy neighbour or a
 * frequency change then lands on both sides of the ratio instead of on one.
 */
export async function measurePair<A, B>(
  work: { setup?: (i: number) => A | Promise<A>; run: (input: A, i: number) => unknown },
  baseline: { setup?: (i: number) => B | Promise<B>; run: (input: B, i: number) => unknown },
  options: MeasureOptions & { slices?: number } = {},
): Promise<[Measurement, Measurement]> {
  const { warmupOps = 200, durationMs = 1000, maxOps = 200_000, slices = 8 } = options
  const sides = [work, baseline] as Array<{ setup?: (i: number) => unknown; run: (input: unknown, i: number) => unknown }>
  const samples: number[][] = [[], []]
  const next = [0, 0]
  for (const [k, side] of sides.entries()) {
    for (let w = 0; w < warmupOps; w++) await side.run(await side.setup?.(next[k] as number), (next[k] = (next[k] as number) + 1) - 1)
  }
  for (let slice = 0; slice < slices; slice++) {
    for (const [k, side] of sides.entries()) {
      const out = samples[k] as number[]
      const stopAt = performance.now() + durationMs / slices
      while (out.length < (maxOps * (slice + 1)) / slices && performance.now() < stopAt) {
        const i = next[k] as number
        const input = await side.setup?.(i)
        const start = process.hrtime.bigint()
        await side.run(input, i)
        out.push(Number(process.hrtime.bigint() - start) / 1000)
        next[k] = i + 1
      }
    }
  }
  return [summarize(samples[0] as number[]), summarize(samples[1] as number[])]
}

/** Figures from latencies in microseconds. */
export function summarize(samplesUs: number[]): Measurement {
  const sorted = [...samplesUs].sort((a, b) => a - b)
  const total = sorted.reduce((t, x) => t + x, 0)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return { ops: sorted.length, opsPerSec: total > 0 ? (sorted.length / total) * 1e6 : 0, p50Us: at(0.5), p99Us: at(0.99) }
}

/** A row from an operation's and its baseline's measurements. */
export function row(store: string, operation: string, measured: Measurement, baseline?: Measurement & { name: string }, target?: number): BenchRow {
  const out: BenchRow = { store, operation, ...measured }
  if (baseline) {
    out.baseline = baseline
    out.ratio = baseline.opsPerSec > 0 ? measured.opsPerSec / baseline.opsPerSec : 0
  }
  if (target !== undefined) out.target = target
  return out
}

/** The rows as a Markdown table. */
export function markdownTable(rows: BenchRow[]): string {
  const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  const lines = [
    '| store | operation | ops/s | p50 µs | p99 µs | baseline | baseline ops/s | baseline p50 µs | baseline p99 µs | ratio | target |',
    '|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|',
  ]
  for (const r of rows) {
    const b = r.baseline
    const verdict = r.target === undefined || r.ratio === undefined ? '' : `≥ ${r.target} ${r.ratio >= r.target ? '✓' : '✗'}`
    lines.push(
      `| ${r.store} | ${r.operation} | ${n(r.opsPerSec)} | ${n(r.p50Us, 1)} | ${n(r.p99Us, 1)} | ${b?.name ?? ''} | ` +
        `${b ? n(b.opsPerSec) : ''} | ${b ? n(b.p50Us, 1) : ''} | ${b ? n(b.p99Us, 1) : ''} | ${r.ratio === undefined ? '' : n(r.ratio, 2)} | ${verdict} |`,
    )
  }
  return lines.join('\n')
}

/**
 * Rate limits off: a benchmark drives one device, one address and one scene thousands of times a
 * second from a clock that may stand still, which is exactly what the limits exist to refuse.
 */
export const NO_RATE_LIMITS = {
  perDevice: false,
  perAddress: false,
  dailyQrBudget: false,
  statusPollsPerScene: false,
  purchasesPerUser: false,
  purchasesPerAddress: false,
} as const
