/**
 * Orders on SQLite: the `scanauth_orders` table (migration 6; `channel` since migration 10), its row mapping, its prepared
 * statements, and the three order methods of the Store contract that `SqliteStore` hands to, and
 * the purge of closed orders (migration 8) that `SqliteStore.purgeExpired` runs in each batch.
 *
 * An order is its own aggregate, written by nothing but `saveOrder`, so each write is a single
 * statement, atomic on its own against every connection and process (it takes the file's write
 * lock for its own autocommit transaction, waiting up to busy_timeout): an insert is
 * `INSERT … ON CONFLICT DO NOTHING`, an update is `UPDATE … WHERE version = expected`, and the
 * answer is whether the statement changed a row. No read-then-write, so no transaction is needed
 * to make the expectation and the write one step.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { OrderChannel, OrderRecord } from '@scanauth/core'
import type { OpenOrderQuery, OrderWrite } from '@scanauth/core/store'
import { SqliteStoreError } from './errors'

/**
 * Order columns, in the order of {@link OrderRow}. The column of migration 10 comes after
 * `version`, as the table has it, so the positions of the others stay those of migration 6.
 */
export const ORDER_COLUMNS = `out_trade_no, user_id, plan_id, description, amount_fen, grant_type, grant_days, grant_points, scene_str,
  status, created_at, expires_at, updated_at, paid_at, transaction_id, authorization_id, refunded_fen, refunds, version, channel`

const CHANNELS: ReadonlySet<string> = new Set<OrderChannel>(['native', 'jsapi'])

/** An order row in raw mode (see `rows.ts` for why raw). */
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
  refunds: string,
  version: number,
  channel: OrderChannel,
]

/** The record of an order row: the grant rebuilt from its columns, the refunds parsed from JSON. */
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
    refunds: JSON.parse(r[17]) as OrderRecord['refunds'],
    version: r[18],
  }
}

/** Named parameters of the order insert and update (`expectedVersion` is read by the update only). */
export interface OrderParams {
  outTradeNo: string
  userId: number
  planId: string
  description: string
  amountFen: number
  grantType: string
  grantDays: number | null
  grantPoints: number | null
  sceneStr: string | null
  channel: string
  status: string
  createdAt: number
  expiresAt: number
  updatedAt: number
  paidAt: number | null
  transactionId: string | null
  authorizationId: number | null
  refundedFen: number
  refunds: string
  version: number
  expectedVersion: number
}

/**
 * An order as statement parameters. The refunds are copied field by field before they are
 * serialized, so the JSON holds exactly the four fields of a refund in a fixed order, whatever
 * else the caller's objects carry.
 */
export function orderParams(o: OrderRecord, expectedVersion: number): OrderParams {
  const grant = o.grant
  if (grant.type !== 'time' && grant.type !== 'points') {
    throw new SqliteStoreError('invalid_change_set', `order ${o.outTradeNo} has a grant of unknown type ${String((grant as { type: unknown }).type)}`)
  }
  // The column's CHECK would refuse it too, but as a constraint error that names no order.
  if (!CHANNELS.has(o.channel)) {
    throw new SqliteStoreError('invalid_change_set', `order ${o.outTradeNo} has a channel of unknown value ${JSON.stringify(o.channel)}`)
  }
  const refunds = o.refunds.map((r) => ({ outRefundNo: r.outRefundNo, refundId: r.refundId, amountFen: r.amountFen, at: r.at }))
  return {
    outTradeNo: o.outTradeNo,
    userId: o.userId,
    planId: o.planId,
    description: o.description,
    amountFen: o.amountFen,
    grantType: grant.type,
    grantDays: grant.type === 'time' ? grant.days : null,
    grantPoints: grant.type === 'points' ? grant.points : null,
    sceneStr: o.sceneStr,
    channel: o.channel,
    status: o.status,
    createdAt: o.createdAt,
    expiresAt: o.expiresAt,
    updatedAt: o.updatedAt,
    paidAt: o.paidAt,
    transactionId: o.transactionId,
    authorizationId: o.authorizationId,
    refundedFen: o.refundedFen,
    refunds: JSON.stringify(refunds),
    version: o.version,
    expectedVersion,
  }
}

