/**
 * Everything a store holds, read straight from its backend, to show that a refused command wrote
 * nothing: an SQLite file's bytes (and its WAL's) beside a dump of every table; every key under a
 * Redis prefix with `DUMP`; every table and sequence of a PostgreSQL schema, rows ordered by
 * primary key.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { Redis } from 'ioredis'
import type pg from 'pg'

/** The file's bytes, its WAL's bytes (digests), and every row of every table, as text. */
export function sqliteSnapshot(file: string): string {
  const digest = (path: string) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'absent')
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const tables = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{ name: string; sql: string }>
    const dump = tables.map(({ name, sql }) => {
      // Sorted as text: every table, WITHOUT ROWID ones too, in one stable order.
      const rows = (db.prepare(`SELECT * FROM "${name}"`).all() as unknown[]).map((row) => JSON.stringify(row)).sort()
      return `${sql}\n${rows.join('\n')}`
    })
    return [`db ${digest(file)}`, `wal ${digest(`${file}-wal`)}`, ...dump].join('\n')
  } finally {
    db.close()
  }
}

/**
 * Every key under `prefix`, sorted, with its serialized value (`DUMP`). Commit receipts
 * (`<prefix>r:<commitId>`) are left out: they vanish by themselves 120 s after the commit that wrote
 * them (a store's `commitReceiptSeconds`), and a commit never writes a receipt alone, so a refused
 * command that wrote anything would still show in the other keys.
 */
export async function redisSnapshot(client: Redis, prefix: string): Promise<string> {
  const keys = (await keysUnder(client, prefix)).filter((key) => !key.startsWith(`${prefix}r:`))
  const lines: string[] = []
  for (const key of keys.sort()) {
    const value = await client.dumpBuffer(key)
    lines.push(`${key} ${value === null ? 'gone' : value.toString('hex')}`)
  }
  return lines.join('\n')
}

/** Every key under `prefix` (SCAN, never KEYS). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000)
    keys.push(...found)
    cursor = next
  } while (cursor !== '0')
  return keys
}

/** Every row of every table of `schema` ordered by primary key, and every sequence's position. */
export async function postgresSnapshot(pool: pg.Pool, schema: string): Promise<string> {
  const { rows: tables } = await pool.query<{ name: string; key: string[] | null }>(
    `SELECT c.relname AS name,
            (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM pg_index i
               CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              WHERE i.indrelid = c.oid AND i.indisprimary) AS key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
    [schema],
  )
  const lines: string[] = []
  for (const { name, key } of tables) {
    // By primary key; the whole row as text after it, for a table without one.
    const order = [...(key ?? []).map((k) => `t."${k}"`), 'to_jsonb(t)::text'].join(', ')
    const { rows } = await pool.query<{ row: unknown }>(`SELECT to_jsonb(t) AS row FROM "${schema}"."${name}" t ORDER BY ${order}`)
    lines.push(`table ${name}`, ...rows.map((r) => JSON.stringify(r.row)))
  }
  const { rows: sequences } = await pool.query<{ name: string; last: string | null }>(
    `SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE schemaname = $1 ORDER BY sequencename`,
    [schema],
  )
  lines.push(...sequences.map((s) => `sequence ${s.name} ${s.last}`))
  return lines.join('\n')
}
