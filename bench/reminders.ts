/**
 * Reminder pass benchmark (issue 28): one `auth.sendReminders()` over 100,000 users of whom 1,000
 * are due, on every store: the pass's time, per due person, and the store calls (and, on Redis and
 * PostgreSQL, the round trips) it makes, beside the least a pass must do on the same backend in the
 * same run (`bench/reminders-raw.ts`: the due read by the index, one claim per due person). A pass
 * must not read every user (docs/behaviour.md, B-remind-2): its calls per due person stay the same
 * whatever the store holds.
 *
 *   npx tsx --conditions=@scanauth/source bench/reminders.ts                                  # every store, printed
 *   BENCH_REMINDER_STORES=sqlite,postgres npx tsx --conditions=@scanauth/source bench/reminders.ts  # some stores (also under npm run bench)
 *
 * Data, the same on every store: 100,000 users, each granted one time authorization through
 * `auth.grant` (what core writes: the user, an active time authorization, its ledger entry, one
 * commit each; untimed, several in flight, on SQLite with `synchronous = NORMAL` and on PostgreSQL
 * with `synchronous_commit = off` for the seeding connection only, since a durable commit per user
 * would make seeding take minutes). Every grant starts at one moment and their ends are spread
 * evenly over 300 days around the pass, one every 259.2 s, so that any 3 days hold 1,000 ends: a
 * third of the authorizations have ended already (still `active` in the store, as until a user's next
 * load), the rest end up to 200 days after the pass. The service reminds at `leadDays: [3, 1]`, so
 * a pass at time `t` is due for the 1,000 people whose access ends in `(t, t + 3 days]` (those
 * within a day at lead 1, the others at lead 3), with a notifier that only counts.
 *
 * Each store: one pass and its floor at a first window (warm-up, not recorded), then
 * {@link WINDOWS} windows 3 days apart, each a fresh set of 1,000 due, the pass and the floor in
 * alternating order. The store is wrapped in a proxy that counts its method calls (so the calls
 * are the store API's, whatever the backend); Redis commands and PostgreSQL statements are counted
 * on the driver as in the store sections (`bench/stores.ts`, `bench/postgres-pool.ts`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import pg from 'pg'
import { createScanAuth, MemoryStore, type ReminderDelivery, type ReminderNotifier, type Store } from '@scanauth/core'
import { PostgresStore } from '@scanauth/postgres'
import { RedisStore } from '@scanauth/redis'
import { SqliteStore } from '@scanauth/sqlite'
import { NO_RATE_LIMITS } from './lib'
import { countingPool, DATABASE_URL, DEFAULT_POOL_SIZE, dropSchema, freshBenchSchema } from './postgres-pool'
import { memoryFloor, postgresFloor, redisFloor, sqliteFloor, type RawReminderFloor } from './reminders-raw'
import { STORE_LABEL, type StoreKind } from './stores'

const DAY = 24 * 3600 * 1000
/** Users in the store. */
export const REMINDER_USERS = 100_000
/** Of them, due at each pass. */
export const REMINDER_DUE = 1000
/** The leads, days. */
const LEADS = [3, 1]
const WINDOW_MS = Math.max(...LEADS) * DAY
/** The ends span this many windows' worth of users around the pass: one end every `SPAN / USERS`. */
const SPAN_MS = (REMINDER_USERS / REMINDER_DUE) * WINDOW_MS
/** Measured windows per store (after one warm-up window). */
export const WINDOWS = 5
/** A pass reads this many authorizations per store call (core's `PAGE`, send.ts). */
const PAGE = 200

/** The stores of this section, for `BENCH_REMINDER_STORES`. */
export const REMINDER_STORES = ['memory', 'sqlite', 'redis', 'postgres'] as const satisfies readonly StoreKind[]

/** `BENCH_REMINDER_STORES`, checked: the stores to run, or undefined for all of them. */
export const ONLY_REMINDER_STORES: StoreKind[] | undefined = (() => {
  const names = process.env.BENCH_REMINDER_STORES?.split(',').map((s) => s.trim()).filter(Boolean)
  if (names === undefined || names.length === 0) return undefined
  for (const name of names) {
    if (!(REMINDER_STORES as readonly string[]).includes(name)) throw new Error(`BENCH_REMINDER_STORES: unknown store '${name}' (stores: ${REMINDER_STORES.join(', ')})`)
  }
  return names as StoreKind[]
})()

