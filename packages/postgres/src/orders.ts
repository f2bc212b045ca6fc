/**
 * Orders on PostgreSQL: the row mapping and the statements of the three order methods of the Store
 * contract (`scanauth_orders`, migration 2; `channel` since migration 6), which `PostgresStore` hands to.
 *
 * An order is its own aggregate, written by nothing but `saveOrder`, so every method is one
 * statement, atomic on its own against every connection and process: an insert is
 * `INSERT … ON CONFLICT DO NOTHING` (a concurrent insert of the same key waits for the first and
 * then does nothing), an update is `UPDATE … WHERE version = expected` (under READ COMMITTED a
 * concurrent update of the row makes it wait, then re-check the version on the new row, so of
 * several updates at one version exactly one matches). The answer is the statement's row count.
 *
 * @module
 */
import type { Pool } from 'pg'
import type { OrderChannel, OrderRecord } from '@scanauth/core'
import type { OpenOrderQuery, OrderWrite } from '@scanauth/core/store'
import { PostgresStoreError } from './errors'
import { NUMBERS } from './rows'

/**
 * Order columns, in the order of {@link OrderRow} and of the insert's parameters $1 … $20. The
 * column of migration 6 comes after `version`, as the table has it, so the others keep their place.
 */
export const ORDER_COLUMNS = `out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points, scene_str,
  status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version, channel`

const CHANNELS: ReadonlySet<string> = new Set<OrderChannel>(['native', 'jsapi'])

/** An order row in array mode (bigints read as numbers, jsonb parsed by node-postgres). */
export type OrderRow = [
  outTradeNo: string,
  userId: number,
  planId: string,
  description: string,
  amountFen: number,
  grantType: OrderRecord['grant']['type'],
  grantDays: number | null,
  grantPoints: number | null,
  sceneStr: string | null,
  status: OrderRecord['status'],
  createdAt: number,
  expiresAt: number,
  updatedAt: number,
  paidAt: number | null,
  transactionId: string | null,
  authorizationId: number | null,
  refundedFen: number,
  refunds: OrderRecord['refunds'],
  version: number,
  channel: OrderChannel,
]

/** The record of an order row: the grant rebuilt from its columns. */
export function toOrder(r: OrderRow): OrderRecord {
  return {
    outTradeNo: r[0],
    userId: r[1],
    planId: r[2],
    description: r[3],
    amountFen: r[4],
    grant: r[5] === 'time' ? { type: 'time', days: r[6] as number } : { type: 'points', points: r[7] as number },
    sceneStr: r[8],
    channel: r[19],
    status: r[9],
    createdAt: r[10],
    expiresAt: r[11],
    updatedAt: r[12],
    paidAt: r[13],
    transactionId: r[14],
    authorizationId: r[15],
    refundedFen: r[16],
    // jsonb keeps an object's keys in its own order; the record's refunds are rebuilt field by
    // field so that they read the same as the ones written, whatever that order.
    refunds: r[17].map((f) => ({ outRefundNo: f.outRefundNo, refundId: f.refundId, amountFen: f.amountFen, at: f.at })),
    version: r[18],
  }
}

/**
 * An order as the parameters $1 … $20 of the insert (the update adds the expected version as
 * $21). The refunds are copied field by field before they are serialized, so the jsonb holds
 * exactly the four fields of a refund, whatever else the caller's objects carry.
 */
export function orderValues(o: OrderRecord): unknown[] {
  const grant = o.grant
  if (grant.type !== 'time' && grant.type !== 'points') {
    throw new PostgresStoreError('invalid_change_set', `order ${o.outTradeNo} has a grant of unknown type ${String((grant as { type: unknown }).type)}`)
  }
  // The column's CHECK would refuse it too, but as a constraint error that names no order.
  if (!CHANNELS.has(o.channel)) {
    throw new PostgresStoreError('invalid_change_set', `order ${o.outTradeNo} has a channel of unknown value ${JSON.stringify(o.channel)}`)
  }
  const refunds = o.refunds.map((r) => ({ outRefundNo: r.outRefundNo, refundId: r.refundId, amountFen: r.amountFen, at: r.at }))
  return [
    o.outTradeNo,
    o.userId,
    o.planId,
    o.description,
    o.amountFen,
    grant.type,
    grant.type === 'time' ? grant.days : null,
    grant.type === 'points' ? grant.points : null,
    o.sceneStr,
    o.status,
    o.createdAt,
    o.expiresAt,
    o.updatedAt,
    o.paidAt,
    o.transactionId,
    o.authorizationId,
    o.refundedFen,
    JSON.stringify(refunds),
    o.version,
    o.channel,
  ]
}

