/**
 * The floor a reminder pass is compared with in `bench/reminders.ts`, per store: the due
 * authorizations read by the store's own index of active time authorizations in pages of 200 (as a
 * pass reads them), and one claim written per due person, with the raw driver on the same backend
 * (the least a pass that must not tell anyone twice across instances does: read who is due, and
 * take one durable claim before each send). No user is read, no message built.
 *
 * - SQLite: a second better-sqlite3 connection to the file, with the store's pragmas; the page a
 *   select on the partial index `scanauth_authorizations_active_time (end_at, id)` from a row-value
 *   cursor; the claim an autocommit upsert into a table of its own (one fsync with `synchronous =
 *   FULL`, as the store's counter).
 * - Redis: `ZRANGE <p>ae … BYSCORE LIMIT` of the index, then `HMGET` of the page's records from
 *   `<p>a` (two round trips a page); the claim a raw `INCR`.
 * - PostgreSQL: a named prepared select on the partial index from a row-value cursor, rows as
 *   arrays; the claim an autocommit upsert into a table of its own (one WAL flush), on the
 *   section's pool.
 * - MemoryStore: no driver below it; a sorted array of the active time authorizations (what an
 *   index would be), a page found by binary search, and a `Map` increment per person.
 *
 * @module
 */
import Database from 'better-sqlite3'
import type { Redis } from 'ioredis'
import type pg from 'pg'
import type { MemoryStore } from '@scanauth/core'

/** One due authorization, as the floor needs it: its id and end (the cursor) and its user. */
export interface DueRow {
  id: number
  endAt: number
  userId: number
}

/** The floor of one store. */
export interface RawReminderFloor {
  /** How the table names it. */
  name: string
  /** One page of the index: active time authorizations with `endFrom <= endAt < endBefore` after `after`, by (endAt, id), at most `limit`. */
  page(endFrom: number, endBefore: number, after: { endAt: number; id: number } | undefined, limit: number): Promise<DueRow[]>
  /** One claim: adds one to the counter `key` and answers its new value. */
  claim(key: string): Promise<number>
  /** Releases what it opened. */
  close(): Promise<void>
}

/**
 * MemoryStore: no driver below it, so the floor is plain JavaScript: the store's active time
 * authorizations copied once (untimed) into an array sorted by (endAt, id), a page found by binary
 * search and sliced; a claim a `Map` increment.
 */