/** One store's figures. */
export interface ReminderBenchRow {
  store: StoreKind
  users: number
  due: number
  /** Measured passes (windows). */
  passes: number
  /** Seeding the users, seconds (untimed work, for the record). */
  seedSeconds: number
  /** A pass, ms: the median over the windows, and the fastest and slowest. */
  passMs: number
  passMinMs: number
  passMaxMs: number
  /** Of a pass, the time in `listActiveAuthorizations` (the index pages), ms, median. */
  passReadMs: number
  /** `passMs` per due person, µs. */
  perDueUs: number
  /** Authorizations a pass read (its result's `checked`), the same in every window. */
  checked: number
  /** Store calls of one pass per due person, and one pass's calls by method (the median window's). */
  storeCallsPerDue: number
  storeCalls: Record<string, number>
  /** Round trips on the driver per due person (Redis commands, PostgreSQL statements); absent in process. */
  roundTripsPerDue?: number
  /** The floor (`bench/reminders-raw.ts`): its name, its median time, of which the index pages, and its round trips per due person. */
  baseline: { name: string; ms: number; readMs: number; roundTripsPerDue?: number }
  /** `baseline.ms / passMs`: the pass's rate as a share of the floor's (higher is better, 1 the most). */
  ratio: number
}

/** A store opened for this section: the store, the floor beside it, and what counts its round trips. */
interface Opened {
  store: Store
  floor: RawReminderFloor
  roundTrips?: () => number
  seconds: number
  close(): Promise<void>
}

/** The notifier of the pass: counts, sends nothing. */
class CountingNotifier implements ReminderNotifier {
  sent = 0
  async send(): Promise<ReminderDelivery> {
    this.sent++
    return { outcome: 'sent', channel: 'count' }
  }
}

/** `inner` behind a proxy that counts its method calls by name, and the time spent in `listActiveAuthorizations`. */
function countingStore(inner: Store): { store: Store; calls: Map<string, number>; readMs: { total: number } } {
  const calls = new Map<string, number>()
  const readMs = { total: 0 }
  const store = new Proxy(inner, {
    get(target, property) {
      // Bound to the store itself: its methods may use private fields a proxy receiver lacks.
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const name = String(property)
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1)
        if (name !== 'listActiveAuthorizations') return (value as (...a: unknown[]) => unknown).apply(target, args)
        // A pass awaits each page before it goes on, so the time to its answer is the read's (on
        // SQLite the select runs inside the call itself, before the promise is made).
        const began = performance.now()
        const answer = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        return answer.finally(() => (readMs.total += performance.now() - began))
      }
    },
  })
  return { store, calls, readMs }
}

/** Counts the commands `client` sends (its `sendCommand`), as `bench/stores.ts` does. */
function commandCounter(client: Redis): () => number {
  let sent = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++
    return send(...args)
  }) as Redis['sendCommand']
  return () => sent
}

/**
 * Grants every user its time authorization through `auth.grant` on `store`, `inFlight` at a time:
 * user `i` ends at `start + (i + 0.5) · SPAN / USERS`, all granted at `grantedAt`.
 */
async function seedUsers(store: Store, grantedAt: number, start: number, inFlight: number): Promise<void> {
  const auth = createScanAuth({ store, qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) }, now: () => grantedAt, rateLimits: NO_RATE_LIMITS })
  const step = SPAN_MS / REMINDER_USERS
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < REMINDER_USERS) {
        const i = next++
        const endAt = start + (i + 0.5) * step
        await auth.grant({ openid: `bench-remind-${i}`, type: 'time', durationSeconds: Math.round((endAt - grantedAt) / 1000), source: 'bench' })
      }
    }),
  )
}

