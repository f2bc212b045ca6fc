/**
 * The one statement of a load. `Store.load` answers in one round trip: every part the query asks
 * for is a scalar subquery returning its record as a JSON array (or null), all in one SELECT of one
 * row. Parts not asked for are left out of the statement, so a pending poll (`{ sceneStr }` alone)
 * is a single index lookup on `scanauth_scenes_scene_str_key`, and a confirm link's scene
 * (`{ confirmTicketHash }`, B-confirm-2) one on `scanauth_scenes_by_confirm_ticket_hash`. There are
 * few combinations, so each gets a named prepared statement (parsed and planned once per pooled
 * connection).
 *
 * @module
 */
import type { LoadQuery } from '@scanauth/core/store'
import { authorizationColumns, idempotencyColumns, sceneColumns, sessionColumns, userColumns } from './rows'

/** A load as node-postgres runs it. */
export interface LoadStatement {
  /** The prepared statement's name, unique per schema and combination of parts. */
  name: string
  /** The SQL text. */
  text: string
  /** The parameters, one per part asked for. */
  values: unknown[]
  /** The result columns, in order: which part each one is. */
  parts: LoadPart[]
}

/** One part of a load result. */
export type LoadPart = 'scene' | 'user' | 'session' | 'latestSession' | 'idempotency' | 'authorization'

/**
 * The live authorizations of user `u.id` as one JSON array of arrays, by created_at then id: the
 * active ones and the head of the queue (index scanauth_authorizations_by_user: an equality range
 * for the active ones, the first entry of the pending range for the head), or every pending one.
 */
function liveAuthorizations(s: string, wholeQueue: boolean): string {
  const table = `${s}.scanauth_authorizations`
  const pending = wholeQueue
    ? `SELECT * FROM ${table} WHERE user_id = u.id AND status = 'pending'`
    : `(SELECT * FROM ${table} WHERE user_id = u.id AND status = 'pending' ORDER BY created_at, id LIMIT 1)`
  return `(SELECT COALESCE(json_agg(json_build_array(${authorizationColumns('a')}) ORDER BY a.created_at, a.id), '[]'::json)
    FROM (SELECT * FROM ${table} WHERE user_id = u.id AND status = 'active' UNION ALL ${pending}) a)`
}

/** Builds (and caches, per store) the load statements of one schema. */
export class LoadStatements {
  private readonly texts = new Map<number, { name: string; text: string; parts: LoadPart[] }>()

  /**
   * @param s The quoted schema name.
   * @param tag A short tag of the schema, unique among the stores sharing a pool, for statement names.
   */
  constructor(
    private readonly s: string,
    private readonly tag: string,
  ) {}

  /** The statement that answers `query`, or null when it asks for nothing. */
  statementFor(query: LoadQuery): LoadStatement | null {
    const ofSession = query.userOfSession === true && query.sessionToken !== undefined
    const userKey = query.userId !== undefined ? 'id' : query.openid !== undefined ? 'openid' : ofSession ? 'session' : null
    // The scene by its confirm ticket or by sceneStr, never both: the ticket first, as in MemoryStore.
    const byTicket = query.confirmTicketHash !== undefined
    const mask =
      (query.sceneStr !== undefined && !byTicket ? 1 : 0) |
      (userKey === 'id' ? 2 : 0) |
      (userKey === 'openid' ? 4 : 0) |
      (userKey !== null && query.wholeQueue === true ? 8 : 0) |
      (query.sessionToken !== undefined ? 16 : 0) |
      (query.latestSessionOfScene !== undefined ? 32 : 0) |
      (query.idempotencyKey !== undefined ? 64 : 0) |
      (query.authorizationId !== undefined ? 128 : 0) |
      (userKey === 'session' ? 256 : 0) |
      (byTicket ? 512 : 0)
    if (mask === 0) return null
    let built = this.texts.get(mask)
    if (built === undefined) {
      built = this.build(mask)
      this.texts.set(mask, built)
    }
    const values: unknown[] = []
    if (mask & 1) values.push(query.sceneStr)
    if (mask & 512) values.push(query.confirmTicketHash)
    if (userKey !== null) values.push(userKey === 'id' ? query.userId : userKey === 'openid' ? query.openid : query.sessionToken)
    if (mask & 16) values.push(query.sessionToken)
    if (mask & 32) values.push(query.latestSessionOfScene)
    if (mask & 64) values.push(query.idempotencyKey)
    if (mask & 128) values.push(query.authorizationId)
    return { ...built, values }
  }

  private build(mask: number): { name: string; text: string; parts: LoadPart[] } {
    const s = this.s
    const columns: string[] = []
    const parts: LoadPart[] = []
    const add = (part: LoadPart, sql: string) => {
      parts.push(part)
      columns.push(`(${sql}) AS "${part}"`)
    }
    const next = () => `$${columns.length + 1}`
    if (mask & 1) add('scene', `SELECT json_build_array(${sceneColumns('x')}) FROM ${s}.scanauth_scenes x WHERE x.scene_str = ${next()}`)
    if (mask & 512) add('scene', `SELECT json_build_array(${sceneColumns('x')}) FROM ${s}.scanauth_scenes x WHERE x.confirm_ticket_hash = ${next()}`)
    if (mask & 262) {
      // The session's user (B-load-2): found through the session by its token, in the same statement.
      const where =
        mask & 2
          ? `u.id = ${next()}`
          : mask & 4
            ? `u.openid = ${next()}`
            : `u.id = (SELECT t.user_id FROM ${s}.scanauth_sessions t WHERE t.token = ${next()})`
      add('user', `SELECT json_build_array(${userColumns('u')}, ${liveAuthorizations(s, (mask & 8) !== 0)}) FROM ${s}.scanauth_users u WHERE ${where}`)
    }
    if (mask & 16) add('session', `SELECT json_build_array(${sessionColumns('x')}) FROM ${s}.scanauth_sessions x WHERE x.token = ${next()}`)
    if (mask & 32) {
      add(
        'latestSession',
        `SELECT json_build_array(${sessionColumns('x')}) FROM ${s}.scanauth_sessions x WHERE x.scene_id = ${next()} ORDER BY x.id DESC LIMIT 1`,
      )
    }
    if (mask & 64) add('idempotency', `SELECT json_build_array(${idempotencyColumns('x')}) FROM ${s}.scanauth_idempotency x WHERE x.key = ${next()}`)
    if (mask & 128) add('authorization', `SELECT json_build_array(${authorizationColumns('x')}) FROM ${s}.scanauth_authorizations x WHERE x.id = ${next()}`)
    return { name: `scanauth_${this.tag}_load_${mask}`, text: `SELECT ${columns.join(', ')}`, parts }
  }
}
