/**
 * The raw writes of a granted payment, for the fair baseline of the payment notification rows
 * (`bench/payments.ts`): what a hand-written integration with the bare driver must write durably
 * for each paid order, and nothing more — read the order by its key, insert the authorization it
 * buys, a ledger entry for the grant and the idempotency record keyed by the order (so a repeated
 * notification grants nothing), and mark the order paid. One transaction (one script on Redis),
 * on the store's own tables and keys, the store's connection settings, and orders of its own,
 * seeded in bulk beforehand under a user of its own, so that it touches nothing the store's rows
 * measure.
 *
 * - SQLite (better-sqlite3, the section's raw connection: WAL, the store's `synchronous`): one
 *   `BEGIN IMMEDIATE` transaction, `SELECT` of the order, `INSERT` ×3, `UPDATE` of the order, `COMMIT`.
 * - Redis (ioredis, the section's client): `HGETALL` of the order, then one `EVALSHA` of a script
 *   that checks the order's version and the idempotency key and writes the authorization (`HINCRBY`
 *   id, `HSET`), the ledger entry (`RPUSH`), the idempotency key (`SET`) and the order (`HSET`,
 *   `HINCRBY` version): two round trips.
 * - PostgreSQL (pg, the section's pool): `BEGIN`; `SELECT … FOR UPDATE` of the order; `INSERT` of
 *   the authorization (`RETURNING id`), the ledger entry and the idempotency record; `UPDATE` of the
 *   order; `COMMIT`: seven statements, one commit, on a checked-out client.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { Redis } from 'ioredis'
import type pg from 'pg'

const DAY = 24 * 3600 * 1000

/** How every fair baseline's name begins (`bench/why.ts` tells the fair rows by it). */
export const FAIR_BASELINE_PREFIX = 'bare crypto + '

/** The raw writes of `count` granted payments, one per order: `write(i)` pays raw order `i` (each at most once). */
export interface RawPaymentWrites {
  /** The baseline's name in the table. */
  name: string
  /** Orders seeded: `write(i)` for i in [0, count). */
  count: number
  write(i: number): void | Promise<void>
}

/** What raw order `i` grants: the two test plans in turn (a time grant and a points grant), as the store's orders do. */
const grantOf = (i: number) => (i % 2 === 0 ? { type: 'time' as const, days: 30, points: 0 } : { type: 'points' as const, days: 0, points: 100 })

/** The authorization a grant inserts: pending, its end (time) or its points (points). */
const authorizationOf = (type: string, days: number | null, points: number | null, now: number) =>
  type === 'time' ? { type, endAt: now + (days ?? 0) * DAY, points: 0 } : { type: 'points', endAt: null, points: points ?? 0 }

/** The SQLite baseline: its orders seeded on `db` (one transaction), then one raw write transaction per payment. */
export function sqlitePaymentWrites(db: Database.Database, count: number, now: number, tag: string): RawPaymentWrites {
  const orderId = (i: number) => `rawpay_${tag}_${i}`
  const userId = Number(
    db.prepare(`INSERT INTO scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES (?, ?, ?, 1, 1)`).run(`rawpay-${tag}`, now, now)
      .lastInsertRowid,
  )
  const insertOrder = db.prepare(`INSERT INTO scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points,
    scene_str, status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version)
    VALUES (?, ?, ?, 'raw', ?, ?, ?, ?, NULL, 'open', ?, ?, ?, NULL, NULL, NULL, 0, '[]', 1)`)
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const g = grantOf(i)
      insertOrder.run(orderId(i), userId, g.type, g.type === 'time' ? 1990 : 990, g.type, g.type === 'time' ? g.days : null, g.type === 'points' ? g.points : null, now, now + 900_000, now)
    }
  })()

  // Rows read in raw mode, as the section's other baselines read them.
  const readOrder = db.prepare<[string], unknown[]>('SELECT * FROM scanauth_orders WHERE out_trade_no = ?').raw()
  const insertAuthorization = db.prepare(`INSERT INTO scanauth_authorizations
    (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at) VALUES (?, ?, 'pending', ?, ?, ?, ?, 'purchase', ?, ?)`)
  const insertLedger = db.prepare(`INSERT INTO scanauth_ledger (user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason)
    VALUES (?, ?, 'grant', ?, ?, ?, 'purchase', ?, NULL)`)
  const insertIdempotency = db.prepare(`INSERT INTO scanauth_idempotency (key, fingerprint, authorization_id, result, created_at) VALUES (?, 'grant:order', ?, NULL, ?)`)
  const markPaid = db.prepare(`UPDATE scanauth_orders SET status = 'paid', paid_at = ?, transaction_id = ?, authorization_id = ?, updated_at = ?, version = version + 1
    WHERE out_trade_no = ? AND version = ?`)
  const pay = db
    .transaction((no: string) => {
      const order = readOrder.get(no)
      // Columns as in the schema: user_id 1, grant_type 5, grant_days 6, grant_points 7, status 9, version 18.
      if (order === undefined || order[9] !== 'open') throw new Error(`bench: raw order ${no} is not open`)
      const a = authorizationOf(order[5] as string, order[6] as number | null, order[7] as number | null, now)
      const authorizationId = insertAuthorization.run(order[1], a.type, now, a.endAt, a.points, a.points, now, now).lastInsertRowid
      const key = `grant:${no}`
      insertLedger.run(order[1], authorizationId, a.points, a.points, now, key)
      insertIdempotency.run(key, authorizationId, now)
      if (markPaid.run(now, `tx_${no}`, authorizationId, now, no, order[18]).changes !== 1) throw new Error(`bench: raw order ${no} changed`)
    })
    .immediate
  return {
    name: `${FAIR_BASELINE_PREFIX}one raw write tx (better-sqlite3: BEGIN IMMEDIATE; SELECT order; INSERT authorization, ledger, idempotency; UPDATE order; COMMIT)`,
    count,
    write: (i) => pay(orderId(i)),
  }
}