/**
 * Named parameters of a page of open orders. The cursor and the upper bound are always bound:
 * without `after` the cursor lies before every order (`-Infinity`, `''`), without
 * `createdAtOrBefore` the bound is `Infinity` (SQLite compares both as REALs with any stored
 * time), so each listing needs only one statement per index it can use.
 */
export interface OpenOrdersParams {
  userId?: number
  sceneStr?: string
  createdAtOrBefore: number
  afterCreatedAt: number
  afterOutTradeNo: string
  limit: number
}

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** The order statements of one connection (part of `Statements`, see `statements.ts`). */
export interface OrderStatements {
  /** Primary key of scanauth_orders. */
  orderByTradeNo: Statement<[string], OrderRow>
  /** Writes a new order; changes no row when the `outTradeNo` is taken. */
  insertOrder: Statement<[OrderParams]>
  /** Replaces an order by primary key; changes no row unless its version is `expectedVersion`. */
  updateOrder: Statement<[OrderParams]>
  /** Index scanauth_orders_open: open orders, every user and scene. */
  openOrders: Statement<[OpenOrdersParams], OrderRow>
  /** Index scanauth_orders_by_user: one user's open orders. */
  openOrdersOfUser: Statement<[OpenOrdersParams], OrderRow>
  /** Index scanauth_orders_by_scene: one scene's open orders. */
  openOrdersOfScene: Statement<[OpenOrdersParams], OrderRow>
  /** Index scanauth_orders_by_scene, the user matched on the scene's range. */
  openOrdersOfUserAndScene: Statement<[OpenOrdersParams], OrderRow>
  /**
   * Index scanauth_orders_closed_by_expiry (partial: closed orders only): deletes up to `limit`
   * closed orders that never took money and whose payment deadline is at or before `cutoff`.
   */
  purgeOrders: Statement<[{ cutoff: number; limit: number }]>
}

/**
 * One page of open orders, oldest first, read from `index`. Every index a page can use holds
 * `(…, status, created_at, out_trade_no)` after its equality columns, so the range after the
 * cursor is read in index order and LIMIT stops the read: no sort, however many orders the table
 * holds. The row value comparison is the cursor (exclusive); out_trade_no compares with BINARY
 * collation, byte order of UTF-8, which is the order of JavaScript's `<` for the ASCII an
 * `outTradeNo` is made of.
 *
 * The index is named (INDEXED BY) rather than left to the planner: without ANALYZE statistics,
 * given both the cursor and the upper bound it prefers scanauth_orders_open, whose range holds
 * every user's open orders, over the one user's or scene's range of the matching index.
 */
function openOrdersSql(index: string, where: string): string {
  return `SELECT ${ORDER_COLUMNS} FROM scanauth_orders INDEXED BY ${index}
    WHERE ${where}status = 'open' AND created_at <= @createdAtOrBefore
      AND (created_at, out_trade_no) > (@afterCreatedAt, @afterOutTradeNo)
    ORDER BY created_at, out_trade_no
    LIMIT @limit`
}

