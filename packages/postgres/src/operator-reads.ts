/**
 * The operator reads on PostgreSQL (`Store.listLiveSessions`, `listUsers`, `listOrders`,
 * `schemaState`; core's `operator-reads.ts`), which `PostgresStore` hands to: one statement each
 * (`schemaState` two), each a range of an index in the order the contract asks for.
 *
 * - A user's live sessions: scanauth_sessions_by_user `(user_id, expires_at)`, the user's range
 *   above `now`, then sorted by id: the sort costs the user's live sessions, never the table.
 * - Users: the primary key, a range after the cursor.
 * - Orders: one index per set of filters, each ending in `(created_at, out_trade_no)`, so the range
 *   after the row-value cursor is read in order and LIMIT stops it (migration 5 adds the two that
 *   were missing: all orders, and one user's orders whatever their status).
 *
 * @module
 */
import type { Pool } from 'pg'
import type { OrderRecord, SessionRecord, UserRecord } from '@scanauth/core'
import type { LiveSessionQuery, OrderListQuery, SchemaState, UserListQuery } from '@scanauth/core/store'
import { ORDER_COLUMNS, toOrder, type OrderRow } from './orders'
import { NUMBERS, sessionColumns, toSession, userColumns, type SessionRow } from './rows'
import { MIGRATIONS, quoteIdentifier, SCHEMA_VERSION, VERSION_TABLE } from './schema'

/** A user row in array mode, without authorizations. */
type UserRow = [id: number, openid: string, createdAt: number, lastSeenAt: number, hasClaimedFree: boolean, version: number]

/** Which filters a listing of orders has, and so which statement (and index) serves it. */
type OrderListingKind = 'all' | 'status' | 'user' | 'user_status'

/** The filter each listing adds before the common part (its parameters follow the common four). */
const ORDER_FILTERS: Record<OrderListingKind, string> = {
  all: '',
  status: 'status = $5 AND ',
  user: 'user_id = $5 AND ',
  user_status: 'user_id = $5 AND status = $6 AND ',
}

/**
 * The one lower bound of a page of orders, as a row value: after the cursor (exclusive), or from
 * `(createdFrom, '')` (inclusive: every outTradeNo is `>= ''`), whichever is later; with neither,
 * from `(-Infinity, '')`. One row-value bound is what makes the index range start where the page
 * does: with a second lower bound (`created_at >= $n` beside the cursor), the planner may start
 * the range at that one and filter the cursor, so that page n would read n pages.
 */
export function lowerBound(query: Pick<OrderListQuery, 'after' | 'createdFrom'>): { inclusive: boolean; createdAt: number; outTradeNo: string } {
  const { after, createdFrom } = query
  if (after !== undefined && (createdFrom === undefined || !(after.createdAt < createdFrom))) {
    return { inclusive: false, createdAt: after.createdAt, outTradeNo: after.outTradeNo }
  }
  return { inclusive: true, createdAt: createdFrom ?? -Infinity, outTradeNo: '' }
}

/**
 * Above every id the store can assign (ids stay below 2^53), bound as the session cursor of a
 * first page, so that every page is the same statement.
 */
const NO_SESSION_CURSOR = 2 ** 53

/** The statements of the operator reads, named per schema (prepared once per pooled connection). */
export class OperatorStatements {
  /** `s`: the quoted schema; `tag`: its short tag for statement names (see `PostgresStore`). */
  constructor(
    private readonly s: string,
    private readonly tag: string,
  ) {}

  /** `Store.listLiveSessions`: the user's range of scanauth_sessions_by_user above `now`, newest first. */
  async liveSessions(pool: Pool, query: LiveSessionQuery): Promise<SessionRecord[]> {
    const { rows } = await pool.query<SessionRow>({
      name: `scanauth_${this.tag}_live_sessions`,
      text: `SELECT ${sessionColumns('t')} FROM ${this.s}.scanauth_sessions t
        WHERE t.user_id = $1 AND t.expires_at > $2::double precision AND t.id < $3::bigint
        ORDER BY t.id DESC LIMIT $4`,
      values: [query.userId, query.now, query.beforeId ?? NO_SESSION_CURSOR, query.limit],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map(toSession)
  }

  /** `Store.listUsers`: one range of the primary key. */
  async users(pool: Pool, query: UserListQuery): Promise<UserRecord[]> {
    const { rows } = await pool.query<UserRow>({
      name: `scanauth_${this.tag}_users`,
      text: `SELECT ${userColumns('u')} FROM ${this.s}.scanauth_users u WHERE u.id > $1::bigint ORDER BY u.id LIMIT $2`,
      values: [Math.floor(query.afterId ?? 0), query.limit],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map((r) => ({ id: r[0], openid: r[1], createdAt: r[2], lastSeenAt: r[3], hasClaimedFree: r[4], version: r[5] }))
  }

  /**
   * `Store.listOrders`: one select on the index that fits the filters given, the range from its one
   * lower bound ({@link lowerBound}) to `createdBefore`. Bounds left out are bound anyway
   * (`-Infinity`, `Infinity`), so each set of filters is one named statement per kind of lower bound.
   */
  async orders(pool: Pool, query: OrderListQuery): Promise<OrderRecord[]> {
    const { userId, status } = query
    const kind: OrderListingKind = userId !== undefined ? (status !== undefined ? 'user_status' : 'user') : status !== undefined ? 'status' : 'all'
    const filters = kind === 'user_status' ? [userId, status] : kind === 'user' ? [userId] : kind === 'status' ? [status] : []
    const from = lowerBound(query)
    const { rows } = await pool.query<OrderRow>({
      name: `scanauth_${this.tag}_orders_list_${kind}_${from.inclusive ? 'from' : 'after'}`,
      text: `SELECT ${ORDER_COLUMNS} FROM ${this.s}.scanauth_orders
        WHERE ${ORDER_FILTERS[kind]}(created_at, out_trade_no) ${from.inclusive ? '>=' : '>'} ($1::double precision, $2::text)
          AND created_at < $3::double precision
        ORDER BY created_at, out_trade_no
        LIMIT $4`,
      values: [from.createdAt, from.outTradeNo, query.createdBefore ?? Infinity, query.limit, ...filters],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map(toOrder)
  }
}

/**
 * `Store.schemaState` of the store's schema: whether it exists, and its version (0 without the
 * version table). Two statements at most, neither takes a lock nor needs `migrate()` first.
 */
export async function readSchemaState(pool: Pool, schema: string): Promise<SchemaState> {
  const table = `${quoteIdentifier(schema)}.${VERSION_TABLE}`
  const { rows } = await pool.query<{ exists: boolean; migrated: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists, to_regclass($2) IS NOT NULL AS migrated`,
    [schema, table],
  )
  const exists = rows[0]?.exists === true
  let version = 0
  if (rows[0]?.migrated === true) {
    const found = await pool.query<{ v: number }>(`SELECT COALESCE(MAX(version), 0)::integer AS v FROM ${table}`)
    version = found.rows[0]?.v ?? 0
  }
  const pending = MIGRATIONS.filter((m) => m.version > version).map((m) => ({ version: m.version, name: m.name }))
  return { version, latest: SCHEMA_VERSION, pending, exists }
}