/**
 * The write script of the Redis baseline. KEYS: the id counters, the authorizations hash, the
 * user's ledger list, the idempotency key, the order. ARGV: the order's version as read, the
 * authorization (without its id), the ledger entry (without its ids), the fingerprint, now, the
 * transaction id. Answers the new authorization's id, 0 when the key is taken, -1 when the order changed.
 */
const WRITE_SCRIPT = `
if redis.call('HGET', KEYS[5], 'version') ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
local id = redis.call('HINCRBY', KEYS[1], 'a', 1)
redis.call('HSET', KEYS[2], id, ARGV[2])
redis.call('RPUSH', KEYS[3], id .. '|' .. ARGV[3])
redis.call('SET', KEYS[4], ARGV[4] .. '|' .. id)
redis.call('HSET', KEYS[5], 'status', 'paid', 'paidAt', ARGV[5], 'updatedAt', ARGV[5], 'transactionId', ARGV[6], 'authorizationId', id)
redis.call('HINCRBY', KEYS[5], 'version', 1)
return id`

/** The Redis baseline: its orders seeded under `prefix` (one pipeline), then `HGETALL` + one `EVALSHA` per payment. */
export async function redisPaymentWrites(client: Redis, prefix: string, count: number, now: number): Promise<RawPaymentWrites> {
  const p = `${prefix}rawpay:`
  const orderKey = (i: number) => `${p}od:${i}`
  const userId = '1'
  const seed = client.pipeline()
  for (let i = 0; i < count; i++) {
    const g = grantOf(i)
    seed.hset(orderKey(i), {
      version: '1',
      status: 'open',
      userId,
      planId: g.type === 'time' ? 'days-30' : 'points-100',
      description: 'raw',
      amountFen: g.type === 'time' ? '1990' : '990',
      grant: JSON.stringify(g.type === 'time' ? { type: 'time', days: g.days } : { type: 'points', points: g.points }),
      createdAt: String(now),
      expiresAt: String(now + 900_000),
      updatedAt: String(now),
      refundedFen: '0',
      refunds: '[]',
    })
  }
  await seed.exec()
  const sha = (await client.script('LOAD', WRITE_SCRIPT)) as string
  const keys = [`${p}seq`, `${p}a`, `${p}l:${userId}`]
  return {
    name: `${FAIR_BASELINE_PREFIX}raw HGETALL of the order, then one EVALSHA writing authorization, ledger entry, idempotency key, order (ioredis)`,
    count,
    async write(i) {
      const order = await client.hgetall(orderKey(i))
      if (order.status !== 'open') throw new Error(`bench: raw order ${i} is not open`)
      const grant = JSON.parse(order.grant as string) as { type: string; days?: number; points?: number }
      const a = authorizationOf(grant.type, grant.days ?? null, grant.points ?? null, now)
      const key = `grant:order:${i}`
      const authorization = `${order.userId}|${a.type}|pending|${now}|${a.endAt ?? ''}|${a.points}|${a.points}|purchase|${now}|${now}`
      const entry = `grant|${a.points}|${a.points}|${now}|purchase|${key}`
      const id = (await client.evalsha(sha, 5, ...keys, `${p}i:${key}`, orderKey(i), order.version as string, authorization, entry, 'grant:order', String(now), `tx_${i}`)) as number
      if (id <= 0) throw new Error(`bench: raw order ${i} answered ${id}`)
    },
  }
}