/** Prepares the order statements on `db` (whose schema must be current). */
export function prepareOrderStatements(db: Database.Database): OrderStatements {
  return {
    orderByTradeNo: db.prepare<[string], OrderRow>(`SELECT ${ORDER_COLUMNS} FROM scanauth_orders WHERE out_trade_no = ?`).raw(),
    insertOrder: db.prepare(`INSERT INTO scanauth_orders (${ORDER_COLUMNS})
      VALUES (@outTradeNo, @userId, @planId, @description, @amountFen, @grantType, @grantDays, @grantPoints, @sceneStr,
        @status, @createdAt, @expiresAt, @updatedAt, @paidAt, @transactionId, @authorizationId, @refundedFen, @refunds, @version, @channel)
      ON CONFLICT (out_trade_no) DO NOTHING`),
    // Every column but the key is written: the order is stored exactly as given, and an order's
    // indexed columns (status above all) do change, so there is nothing to gain from the
    // unchanged-index-columns trick the commit statements use.
    updateOrder: db.prepare(`UPDATE scanauth_orders SET
      user_id = @userId, plan_id = @planId, description = @description, amount_fen = @amountFen,
      grant_type = @grantType, grant_days = @grantDays, grant_points = @grantPoints, scene_str = @sceneStr, status = @status,
      created_at = @createdAt, expires_at = @expiresAt, updated_at = @updatedAt, paid_at = @paidAt,
      transaction_id = @transactionId, authorization_id = @authorizationId, refunded_fen = @refundedFen,
      refunds = @refunds, version = @version, channel = @channel
      WHERE out_trade_no = @outTradeNo AND version = @expectedVersion`),
    openOrders: db.prepare<[OpenOrdersParams], OrderRow>(openOrdersSql('scanauth_orders_open', '')).raw(),
    openOrdersOfUser: db.prepare<[OpenOrdersParams], OrderRow>(openOrdersSql('scanauth_orders_by_user', 'user_id = @userId AND ')).raw(),
    openOrdersOfScene: db.prepare<[OpenOrdersParams], OrderRow>(openOrdersSql('scanauth_orders_by_scene', 'scene_str = @sceneStr AND ')).raw(),
    // Both equalities: the scene's range, the user matched on it. A scene is opened for one
    // purchase at a time, so its range is the short one (a user may have bought for years).
    openOrdersOfUserAndScene: db
      .prepare<[OpenOrdersParams], OrderRow>(openOrdersSql('scanauth_orders_by_scene', 'scene_str = @sceneStr AND user_id = @userId AND '))
      .raw(),
    // Core's orderNeededUntil (docs/behaviour.md, B-order-purge) as a WHERE, as the session and
    // counter purges write `expires_at <= @cutoff` for theirs: a closed order with no payment time
    // and no refund is needed until its expires_at; any other order is kept for good. The range
    // of the partial index is read oldest deadline first, and rows that record money are passed
    // over (the contract suite checks that they stay). Named (INDEXED BY), as the listings are:
    // without ANALYZE statistics the planner may prefer the equality on status of
    // scanauth_orders_open and sort. Runs inside the purge batch's transaction.
    purgeOrders: db.prepare(`DELETE FROM scanauth_orders WHERE out_trade_no IN
      (SELECT out_trade_no FROM scanauth_orders INDEXED BY scanauth_orders_closed_by_expiry
        WHERE status = 'closed' AND expires_at <= @cutoff AND paid_at IS NULL AND refunded_fen = 0
        ORDER BY expires_at LIMIT @limit)`),
  }
}

/** `Store.loadOrder`: one select by primary key. */
export function loadOrder(s: OrderStatements, outTradeNo: string): OrderRecord | null {
  const row = s.orderByTradeNo.get(outTradeNo)
  return row === undefined ? null : toOrder(row)
}

/** `Store.saveOrder`: one statement; true when it changed a row, false when the expectation failed. */
export function saveOrder(s: OrderStatements, write: OrderWrite): boolean {
  if (write.op === 'insert') return s.insertOrder.run(orderParams(write.order, write.order.version)).changes === 1
  return s.updateOrder.run(orderParams(write.order, write.expectedVersion)).changes === 1
}

/** `Store.listOpenOrders`: one select on the index that fits the filters given. */
export function listOpenOrders(s: OrderStatements, query: OpenOrderQuery): OrderRecord[] {
  const { userId, sceneStr } = query
  let statement = s.openOrders
  if (userId !== undefined && sceneStr !== undefined) statement = s.openOrdersOfUserAndScene
  else if (userId !== undefined) statement = s.openOrdersOfUser
  else if (sceneStr !== undefined) statement = s.openOrdersOfScene
  // better-sqlite3 binds only the named parameters a statement has and ignores other keys, so the
  // filters left out (undefined here) go along unused.
  return statement
    .all({
      userId,
      sceneStr,
      createdAtOrBefore: query.createdAtOrBefore ?? Infinity,
      afterCreatedAt: query.after?.createdAt ?? -Infinity,
      afterOutTradeNo: query.after?.outTradeNo ?? '',
      limit: query.limit,
    })
    .map(toOrder)
}
