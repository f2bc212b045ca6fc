/**
 * The operator reads on SQLite (`Store.listLiveSessions`, `listUsers`, `listOrders`; core's
 * `operator-reads.ts`): their prepared statements, each one indexed range read in the order the
 * contract asks for, and the functions `SqliteStore` hands to. `test/query-plans.test.ts` checks
 * every plan.
 *
 * - A user's live sessions: scanauth_sessions_by_user `(user_id, expires_at)`, the user's range
 *   above `now`, sorted by id in memory: the sort costs the user's live sessions, never the table.
 * - Users: the primary key, a range after the cursor.
 * - Orders: one index per set of filters, each ending in `(created_at, out_trade_no)` so the range
 *   after the cursor is read in order and LIMIT stops it (migration 9 adds the two that were
 *   missing: all orders, and one user's orders whatever their status).
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { OrderRecord, SessionRecord, UserRecord } from '@scanauth/core'
import type { LiveSessionQuery, OrderListQuery, UserListQuery } from '@scanauth/core/store'
import { ORDER_COLUMNS, toOrder, type OrderRow } from './orders'
import { SESSION_COLUMNS, toSession, type SessionRow } from './rows'

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** A user row in raw mode: id, openid, created_at, last_seen_at, has_claimed_free, version. */
type UserRow = [id: number, openid: string, createdAt: number, lastSeenAt: number, hasClaimedFree: number, version: number]

/**
 * Named parameters of a page of orders: the filters, the one lower bound of the range (the cursor,
 * or `createdFrom` when that is later: see {@link lowerBound}) and the upper one. Bounds left out
 * are bound anyway (`-Infinity`, `Infinity`; SQLite compares them as REALs with any stored time),
 * so that each set of filters is one statement per kind of lower bound.
 */
interface OrderPageParams {
  userId?: number
  status?: string
  fromCreatedAt: number
  fromOutTradeNo: string
  createdBefore: number
  limit: number
}

/** The filters of a listing of orders, and so its index. */
type OrderFilters = 'all' | 'status' | 'user' | 'userStatus'

/**
 * The one lower bound of a page of orders, as a row value: after the cursor (exclusive), or from
 * `(createdFrom, '')` (inclusive: every outTradeNo is `>= ''`), whichever is later; with neither,
 * from `(-Infinity, '')`. One row-value bound is what makes the index range start where the page
 * does: given a second lower bound (`created_at >= ?` beside the cursor), the planner bounds the
 * range by that one and filters the cursor, so that page n would read n pages.
 */
export function lowerBound(query: Pick<OrderListQuery, 'after' | 'createdFrom'>): { inclusive: boolean; createdAt: number; outTradeNo: string } {
  const { after, createdFrom } = query
  if (after !== undefined && (createdFrom === undefined || !(after.createdAt < createdFrom))) {
    return { inclusive: false, createdAt: after.createdAt, outTradeNo: after.outTradeNo }
  }
  return { inclusive: true, createdAt: createdFrom ?? -Infinity, outTradeNo: '' }
}

/** The statements of the operator reads (part of `Statements`, see `statements.ts`). */
export interface OperatorStatements {
  /** Index scanauth_sessions_by_user: the user's sessions live at `now`, below `beforeId`, newest first. */
  liveSessionsOfUser: Statement<[{ userId: number; now: number; beforeId: number; limit: number }], SessionRow>
  /** Primary key: users after `afterId`, by id. */
  usersAfter: Statement<[{ afterId: number; limit: number }], UserRow>
  /** Index scanauth_orders_by_time: every order, after the cursor / from the bound. */
  ordersAfter: Statement<[OrderPageParams], OrderRow>
  ordersFrom: Statement<[OrderPageParams], OrderRow>
  /** Index scanauth_orders_open `(status, created_at, out_trade_no)`: the orders of one status. */
  ordersOfStatusAfter: Statement<[OrderPageParams], OrderRow>
  ordersOfStatusFrom: Statement<[OrderPageParams], OrderRow>
  /** Index scanauth_orders_by_user_time: one user's orders. */
  ordersOfUserAfter: Statement<[OrderPageParams], OrderRow>
  ordersOfUserFrom: Statement<[OrderPageParams], OrderRow>
  /** Index scanauth_orders_by_user `(user_id, status, created_at, out_trade_no)`: one user's orders of one status. */
  ordersOfUserAndStatusAfter: Statement<[OrderPageParams], OrderRow>
  ordersOfUserAndStatusFrom: Statement<[OrderPageParams], OrderRow>
}

