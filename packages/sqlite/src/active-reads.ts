/**
 * The reminders' read on SQLite (`Store.listActiveAuthorizations`; core's `reminder-reads.ts`): its
 * two prepared statements, each on a partial index of migration 11 that holds only the `active`
 * authorizations of one type, and the function `SqliteStore` hands to. `test/query-plans.test.ts`
 * checks both plans.
 *
 * - Time: scanauth_authorizations_active_time `(end_at, id)`, the order of the answer. A page starts
 *   just after one bound (see {@link timeLowerBound}) and is two ranges of that index, each stopped
 *   by LIMIT: the rest of the bound's end_at (`end_at = ? AND id > ?`), then the later ends up to
 *   `endBefore` (`end_at > ? AND end_at < ?`); at most `limit` rows of each are merged. SQLite seeks
 *   a row value on an index only by its first column when the second is the rowid (`id`), so
 *   `(end_at, id) > (?, ?)` would start at the first row of the bound's end_at and filter the ones
 *   up to the cursor: a tie of many authorizations ending at one millisecond would cost a page all
 *   of them. Two ranges cost `limit` rows whatever the table, or a tie, holds.
 * - Points: scanauth_authorizations_active_points `(remaining_points, id)`. The condition is a range
 *   of remaining_points, the order is by id: the inner select reads the entries of that range (the
 *   low ones only) from the index alone, keeps those after the cursor and sorts their ids; the
 *   outer one reads those `limit` rows by primary key.
 *
 * Either runs in one statement, so a page is one snapshot of the file: every commit before it
 * whole, none after it.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import type { AuthorizationRecord } from '@scanauth/core'
import type { ActiveAuthorizationQuery } from '@scanauth/core/store'
import { AUTHORIZATION_COLUMNS, toAuthorization, type AuthorizationRow } from './rows'

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** Named parameters of a page of time authorizations: after `(afterEndAt, afterId)`, ending before `endBefore`. */
interface TimePageParams {
  afterEndAt: number
  afterId: number
  endBefore: number
  limit: number
}

/** Named parameters of a page of points authorizations. */
interface PointsPageParams {
  pointsBelow: number
  afterId: number
  limit: number
}

/** The statements of the reminders' read (part of `Statements`, see `statements.ts`). */
export interface ActiveStatements {
  /** Index scanauth_authorizations_active_time, two ranges: active time ones after `(afterEndAt, afterId)`, ending before `endBefore`, by (end_at, id). */
  activeTimePage: Statement<[TimePageParams], AuthorizationRow>
  /** Index scanauth_authorizations_active_points, then the primary key: active points ones with 0 < remaining_points < `pointsBelow`, id above `afterId`, by id. */
  activePointsPage: Statement<[PointsPageParams], AuthorizationRow>
}

/**
 * The one bound a page of time authorizations starts after: the cursor, or `(endFrom, 0)` (every id
 * is above 0: so from `endFrom` on, inclusive), whichever is later.
 */
export function timeLowerBound(query: Extract<ActiveAuthorizationQuery, { type: 'time' }>): { endAt: number; id: number } {
  const { after, endFrom } = query
  if (after !== undefined && !(after.endAt < endFrom)) return { endAt: after.endAt, id: after.id }
  return { endAt: endFrom, id: 0 }
}

/** One range of scanauth_authorizations_active_time, in its order, at most `limit` rows. */
function timeRange(where: string): string {
  return `SELECT ${AUTHORIZATION_COLUMNS} FROM scanauth_authorizations INDEXED BY scanauth_authorizations_active_time
    WHERE status = 'active' AND type = 'time' AND ${where} ORDER BY end_at, id LIMIT @limit`
}

/** Prepares the statements of the reminders' read on `db` (whose schema must be current). */
export function prepareActiveStatements(db: Database.Database): ActiveStatements {
  return {
    // Named (INDEXED BY): the planner could otherwise prefer scanauth_authorizations_by_user's status
    // equality and sort. The outer ORDER BY merges two runs of at most `limit` rows each.
    activeTimePage: db
      .prepare<[TimePageParams], AuthorizationRow>(
        `SELECT * FROM (${timeRange('end_at = @afterEndAt AND id > @afterId AND end_at < @endBefore')})
        UNION ALL
        SELECT * FROM (${timeRange('end_at > @afterEndAt AND end_at < @endBefore')})
        ORDER BY end_at, id LIMIT @limit`,
      )
      .raw(),
    activePointsPage: db
      .prepare<[PointsPageParams], AuthorizationRow>(
        `SELECT ${AUTHORIZATION_COLUMNS} FROM scanauth_authorizations WHERE id IN (
            SELECT id FROM scanauth_authorizations INDEXED BY scanauth_authorizations_active_points
            WHERE status = 'active' AND type = 'points' AND remaining_points > 0 AND remaining_points < @pointsBelow AND id > @afterId
            ORDER BY id LIMIT @limit)
          ORDER BY id`,
      )
      .raw(),
  }
}

/** `Store.listActiveAuthorizations`: one select on the partial index of the query's type. */
export function listActiveAuthorizations(s: ActiveStatements, query: ActiveAuthorizationQuery): AuthorizationRecord[] {
  if (query.type === 'time') {
    const after = timeLowerBound(query)
    return s.activeTimePage.all({ afterEndAt: after.endAt, afterId: after.id, endBefore: query.endBefore, limit: query.limit }).map(toAuthorization)
  }
  return s.activePointsPage.all({ pointsBelow: query.pointsBelow, afterId: query.afterId ?? 0, limit: query.limit }).map(toAuthorization)
}