/** Which filters a listing has, and so which statement (and index) serves it. */
type ListingKind = 'all' | 'user' | 'scene' | 'user_scene'

/** The filter each listing adds before the common part (its parameters follow the common four). */
const LISTING_FILTERS: Record<ListingKind, string> = {
  all: '',
  user: 'user_id = $5 AND ',
  scene: 'scene_str = $5 AND ',
  // Both: the scene's range is the short one (a scene is opened for one purchase at a time).
  user_scene: 'scene_str = $5 AND user_id = $6 AND ',
}

/**
 * The statements of the order methods, named per schema (prepared once per pooled connection, as
 * every statement of the store).
 */
export class OrderStatements {
  /** `s`: the quoted schema; `tag`: its short tag for statement names (see `PostgresStore`). */
  constructor(
    private readonly s: string,
    private readonly tag: string,
  ) {}

  /** `Store.loadOrder`: one select by primary key. */
  async load(pool: Pool, outTradeNo: string): Promise<OrderRecord | null> {
    const { rows } = await pool.query<OrderRow>({
      name: `scanauth_${this.tag}_order_load`,
      text: `SELECT ${ORDER_COLUMNS} FROM ${this.s}.scanauth_orders WHERE out_trade_no = $1`,
      values: [outTradeNo],
      rowMode: 'array',
      types: NUMBERS,
    })
    const row = rows[0]
    return row === undefined ? null : toOrder(row)
  }

  /** `Store.saveOrder`: one statement; true when it wrote a row, false when the expectation failed. */
  async save(pool: Pool, write: OrderWrite): Promise<boolean> {
    const values = orderValues(write.order)
    if (write.op === 'insert') {
      const result = await pool.query({
        name: `scanauth_${this.tag}_order_insert`,
        text: `INSERT INTO ${this.s}.scanauth_orders (${ORDER_COLUMNS})
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::jsonb, $19, $20)
          ON CONFLICT (out_trade_no) DO NOTHING`,
        values,
      })
      return result.rowCount === 1
    }
    // Every column but the key is written: the order is stored exactly as given.
    const result = await pool.query({
      name: `scanauth_${this.tag}_order_update`,
      text: `UPDATE ${this.s}.scanauth_orders SET
          user_id = $2, plan_id = $3, description = $4, amount_fen = $5, grant_type = $6, grant_days = $7,
          grant_points = $8, scene_str = $9, status = $10, created_at = $11, expires_at = $12, updated_at = $13,
          paid_at = $14, transaction_id = $15, authorization_id = $16, refunded_fen = $17, refunds = $18::jsonb, version = $19,
          channel = $20
        WHERE out_trade_no = $1 AND version = $21`,
      values: [...values, write.expectedVersion],
    })
    return result.rowCount === 1
  }

  /**
   * `Store.listOpenOrders`: one select on the index that fits the filters given, its range after
   * the cursor read in index order until LIMIT, no sort. The cursor and the upper bound are always
   * bound (without `after`, `-Infinity` and `''`: before every order; without
   * `createdAtOrBefore`, `Infinity`), so each set of filters is one named statement.
   */
  async listOpen(pool: Pool, query: OpenOrderQuery): Promise<OrderRecord[]> {
    const { userId, sceneStr } = query
    const kind: ListingKind = userId !== undefined ? (sceneStr !== undefined ? 'user_scene' : 'user') : sceneStr !== undefined ? 'scene' : 'all'
    const filters = kind === 'user_scene' ? [sceneStr, userId] : kind === 'user' ? [userId] : kind === 'scene' ? [sceneStr] : []
    const { rows } = await pool.query<OrderRow>({
      name: `scanauth_${this.tag}_orders_open_${kind}`,
      text: `SELECT ${ORDER_COLUMNS} FROM ${this.s}.scanauth_orders
        WHERE ${LISTING_FILTERS[kind]}status = 'open' AND created_at <= $1::double precision
          AND (created_at, out_trade_no) > ($2::double precision, $3::text)
        ORDER BY created_at, out_trade_no
        LIMIT $4`,
      values: [query.createdAtOrBefore ?? Infinity, query.after?.createdAt ?? -Infinity, query.after?.outTradeNo ?? '', query.limit, ...filters],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map(toOrder)
  }
}