/** Opens `kind` with the users seeded (timed apart), and its floor. */
async function open(kind: StoreKind, grantedAt: number, start: number): Promise<Opened> {
  const began = performance.now()
  const seconds = () => (performance.now() - began) / 1000
  if (kind === 'memory') {
    const store = new MemoryStore()
    await seedUsers(store, grantedAt, start, 1)
    return { store, floor: memoryFloor(store), seconds: seconds(), close: async () => {} }
  }
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'scanauth-bench-reminders-'))
    const filename = join(dir, 'bench.db')
    // Seeded without a sync per commit; measured on the store's defaults (WAL, synchronous = FULL).
    const seeding = new SqliteStore({ filename, synchronous: 'normal' })
    await seedUsers(seeding, grantedAt, start, 1)
    await seeding.close()
    const took = seconds()
    const store = new SqliteStore({ filename })
    const floor = sqliteFloor(filename)
    return {
      store,
      floor,
      seconds: took,
      close: async () => {
        await floor.close()
        await store.close()
        await rm(dir, { recursive: true, force: true })
      },
    }
  }
  if (kind === 'redis') {
    const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    const prefix = `scanauth:bench:${randomBytes(4).toString('hex')}:{b}:`
    const commands = commandCounter(client)
    const store = new RedisStore({ client, keyPrefix: prefix })
    await seedUsers(store, grantedAt, start, 64)
    return {
      store,
      floor: redisFloor(client, prefix),
      roundTrips: commands,
      seconds: seconds(),
      close: async () => {
        await deletePrefix(client, prefix)
        await client.quit()
      },
    }
  }
  const schema = freshBenchSchema()
  // Seeded on a pool of its own whose commits do not wait for their WAL flush.
  const seedingPool = new pg.Pool({ connectionString: DATABASE_URL, max: DEFAULT_POOL_SIZE, options: '-c synchronous_commit=off' })
  const seeding = new PostgresStore({ pool: seedingPool, schema })
  await seeding.migrate()
  await seedUsers(seeding, grantedAt, start, 32)
  await seeding.close()
  await seedingPool.query(`ANALYZE "${schema}".scanauth_authorizations`)
  await seedingPool.end()
  const took = seconds()
  const { pool, statements } = countingPool(DEFAULT_POOL_SIZE)
  const store = new PostgresStore({ pool, schema })
  await store.migrate()
  const floor = await postgresFloor(pool, schema)
  return {
    store,
    floor,
    roundTrips: statements,
    seconds: took,
    close: async () => {
      await store.close()
      await dropSchema(pool, schema)
      await pool.end()
    },
  }
}

/** Deletes every key under `prefix` (SCAN + DEL; the prefix has no glob characters). */
async function deletePrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await client.del(...keys)
    cursor = next
  } while (cursor !== '0')
}

/** What one pass or one floor run measured. */
interface Run {
  ms: number
  /** Store calls by method (the pass only). */
  calls: Map<string, number>
  roundTrips: number | undefined
  /** Of `ms`, the index pages (the pass's `listActiveAuthorizations` calls, the floor's page reads). */
  readMs: number
  checked: number
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/** Runs the section on one store: seeds it, then a warm-up window and {@link WINDOWS} measured ones. */
export async function benchReminderStore(kind: StoreKind): Promise<ReminderBenchRow> {
  // The first pass: the ends run from a third of the span before it to two thirds after.
  const first = Date.now()
  const start = first - SPAN_MS / 3
  const grantedAt = start - 3600 * 1000
  const opened = await open(kind, grantedAt, start)
  try {
    const { store, calls, readMs: passReadMs } = countingStore(opened.store)
    const notifier = new CountingNotifier()
    const auth = createScanAuth({
      store,
      qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) },
      rateLimits: NO_RATE_LIMITS,
      reminders: { leadDays: LEADS, notifier },
    })
    const trips = () => opened.roundTrips?.()

    const pass = async (now: number): Promise<Run> => {
      calls.clear()
      passReadMs.total = 0
      const sentBefore = notifier.sent
      const tripsBefore = trips()
      const began = performance.now()
      const result = await auth.sendReminders({ now })
      const ms = performance.now() - began
      const tripsAfter = trips()
      if (result.sent !== REMINDER_DUE || notifier.sent - sentBefore !== REMINDER_DUE || result.checked !== REMINDER_DUE) {
        throw new Error(`bench: a pass at ${new Date(now).toISOString()} sent ${result.sent} of ${result.checked} read (expected ${REMINDER_DUE} of ${REMINDER_DUE})`)
      }
      return { ms, calls: new Map(calls), roundTrips: tripsAfter === undefined ? undefined : tripsAfter - (tripsBefore as number), readMs: passReadMs.total, checked: result.checked }
    }
    const floor = async (now: number, window: number): Promise<Run> => {
      const tripsBefore = trips()
      const began = performance.now()
      let readMs = 0
      let read = 0
      let after: { endAt: number; id: number } | undefined
      for (;;) {
        const pageBegan = performance.now()
        const page = await opened.floor.page(now + 1, now + WINDOW_MS + 1, after, PAGE)
        readMs += performance.now() - pageBegan
        for (const row of page) await opened.floor.claim(`reminder:${window}:${row.userId}:${row.id}`)
        read += page.length
        const last = page[page.length - 1]
        if (page.length < PAGE || last === undefined) break
        after = { endAt: last.endAt, id: last.id }
      }
      const ms = performance.now() - began
      const tripsAfter = trips()
      if (read !== REMINDER_DUE) throw new Error(`bench: the floor read ${read} due, not ${REMINDER_DUE}`)
      return { ms, calls: new Map(), roundTrips: tripsAfter === undefined ? undefined : tripsAfter - (tripsBefore as number), readMs, checked: read }
    }

