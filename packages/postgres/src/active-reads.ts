/**
 * The reminders' read on PostgreSQL (`Store.listActiveAuthorizations`; core's `reminder-reads.ts`),
 * which `PostgresStore` hands to: one statement per type, each on a partial index of migration 7
 * that holds only the `active` authorizations of that type. `test/active-reads.test.ts` checks
 * both plans.
 *
 * - Time: scanauth_authorizations_active_time `(end_at, id)`, the order of the answer. A page is one
 *   range from one row-value lower bound (the cursor, or the window's start; an index condition, so
 *   the scan starts where the page does, ties included) to `endBefore`, which LIMIT stops.
 * - Points: scanauth_authorizations_active_points `(remaining_points, id)`. The condition is a range
 *   of remaining_points, the order is by id: the inner select reads the ids of that range (the low
 *   ones only, from the index), keeps those after the cursor and sorts them, the first `limit`; the
 *   outer one reads those rows by primary key, `limit` probes.
 *
 * One statement each, so a page is one snapshot: every commit before it whole, none after it.
 *
 * @module
 */
import type { Pool } from 'pg'
import type { AuthorizationRecord } from '@scanauth/core'
import type { ActiveAuthorizationQuery } from '@scanauth/core/store'
import { authorizationColumns, NUMBERS, toAuthorization, type AuthorizationRow } from './rows'

type TimeQuery = Extract<ActiveAuthorizationQuery, { type: 'time' }>

/**
 * The one bound a page of time authorizations starts after, as a row value: the cursor, or
 * `(endFrom, 0)` (every id is above 0: so from `endFrom` on, inclusive), whichever is later. One
 * row-value bound is what makes the index range start where the page does: beside a second lower
 * bound (`end_at >= $n`), the planner may start the range at that one and filter the cursor.
 */
export function timeLowerBound(query: TimeQuery): { endAt: number; id: number } {
  const { after, endFrom } = query
  if (after !== undefined && !(after.endAt < endFrom)) return { endAt: after.endAt, id: Math.floor(after.id) }
  return { endAt: endFrom, id: 0 }
}

/**
 * `remaining_points < pointsBelow` as a bigint bound: `remaining_points` is an integer, so it is
 * below `x` exactly when it is below `ceil(x)`; comparing a bigint column with a bigint keeps the
 * index usable (a double would not). Null when nothing can be below it.
 */
export function pointsBound(pointsBelow: number): number | null {
  if (Number.isNaN(pointsBelow) || pointsBelow <= 1) return null
  return Math.min(Math.ceil(pointsBelow), Number.MAX_SAFE_INTEGER)
}

/** The statements of the reminders' read, named per schema (prepared once per pooled connection). */
export class ActiveStatements {
  /** `s`: the quoted schema; `tag`: its short tag for statement names (see `PostgresStore`). */
  constructor(
    private readonly s: string,
    private readonly tag: string,
  ) {}

  /** `Store.listActiveAuthorizations`: one select on the partial index of the query's type. */
  async list(pool: Pool, query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    const limit = Math.floor(query.limit)
    if (!(limit >= 1)) return []
    if (query.type === 'time') {
      const after = timeLowerBound(query)
      const { rows } = await pool.query<AuthorizationRow>({
        name: `scanauth_${this.tag}_active_time`,
        text: `SELECT ${authorizationColumns('a')} FROM ${this.s}.scanauth_authorizations a
          WHERE a.status = 'active' AND a.type = 'time'
            AND (a.end_at, a.id) > ($1::double precision, $2::bigint) AND a.end_at < $3::double precision
          ORDER BY a.end_at, a.id
          LIMIT $4`,
        values: [after.endAt, after.id, query.endBefore, limit],
        rowMode: 'array',
        types: NUMBERS,
      })
      return rows.map(toAuthorization)
    }
    const below = pointsBound(query.pointsBelow)
    if (below === null) return []
    const { rows } = await pool.query<AuthorizationRow>({
      name: `scanauth_${this.tag}_active_points`,
      // OFFSET 0 keeps the low range a subquery of its own (no qual is pushed into it, and it is not
      // pulled up into the outer select), so it is planned alone: the partial index's range. Planned
      // with the outer ORDER BY id LIMIT, the planner may rather walk the primary key in id order and
      // filter every authorization after the cursor, retired ones included, until `limit` match.
      // `= ANY (ARRAY(...))` makes the page's rows `limit` probes of the primary key, where a join
      // could walk the primary key from its start to the last id of the page.
      text: `SELECT ${authorizationColumns('a')} FROM ${this.s}.scanauth_authorizations a
        WHERE a.id = ANY (ARRAY(
          SELECT low.id FROM (
            SELECT p.id FROM ${this.s}.scanauth_authorizations p
            WHERE p.status = 'active' AND p.type = 'points' AND p.remaining_points > 0 AND p.remaining_points < $1::bigint
            OFFSET 0) low
          WHERE low.id > $2::bigint
          ORDER BY low.id
          LIMIT $3))
        ORDER BY a.id`,
      values: [below, Math.floor(query.afterId ?? 0), limit],
      rowMode: 'array',
      types: NUMBERS,
    })
    return rows.map(toAuthorization)
  }
}