/** The index and the equalities of each set of filters. */
const ORDER_LISTINGS: Record<OrderFilters, { index: string; where: string }> = {
  all: { index: 'scanauth_orders_by_time', where: '' },
  status: { index: 'scanauth_orders_open', where: 'status = @status AND ' },
  user: { index: 'scanauth_orders_by_user_time', where: 'user_id = @userId AND ' },
  userStatus: { index: 'scanauth_orders_by_user', where: 'user_id = @userId AND status = @status AND ' },
}

/**
 * A page of orders for `filters` (the index named with INDEXED BY: without ANALYZE statistics the
 * planner may prefer another index's equality and sort), from its one lower bound, exclusive (`>`,
 * a cursor) or inclusive (`>=`, `createdFrom`).
 */
function orderPageSql(filters: OrderFilters, op: '>' | '>='): string {
  const { index, where } = ORDER_LISTINGS[filters]
  return `SELECT ${ORDER_COLUMNS} FROM scanauth_orders INDEXED BY ${index}
    WHERE ${where}(created_at, out_trade_no) ${op} (@fromCreatedAt, @fromOutTradeNo) AND created_at < @createdBefore
    ORDER BY created_at, out_trade_no
    LIMIT @limit`
}

/** Prepares the statements of the operator reads on `db` (whose schema must be current). */
export function prepareOperatorStatements(db: Database.Database): OperatorStatements {
  return {
    liveSessionsOfUser: db
      .prepare<[{ userId: number; now: number; beforeId: number; limit: number }], SessionRow>(
        // Named: the planner could otherwise walk the primary key down from `beforeId`, every user's sessions.
        `SELECT ${SESSION_COLUMNS} FROM scanauth_sessions INDEXED BY scanauth_sessions_by_user
          WHERE user_id = @userId AND expires_at > @now AND id < @beforeId
          ORDER BY id DESC LIMIT @limit`,
      )
      .raw(),
    usersAfter: db
      .prepare<[{ afterId: number; limit: number }], UserRow>(
        `SELECT id, openid, created_at, last_seen_at, has_claimed_free, version FROM scanauth_users WHERE id > @afterId ORDER BY id LIMIT @limit`,
      )
      .raw(),
    ordersAfter: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('all', '>')).raw(),
    ordersFrom: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('all', '>=')).raw(),
    ordersOfStatusAfter: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('status', '>')).raw(),
    ordersOfStatusFrom: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('status', '>=')).raw(),
    ordersOfUserAfter: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('user', '>')).raw(),
    ordersOfUserFrom: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('user', '>=')).raw(),
    ordersOfUserAndStatusAfter: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('userStatus', '>')).raw(),
    ordersOfUserAndStatusFrom: db.prepare<[OrderPageParams], OrderRow>(orderPageSql('userStatus', '>=')).raw(),
  }
}

/** `Store.listLiveSessions`: one select on the user's range of scanauth_sessions_by_user. */
export function listLiveSessions(s: OperatorStatements, query: LiveSessionQuery): SessionRecord[] {
  return s.liveSessionsOfUser
    .all({ userId: query.userId, now: query.now, beforeId: query.beforeId ?? Infinity, limit: query.limit })
    .map(toSession)
}

/** `Store.listUsers`: one range of the primary key. */
export function listUsers(s: OperatorStatements, query: UserListQuery): UserRecord[] {
  return s.usersAfter
    .all({ afterId: query.afterId ?? 0, limit: query.limit })
    .map((r) => ({ id: r[0], openid: r[1], createdAt: r[2], lastSeenAt: r[3], hasClaimedFree: r[4] === 1, version: r[5] }))
}

/** `Store.listOrders`: one select on the index that fits the filters given, from its one lower bound. */
export function listOrders(s: OperatorStatements, query: OrderListQuery): OrderRecord[] {
  const { userId, status } = query
  const from = lowerBound(query)
  const statements = {
    all: [s.ordersAfter, s.ordersFrom],
    status: [s.ordersOfStatusAfter, s.ordersOfStatusFrom],
    user: [s.ordersOfUserAfter, s.ordersOfUserFrom],
    userStatus: [s.ordersOfUserAndStatusAfter, s.ordersOfUserAndStatusFrom],
  } as const
  const filters: OrderFilters = userId !== undefined ? (status !== undefined ? 'userStatus' : 'user') : status !== undefined ? 'status' : 'all'
  const statement = statements[filters][from.inclusive ? 1 : 0]
  // better-sqlite3 binds only the named parameters a statement has: the filters left out go along unused.
  return statement
    .all({
      userId,
      status,
      fromCreatedAt: from.createdAt,
      fromOutTradeNo: from.outTradeNo,
      createdBefore: query.createdBefore ?? Infinity,
      limit: query.limit,
    })
    .map(toOrder)
}