    // Window 0 warms both up (prepared statements, scripts, caches); then each window holds a fresh 1,000.
    await pass(first)
    await floor(first, 0)
    const passes: Run[] = []
    const floors: Run[] = []
    for (let w = 1; w <= WINDOWS; w++) {
      const now = first + w * WINDOW_MS
      if (w % 2 === 1) {
        passes.push(await pass(now))
        floors.push(await floor(now, w))
      } else {
        floors.push(await floor(now, w))
        passes.push(await pass(now))
      }
    }

    const passMs = median(passes.map((p) => p.ms))
    const typical = passes.find((p) => p.ms === passMs) as Run
    const storeCalls = Object.fromEntries([...typical.calls].sort(([a], [b]) => a.localeCompare(b)))
    const totalCalls = [...typical.calls.values()].reduce((n, c) => n + c, 0)
    const floorMs = median(floors.map((f) => f.ms))
    const perDue = (xs: Run[]) => (xs[0]?.roundTrips === undefined ? undefined : median(xs.map((x) => x.roundTrips as number)) / REMINDER_DUE)
    const passTrips = perDue(passes)
    const floorTrips = perDue(floors)
    return {
      store: kind,
      users: REMINDER_USERS,
      due: REMINDER_DUE,
      passes: passes.length,
      seedSeconds: opened.seconds,
      passMs,
      passMinMs: Math.min(...passes.map((p) => p.ms)),
      passMaxMs: Math.max(...passes.map((p) => p.ms)),
      passReadMs: median(passes.map((p) => p.readMs)),
      perDueUs: (passMs * 1000) / REMINDER_DUE,
      checked: typical.checked,
      storeCallsPerDue: totalCalls / REMINDER_DUE,
      storeCalls,
      ...(passTrips === undefined ? {} : { roundTripsPerDue: passTrips }),
      baseline: { name: opened.floor.name, ms: floorMs, readMs: median(floors.map((f) => f.readMs)), ...(floorTrips === undefined ? {} : { roundTripsPerDue: floorTrips }) },
      ratio: floorMs / passMs,
    }
  } finally {
    await opened.close()
  }
}

/** Runs the section on every store asked for (`BENCH_REMINDER_STORES`, else all), one after another. */
export async function benchReminders(stores: readonly StoreKind[] = ONLY_REMINDER_STORES ?? REMINDER_STORES): Promise<ReminderBenchRow[]> {
  const rows: ReminderBenchRow[] = []
  for (const kind of stores) rows.push(await benchReminderStore(kind))
  return rows
}

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** The section's table (also what `npm run bench` prints for it). */
export function remindersTable(rows: ReminderBenchRow[]): string {
  const lines = [
    '| store | users | due | authorizations read | pass ms (median; min–max) | of which index pages ms | per due person µs | store calls per due person | store calls of a pass | round trips per due person | baseline | baseline ms | of which index pages ms | baseline round trips per due person | ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|',
  ]
  for (const r of rows) {
    const calls = Object.entries(r.storeCalls).map(([method, count]) => `${method} ${n(count)}`).join(', ')
    lines.push(
      `| ${STORE_LABEL[r.store]} | ${n(r.users)} | ${n(r.due)} | ${n(r.checked)} | ${n(r.passMs, 1)} (${n(r.passMinMs, 1)}–${n(r.passMaxMs, 1)}) | ${n(r.passReadMs, 1)} | ${n(r.perDueUs, 1)} | ` +
        `${n(r.storeCallsPerDue, 3)} | ${calls} | ${r.roundTripsPerDue === undefined ? '' : n(r.roundTripsPerDue, 3)} | ${r.baseline.name} | ${n(r.baseline.ms, 1)} | ` +
        `${n(r.baseline.readMs, 1)} | ${r.baseline.roundTripsPerDue === undefined ? '' : n(r.baseline.roundTripsPerDue, 3)} | ${n(r.ratio, r.ratio < 0.1 ? 3 : 2)} |`,
    )
  }
  lines.push('', `Seeding the ${n(REMINDER_USERS)} users (untimed): ${rows.map((r) => `${STORE_LABEL[r.store]} ${n(r.seedSeconds)} s`).join(', ')}.`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  console.log(remindersTable(await benchReminders()))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version}${ONLY_REMINDER_STORES ? `, BENCH_REMINDER_STORES=${ONLY_REMINDER_STORES.join(',')}` : ''})`)
}
