// The query plan of every statement SqliteStore runs to read or to find rows, from EXPLAIN QUERY
// PLAN on a current file: each is an indexed search, never a scan of one of our tables, and the
// user load never walks the user's queue (docs/behaviour.md, "Activation": only the head counts).
// The counter upsert has no query plan (an INSERT), so its bytecode is checked instead. The reminders'
// read reads only the partial indexes of active authorizations (migration 11).
import { describe, expect, it } from 'vitest'
import { prepareStatements } from '../src/statements'
import { useTempFile } from './support/fixture'

const fixture = useTempFile()

/** For the running test: the plan lines of a prepared statement of the store, by its name in `Statements`. */
function planner(): (name: string) => string[] {
  const db = fixture.openStore().database
  const statements = prepareStatements(db) as unknown as Record<string, { source: string } | undefined>
  return (name) => {
    const source = statements[name]?.source
    if (source === undefined) throw new Error(`no statement ${name}`)
    return (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...placeholders(source)) as Array<{ detail: string }>).map((r) => r.detail)
  }
}

const HEAD_OF_QUEUE = /SEARCH h USING COVERING INDEX scanauth_authorizations_by_user \(user_id=\? AND status=\?\)/
const ACTIVE = /SEARCH a USING INDEX scanauth_authorizations_by_user \(user_id=\? AND status=\?\)/