export function memoryFloor(store: MemoryStore): RawReminderFloor {
  const claims = new Map<string, number>()
  const sorted: DueRow[] = store
    .snapshot()
    .authorizations.filter((a) => a.status === 'active' && a.type === 'time' && a.endAt !== null)
    .map((a) => ({ id: a.id, endAt: a.endAt as number, userId: a.userId }))
    .sort((a, b) => a.endAt - b.endAt || a.id - b.id)
  /** The first index whose row comes after `(endAt, id)`. */
  const firstAfter = (endAt: number, id: number) => {
    let lo = 0
    let hi = sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const row = sorted[mid] as DueRow
      if (row.endAt < endAt || (row.endAt === endAt && row.id <= id)) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return {
    name: 'plain: a sorted array of the active time authorizations (binary search, a slice per page) + a Map increment per due person',
    page: async (endFrom, endBefore, after, limit) => {
      const from = after ?? { endAt: endFrom, id: 0 }
      const out: DueRow[] = []
      for (let i = firstAfter(from.endAt, from.id); i < sorted.length && out.length < limit; i++) {
        const row = sorted[i] as DueRow
        if (!(row.endAt < endBefore)) break
        out.push({ ...row })
      }
      return out
    },
    claim: async (key) => {
      const count = (claims.get(key) ?? 0) + 1
      claims.set(key, count)
      return count
    },
    close: async () => {},
  }
}

/** SQLite: a connection of its own to `filename`, set up as the store sets up its own. */
export function sqliteFloor(filename: string): RawReminderFloor {
  const db = new Database(filename)
  db.pragma('busy_timeout = 5000')
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  db.exec('CREATE TABLE IF NOT EXISTS bench_raw_claims (key TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID')
  const page = db
    .prepare<[number, number, number, number], [number, number, number]>(
      `SELECT id, end_at, user_id FROM scanauth_authorizations INDEXED BY scanauth_authorizations_active_time
        WHERE status = 'active' AND type = 'time' AND (end_at, id) > (?, ?) AND end_at < ? ORDER BY end_at, id LIMIT ?`,
    )
    .raw()
  const upsert = db.prepare<[string], number>('INSERT INTO bench_raw_claims (key, count) VALUES (?, 1) ON CONFLICT (key) DO UPDATE SET count = count + 1 RETURNING count').pluck()
  return {
    name: 'raw: index pages (better-sqlite3 select on the partial index) + one upsert per due person (autocommit)',
    page: async (endFrom, endBefore, after, limit) => {
      const from = after ?? { endAt: endFrom, id: 0 }
      return page.all(from.endAt, from.id, endBefore, limit).map(([id, endAt, userId]) => ({ id, endAt, userId }))
    },
    claim: async (key) => upsert.get(key) as number,
    close: async () => void db.close(),
  }
}

/** Redis: the store's index and records under `prefix`, read raw on `client`. */
export function redisFloor(client: Redis, prefix: string): RawReminderFloor {
  const index = `${prefix}ae`
  const records = `${prefix}a`
  return {
    name: 'raw: index pages (ZRANGE BYSCORE LIMIT, then HMGET of the records) + one INCR per due person',
    page: async (endFrom, endBefore, after, limit) => {
      // Ids are unique per end in this benchmark's data, so a page can start just after the last end.
      const min = after === undefined ? String(endFrom) : `(${after.endAt}`
      const flat = await client.zrange(index, min, `(${endBefore}`, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')
      if (flat.length === 0) return []
      const ids: string[] = []
      const ends: number[] = []
      for (let i = 0; i < flat.length; i += 2) {
        ids.push(flat[i] as string)
        ends.push(Number(flat[i + 1]))
      }
      const values = await client.hmget(records, ...ids.map((member) => String(Number(member))))
      return ids.map((member, i) => {
        const userId = Number(String(values[i]).split('|')[0])
        if (!Number.isSafeInteger(userId)) throw new Error(`bench: no record for authorization ${member} in ${records}`)
        return { id: Number(member), endAt: ends[i] as number, userId }
      })
    },
    claim: (key) => client.incr(`${prefix}raw-claim:${key}`),
    close: async () => {},
  }
}

/** PostgreSQL: raw named prepared statements on the schema's tables, on `pool`. */
export async function postgresFloor(pool: pg.Pool, schema: string): Promise<RawReminderFloor> {
  const s = `"${schema}"`
  await pool.query(`CREATE TABLE IF NOT EXISTS ${s}.bench_raw_claims (key text COLLATE "C" PRIMARY KEY, count bigint NOT NULL)`)
  return {
    name: 'raw: index pages (pg select on the partial index) + one upsert per due person (autocommit)',
    page: async (endFrom, endBefore, after, limit) => {
      const from = after ?? { endAt: endFrom, id: 0 }
      const { rows } = await pool.query<[string, number, string]>({
        name: 'bench_reminder_page',
        text: `SELECT id, end_at, user_id FROM ${s}.scanauth_authorizations
          WHERE status = 'active' AND type = 'time' AND (end_at, id) > ($1::double precision, $2::bigint) AND end_at < $3::double precision
          ORDER BY end_at, id LIMIT $4`,
        values: [from.endAt, from.id, endBefore, limit],
        rowMode: 'array',
      })
      return rows.map(([id, endAt, userId]) => ({ id: Number(id), endAt: Number(endAt), userId: Number(userId) }))
    },
    claim: async (key) => {
      const { rows } = await pool.query<[string]>({
        name: 'bench_reminder_claim',
        text: `INSERT INTO ${s}.bench_raw_claims (key, count) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET count = bench_raw_claims.count + 1 RETURNING count`,
        values: [key],
        rowMode: 'array',
      })
      return Number(rows[0]?.[0])
    },
    close: async () => {},
  }
}