/** The PostgreSQL baseline: its orders seeded in `schema` (one statement), then one raw write transaction per payment. */
export async function postgresPaymentWrites(pool: pg.Pool, schema: string, count: number, now: number): Promise<RawPaymentWrites> {
  const s = `"${schema}"`
  const user = await pool.query<[string]>({
    text: `INSERT INTO ${s}.scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES ('rawpay', $1, $1, true, 1) RETURNING id`,
    values: [now],
    rowMode: 'array',
  })
  const userId = user.rows[0]?.[0]
  // Even g: the time plan, odd: the points plan (grantOf).
  await pool.query({
    text: `INSERT INTO ${s}.scanauth_orders (out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points,
        scene_str, status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version)
      SELECT 'rawpay_' || g, $1, CASE WHEN g % 2 = 0 THEN 'days-30' ELSE 'points-100' END, 'raw', CASE WHEN g % 2 = 0 THEN 1990 ELSE 990 END,
        CASE WHEN g % 2 = 0 THEN 'time' ELSE 'points' END, CASE WHEN g % 2 = 0 THEN 30 END, CASE WHEN g % 2 = 1 THEN 100 END,
        NULL, 'open', $2::double precision, $2::double precision + 900000, $2::double precision, NULL, NULL, NULL, 0, '[]'::jsonb, 1
      FROM generate_series(0, ${count - 1}) g`,
    values: [userId, now],
  })
  const q = (client: pg.PoolClient, name: string, text: string, values: unknown[]) => client.query({ name: `bench_pay_${name}`, text, values, rowMode: 'array' })
  const pay = async (no: string) => {
    const client = await pool.connect()
    let failed = false
    try {
      await client.query('BEGIN')
      const order = (await q(client, 'lock_order', `SELECT * FROM ${s}.scanauth_orders WHERE out_trade_no = $1 FOR UPDATE`, [no])).rows[0] as unknown[] | undefined
      // Columns as in the schema: user_id 1, grant_type 5, grant_days 6, grant_points 7, status 9, version 18.
      if (order === undefined || order[9] !== 'open') throw new Error(`bench: raw order ${no} is not open`)
      const a = authorizationOf(order[5] as string, order[6] as number | null, order[7] === null ? null : Number(order[7]), now)
      const inserted = await q(
        client,
        'insert_authorization',
        `INSERT INTO ${s}.scanauth_authorizations (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
          VALUES ($1, $2, 'pending', $3, $4, $5, $5, 'purchase', $3, $3) RETURNING id`,
        [order[1], a.type, now, a.endAt, a.points],
      )
      const authorizationId = (inserted.rows[0] as unknown[])[0]
      const key = `grant:${no}`
      await q(
        client,
        'insert_ledger',
        `INSERT INTO ${s}.scanauth_ledger (user_id, authorization_id, kind, points, remaining_points, at, source, idempotency_key, reason)
          VALUES ($1, $2, 'grant', $3, $3, $4, 'purchase', $5, NULL)`,
        [order[1], authorizationId, a.points, now, key],
      )
      await q(client, 'insert_idempotency', `INSERT INTO ${s}.scanauth_idempotency (key, fingerprint, authorization_id, result, created_at) VALUES ($1, 'grant:order', $2, NULL, $3)`, [
        key,
        authorizationId,
        now,
      ])
      await q(
        client,
        'mark_paid',
        `UPDATE ${s}.scanauth_orders SET status = 'paid', paid_at = $2, transaction_id = $3, authorization_id = $4, updated_at = $2, version = version + 1 WHERE out_trade_no = $1`,
        [no, now, `tx_${no}`, authorizationId],
      )
      await client.query('COMMIT')
    } catch (error) {
      failed = true
      throw error
    } finally {
      // A client left inside a failed transaction is not handed back to the pool.
      client.release(failed)
    }
  }
  return {
    name: `${FAIR_BASELINE_PREFIX}one raw write tx (pg: BEGIN; SELECT order FOR UPDATE; INSERT authorization, ledger, idempotency; UPDATE order; COMMIT)`,
    count,
    write: (i) => pay(`rawpay_${i}`),
  }
}