describe('query plans', () => {
  it('answers every lookup, expectation, entitlement statement and purge step from an index', () => {
    const planOf = planner()
    const expectations: Record<string, RegExp[]> = {
      sceneByStr: [/SEARCH scanauth_scenes USING INDEX scanauth_scenes_by_scene_str \(scene_str=\?\)/],
      // The partial index serves the equality: `confirm_ticket_hash = ?` implies its `IS NOT NULL`.
      sceneByConfirmTicket: [/SEARCH scanauth_scenes USING INDEX scanauth_scenes_by_confirm_ticket_hash \(confirm_ticket_hash=\?\)/],
      userById: [/SEARCH u USING INTEGER PRIMARY KEY \(rowid=\?\)/, ACTIVE, /SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\)/, HEAD_OF_QUEUE],
      userByOpenid: [/SEARCH u USING INDEX scanauth_users_by_openid \(openid=\?\)/, ACTIVE, HEAD_OF_QUEUE],
      userWithQueueById: [/SEARCH u USING INTEGER PRIMARY KEY \(rowid=\?\)/, ACTIVE],
      userWithQueueByOpenid: [/SEARCH u USING INDEX scanauth_users_by_openid \(openid=\?\)/, ACTIVE],
      authorizationById: [/SEARCH scanauth_authorizations USING INTEGER PRIMARY KEY \(rowid=\?\)/],
      sessionByToken: [/SEARCH scanauth_sessions USING INDEX scanauth_sessions_by_token \(token=\?\)/],
      latestSessionOfScene: [/SEARCH scanauth_sessions USING (COVERING )?INDEX scanauth_sessions_by_scene \(scene_id=\?\)/],
      idempotencyByKey: [/SEARCH scanauth_idempotency USING PRIMARY KEY \(key=\?\)/],
      ledgerPage: [/SEARCH scanauth_ledger USING INDEX scanauth_ledger_by_user \(user_id=\? AND id>\?\)/],
      sceneIdByStr: [/USING (COVERING )?INDEX scanauth_scenes_by_scene_str/],
      sceneVersion: [/USING INTEGER PRIMARY KEY/],
      userIdByOpenid: [/USING (COVERING )?INDEX scanauth_users_by_openid/],
      userVersion: [/USING INTEGER PRIMARY KEY/],
      idempotencyTaken: [/SEARCH scanauth_idempotency USING PRIMARY KEY \(key=\?\)/],
      endSessionByToken: [/SEARCH scanauth_sessions USING INDEX scanauth_sessions_by_token \(token=\?\)/],
      endSessionsOfUser: [/SEARCH scanauth_sessions USING INDEX scanauth_sessions_by_user \(user_id=\? AND expires_at>\?\)/],
      purgeSceneCandidates: [/SEARCH s USING (COVERING )?INDEX scanauth_scenes_by_expiry/, /SEARCH x USING (COVERING )?INDEX scanauth_sessions_by_scene/],
      purgeSessions: [/USING (COVERING )?INDEX scanauth_sessions_by_expiry/],
      deleteCounter: [/SEARCH scanauth_counters USING PRIMARY KEY \(key=\?\)/],
      purgeCounters: [/SEARCH scanauth_counters USING COVERING INDEX scanauth_counters_by_expiry \(expires_at<\?\)/, /SEARCH scanauth_counters USING PRIMARY KEY \(key=\?\)/],
      orderByTradeNo: [/SEARCH scanauth_orders USING PRIMARY KEY \(out_trade_no=\?\)/],
      updateOrder: [/SEARCH scanauth_orders USING PRIMARY KEY \(out_trade_no=\?\)/],
      openOrders: [/SEARCH scanauth_orders USING INDEX scanauth_orders_open \(status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      openOrdersOfUser: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_user \(user_id=\? AND status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      openOrdersOfScene: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_scene \(scene_str=\? AND status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      openOrdersOfUserAndScene: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_scene \(scene_str=\? AND status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      // The operator reads: the user's live range (sorted by id: the user's live sessions, never the
      // table), a range of user ids, and for orders one row-value range of the index of each set of
      // filters, the cursor or createdFrom its start (never a second bound that would leave the
      // cursor a filter), no sort.
      liveSessionsOfUser: [/SEARCH scanauth_sessions USING INDEX scanauth_sessions_by_user \(user_id=\? AND expires_at>\?\)/],
      usersAfter: [/SEARCH scanauth_users USING INTEGER PRIMARY KEY \(rowid>\?\)/],
      ordersAfter: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_time \(\(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersFrom: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_time \(\(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfStatusAfter: [/SEARCH scanauth_orders USING INDEX scanauth_orders_open \(status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfStatusFrom: [/SEARCH scanauth_orders USING INDEX scanauth_orders_open \(status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfUserAfter: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_user_time \(user_id=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfUserFrom: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_user_time \(user_id=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfUserAndStatusAfter: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_user \(user_id=\? AND status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      ordersOfUserAndStatusFrom: [/SEARCH scanauth_orders USING INDEX scanauth_orders_by_user \(user_id=\? AND status=\? AND \(created_at,out_trade_no\)>\(\?,\?\) AND created_at<\?\)/],
      // The reminders' read: the partial indexes of migration 11. Time: the rest of the cursor's
      // end_at (equality, then an id range), then the later ends up to the window's end. Points: the
      // low range from the index alone, then the page's rows by primary key.
      activeTimePage: [
        /SEARCH scanauth_authorizations USING INDEX scanauth_authorizations_active_time \(end_at=\? AND id>\?\)/,
        /SEARCH scanauth_authorizations USING INDEX scanauth_authorizations_active_time \(end_at>\? AND end_at<\?\)/,
      ],
      activePointsPage: [
        /SEARCH scanauth_authorizations USING COVERING INDEX scanauth_authorizations_active_points \(remaining_points>\? AND remaining_points<\?\)/,
        /SEARCH scanauth_authorizations USING INTEGER PRIMARY KEY \(rowid=\?\)/,
      ],
      // The partial index of closed orders, read up to the cutoff; the delete then by primary key.
      purgeOrders: [/SEARCH scanauth_orders USING INDEX scanauth_orders_closed_by_expiry \(expires_at<\?\)/, /SEARCH scanauth_orders USING PRIMARY KEY \(out_trade_no=\?\)/],
    }
    for (const [name, patterns] of Object.entries(expectations)) {
      const details = planOf(name)
      for (const pattern of patterns) expect(details.some((d) => pattern.test(d)), `${name}: ${details.join(' | ')}`).toBe(true)
      // No full scan of any of our tables.
      expect(details.filter((d) => /^SCAN (scanauth_|u\b|a\b|h\b|s\b|x\b)/.test(d)), name).toEqual([])
    }
  })

  it('scans none of our tables in any statement the store prepares, listed above or not (updates, deletes, inserts)', () => {
    const db = fixture.openStore().database
    const statements = prepareStatements(db) as unknown as Record<string, { source: string }>
    const names = Object.keys(statements)
    // Every statement the store prepares, so one added later is checked without being listed.
    expect(names.length).toBeGreaterThan(30)
    for (const name of names) {
      const source = (statements[name] as { source: string }).source
      const details = (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...placeholders(source)) as Array<{ detail: string }>).map((r) => r.detail)
      expect(details.filter((d) => /^SCAN (scanauth_|u\b|a\b|h\b|s\b|x\b)/.test(d)), `${name}: ${details.join(' | ')}`).toEqual([])
    }
  })

  it('increments a counter with one upsert that finds its row by primary key and never loops over the table', () => {
    const db = fixture.openStore().database
    const source = (prepareStatements(db) as unknown as Record<string, { source: string }>).incrementCounter?.source as string
    // An INSERT has no query plan to show: EXPLAIN QUERY PLAN answers nothing, so no scan at least.
    expect(db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...placeholders(source))).toEqual([])
    // The bytecode: the conflict is found with one probe of the primary key (NoConflict), and the
    // only loop (Rewind) is over RETURNING's own ephemeral table, never over a cursor on our tables.
    const ops = db.prepare(`EXPLAIN ${source}`).all(...placeholders(source)) as Array<{ opcode: string; p1: number; p4: unknown }>
    const tableCursors = new Set(ops.filter((o) => o.opcode === 'OpenWrite' || o.opcode === 'OpenRead').map((o) => o.p1))
    expect(ops.filter((o) => o.opcode === 'NoConflict' && tableCursors.has(o.p1))).toHaveLength(1)
    expect(ops.filter((o) => ['Rewind', 'Last', 'SeekGE', 'SeekGT', 'SeekLE', 'SeekLT'].includes(o.opcode) && tableCursors.has(o.p1))).toEqual([])
    // RETURNING count: the new value comes back from the same statement, with no read after it.
    expect(db.prepare(source).reader).toBe(true)
  })

  it('lists open orders in index order: the cursor and the bound are one range, LIMIT stops the read, nothing is sorted', () => {
    const planOf = planner()
    for (const name of ['openOrders', 'openOrdersOfUser', 'openOrdersOfScene', 'openOrdersOfUserAndScene']) {
      const details = planOf(name)
      expect(details.filter((d) => /TEMP B-TREE/.test(d)), `${name}: ${details.join(' | ')}`).toEqual([])
      expect(details, name).toHaveLength(1)
    }
  })

  it('purges closed orders oldest deadline first from their own index: nothing is sorted', () => {
    const details = planner()('purgeOrders')
    expect(details.filter((d) => /TEMP B-TREE/.test(d)), details.join(' | ')).toEqual([])
  })

  it('reads a page of active authorizations from the partial indexes alone: two seeks for time, the low range for points, sorts of at most a page', () => {
    const planOf = planner()
    const time = planOf('activeTimePage')
    // Each range is read in index order and stopped by its LIMIT; the sorts are the merge of the
    // two runs (at most `limit` rows each), never of the index.
    expect(time.filter((d) => /^SEARCH /.test(d)), time.join(' | ')).toHaveLength(2)
    expect(time.filter((d) => /^SEARCH /.test(d) && !/scanauth_authorizations_active_time/.test(d)), time.join(' | ')).toEqual([])
    expect(time.filter((d) => /TEMP B-TREE/.test(d))).toHaveLength(2)
    expect(time, time.join(' | ')).toContain('MERGE (UNION ALL)')
    const points = planOf('activePointsPage')
    // The one sort is of the low entries' ids after the cursor (the inner select), read from the
    // index without touching the table; the outer select reads `limit` rows by id, in that order.
    expect(points.filter((d) => /^SEARCH /.test(d)), points.join(' | ')).toHaveLength(2)
    expect(points.filter((d) => /TEMP B-TREE/.test(d))).toHaveLength(1)
    expect(points.join(' | ')).toMatch(/LIST SUBQUERY/)
  })

  it('loads a user without walking its queue: the head is the first entry of the pending range, in index order', () => {
    const planOf = planner()
    for (const name of ['userById', 'userByOpenid']) {
      const details = planOf(name)
      // A sort would mean reading every pending entry to find the first; in index order, LIMIT 1
      // stops at the first entry of the range.
      expect(details.filter((d) => /TEMP B-TREE/.test(d)), `${name}: ${details.join(' | ')}`).toEqual([])
      expect(details.filter((d) => HEAD_OF_QUEUE.test(d)), name).toHaveLength(1)
      // The active ones come from their own (user_id, 'active') range, never from the pending one.
      expect(details.filter((d) => ACTIVE.test(d)), name).toHaveLength(1)
    }
  })
})

/** Binds every placeholder of a statement (positional or named) to a dummy value, for EXPLAIN. */
function placeholders(sql: string): unknown[] {
  const named = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1] as string)
  if (named.length > 0) return [Object.fromEntries(named.map((n) => [n, 1]))]
  return [...sql.matchAll(/\?/g)].map(() => 1)
}
