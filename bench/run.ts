/**
 * `npm run bench`: every benchmark, one after another, each operation beside its baseline in the
 * same run; prints the tables and rewrites `docs/benchmarks.md` (the one place the figures live).
 *
 *   npm run bench                              # everything (about 8 minutes), rewrites docs/benchmarks.md
 *   BENCH_ONLY=memory,http npm run bench       # some sections, printed only (the docs are left alone)
 *   BENCH_QUICK=1 BENCH_ONLY=push,http npm run bench   # short runs of the sections that know it: a check, printed only
 *   BENCH_ONLY=push BENCH_PUSH_PARTS=phone npm run bench   # some parts of the push section (see bench/push.ts), printed only
 *   BENCH_ONLY=reminders BENCH_REMINDER_STORES=sqlite,redis npm run bench   # the reminder pass on some stores (see bench/reminders.ts), printed only
 *
 * Sections: memory (`bench/memory.ts`), sqlite (`bench/sqlite.ts`), redis (`bench/redis.ts`),
 * postgres (`bench/postgres.ts`), reminders (`bench/reminders.ts`), http (`bench/http.ts`), scaling
 * (`bench/scaling.ts`), push (`bench/push.ts`). Everything listens on 127.0.0.1; Redis is `REDIS_URL` (default
 * redis://127.0.0.1:6379), used under key prefixes that are deleted afterwards; PostgreSQL is
 * `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test), used in schemas of the
 * benchmark's own that are dropped afterwards.
 *
 * @module
 */
import Database from 'better-sqlite3'
import { readFile, writeFile } from 'node:fs/promises'
import { cpus, loadavg, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { roundTripTable, type RoundTripRow } from './concurrent'
import { benchHttp, type HttpBenchRow } from './http'
import { markdownTable, QUICK, type BenchRow } from './lib'
import { benchMemory } from './memory'
import { benchPostgres } from './postgres'
import { describeServer } from './postgres-pool'
import { benchPush, isCompletePush, ONLY_PUSH_PARTS, pushTables } from './push'
import { benchRedis } from './redis'
import { benchReminders, ONLY_REMINDER_STORES } from './reminders'
import { remindersPrinted } from './report-reminders'
import { httpTable, renderReport, type Environment, type Results } from './report'
import { benchScaling, scalingTable } from './scaling'
import { benchSqlite } from './sqlite'

const SECTIONS = ['memory', 'sqlite', 'redis', 'postgres', 'reminders', 'http', 'scaling', 'push'] as const
type Section = (typeof SECTIONS)[number]

const root = fileURLToPath(new URL('..', import.meta.url))
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean)
for (const name of only ?? []) {
  if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`BENCH_ONLY: unknown section '${name}' (sections: ${SECTIONS.join(', ')})`)
}
const wanted = (name: Section) => only === undefined || only.includes(name)

async function version(pkg: string): Promise<string> {
  const json = JSON.parse(await readFile(`${root}node_modules/${pkg}/package.json`, 'utf8')) as { version: string }
  return json.version
}

async function environment(): Promise<Omit<Environment, 'loadAfter' | 'seconds' | 'sectionSeconds'>> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '')
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true })
  let redisVersion = 'not reachable'
  try {
    await redis.connect()
    redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown'
  } finally {
    redis.disconnect()
  }
  const sqliteDb = new Database(':memory:')
  const sqlite = `${sqliteDb.prepare('SELECT sqlite_version()').pluck().get() as string} (better-sqlite3 ${await version('better-sqlite3')})`
  sqliteDb.close()
  return {
    cpuModel,
    cores: cpus().length,
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    redis: redisVersion,
    postgres: await describeServer(),
    sqlite,
    versions: {
      ioredis: await version('ioredis'),
      pg: await version('pg'),
      express: await version('express'),
      koa: await version('koa'),
      autocannon: await version('autocannon'),
    },
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadBefore: loadavg()[0] ?? 0,
  }
}

/** A network store's (or the HTTP section's) table and, below it, the round trips of the rows that counted them. */
const withRoundTrips = (rows: Array<BenchRow & { roundTripsPerOp?: number }>) =>
  `${markdownTable(rows)}\n\n${roundTripTable(rows.filter((r): r is RoundTripRow => r.roundTripsPerOp !== undefined))}`

/**
 * The HTTP section as the report has it: its own columns (ratio of totals, CPU-per-request ratio, server CPU), then the round trips,
 * then the spans the SDK process of each OpenTelemetry row exported per request.
 */
const httpTables = (rows: HttpBenchRow[]) =>
  `${httpTable(rows)}\n\n${roundTripTable(rows.filter((r): r is HttpBenchRow & RoundTripRow => r.roundTripsPerOp !== undefined))}` +
  rows
    .filter((r) => r.spansPerOp !== undefined)
    .map((r) => `\n${r.operation}: spans exported per request ${r.spansPerOp?.toFixed(2)}`)
    .join('')

const began = performance.now()
const env = await environment()
const sectionSeconds: Record<string, number> = {}
const results: Results = { memory: [], sqlite: [], redis: [], postgres: [], http: [], scaling: [] }

async function section<T>(name: Section, run: () => Promise<T>, print: (value: T) => string): Promise<T | undefined> {
  if (!wanted(name)) return undefined
  const start = performance.now()
  console.log(`\n## ${name}\n`)
  const value = await run()
  sectionSeconds[name] = (performance.now() - start) / 1000
  console.log(print(value))
  console.log(`\n(${sectionSeconds[name].toFixed(1)} s)`)
  return value
}

results.memory = (await section('memory', () => benchMemory(), markdownTable)) ?? []
results.sqlite = (await section('sqlite', () => benchSqlite(), markdownTable)) ?? []
results.redis =
  (await section(
    'redis',
    () => benchRedis({ memory: (m) => (results.redisMemory = m) }),
    withRoundTrips,
  )) ?? []
results.postgres = (await section('postgres', () => benchPostgres(), withRoundTrips)) ?? []
const reminders = await section('reminders', () => benchReminders(), remindersPrinted)
if (reminders !== undefined) results.reminders = reminders
results.http = (await section('http', () => benchHttp(), httpTables)) ?? []
results.scaling = (await section('scaling', () => benchScaling(), scalingTable)) ?? []
const push = await section('push', () => benchPush(), pushTables)
if (push !== undefined && isCompletePush(push)) results.push = push

const seconds = (performance.now() - began) / 1000
// A quick run checks that the benchmarks work; its figures are not of record.
if (only === undefined && !QUICK && ONLY_PUSH_PARTS === undefined && ONLY_REMINDER_STORES === undefined) {
  const report = renderReport({ ...env, loadAfter: loadavg()[0] ?? 0, seconds, sectionSeconds }, results)
  await writeFile(`${root}docs/benchmarks.md`, report)
  console.log(`\nWrote docs/benchmarks.md (${seconds.toFixed(0)} s in all).`)
} else {
  const set = [
    QUICK ? 'BENCH_QUICK' : undefined,
    only ? 'BENCH_ONLY' : undefined,
    ONLY_PUSH_PARTS ? 'BENCH_PUSH_PARTS' : undefined,
    ONLY_REMINDER_STORES ? 'BENCH_REMINDER_STORES' : undefined,
  ]
    .filter(Boolean)
    .join(', ')
  console.log(`\n(${seconds.toFixed(0)} s; ${set} ${set.includes(',') ? 'are' : 'is'} set, docs/benchmarks.md left as it was)`)
}
