/**
 * One batch of `PostgresStore.purgeExpired`, in two statements: a select of candidate scenes with
 * their latest session's deadline, which core's retention rule (`sceneNeededUntil`, `mayPurge`;
 * docs/behaviour.md, D-retention) sorts into kept and deleted, then one statement that deletes
 * those scenes and up to a batch of expired sessions, counters and closed orders past their
 * payment deadline (B-order-purge). Each statement is atomic on its own; no transaction spans the
 * two, so no lock is held while JavaScript decides.
 *
 * What makes that safe against commits running meanwhile:
 * - a scene is deleted only if its `version` is still the one the select read: a scan that
 *   authorized it in between (and so gave it a session) bumped the version;
 * - a session or counter is deleted only if it is expired when the DELETE reaches the row: under
 *   READ COMMITTED, PostgreSQL re-checks the DELETE's own WHERE on a row updated concurrently, so
 *   a counter restarted by `incrementCounter` a moment earlier survives;
 * - an order likewise only if it is still closed, without a payment time or a refund, when the
 *   DELETE reaches the row: one a `saveOrder` marked paid a moment earlier survives.
 *
 * @module
 */
import type { Pool } from 'pg'
import { purgeableScenes, type PurgeBatchOutcome, type PurgeSceneCursor } from '@scanauth/core/store'

/**
 * Where the scene pass of a purge has got to. Ids are bigints as node-postgres reads them: decimal
 * strings, only ever sent back.
 */
export type PurgeCursor = PurgeSceneCursor<string>

/** A scene the select offers: past its own deadline, with its latest session's deadline (null when none). */
type CandidateRow = [id: string, version: string, expiresAt: number, sessionEnd: number | null]

/** The two statements of a batch, named per schema (prepared once per pooled connection). */
export class PurgeStatements {
  constructor(
    private readonly s: string,
    private readonly tag: string,
  ) {}

  /** Runs one batch: at most `limit` scenes examined, `limit` sessions, `limit` counters and `limit` closed orders deleted. */
  async batch(pool: Pool, cutoff: number, limit: number, cursor: PurgeCursor): Promise<PurgeBatchOutcome> {
    const doomedIds: string[] = []
    const doomedVersions: string[] = []
    if (!cursor.done) {
      // Keyset pagination over scanauth_scenes_by_expiry. The select leaves out scenes whose latest
      // session is still needed, so that scenes kept for their sessions never fill a batch: however
      // many there are, the scenes behind them are reached (and a call stopped by maxBatches
      // deletes something). Core's rule then decides on what the select offers.
      const { rows } = await pool.query<CandidateRow>({
        name: `scanauth_${this.tag}_purge_candidates`,
        text: `SELECT id, version, expires_at, session_end FROM (
            SELECT s.id, s.version, s.expires_at,
              (SELECT x.expires_at FROM ${this.s}.scanauth_sessions x WHERE x.scene_id = s.id ORDER BY x.id DESC LIMIT 1) AS session_end
            FROM ${this.s}.scanauth_scenes s
            WHERE s.expires_at <= $1 AND (s.expires_at, s.id) > ($2, $3::bigint)
          ) c
          WHERE session_end IS NULL OR session_end <= $1
          ORDER BY expires_at, id
          LIMIT $4`,
        values: [cutoff, cursor.expiresAt, cursor.id, limit],
        rowMode: 'array',
      })
      const candidates = rows.map(([id, version, expiresAt, sessionEnd]) => ({ id, version, expiresAt, sessionEnd }))
      for (const scene of purgeableScenes(candidates, cutoff, limit, cursor)) {
        doomedIds.push(scene.id)
        doomedVersions.push(scene.version)
      }
    }
    // The orders' WHERE is core's orderNeededUntil, as `expires_at <= cutoff` is the sessions' and
    // the counters' rule: a closed order with no payment time and no refund is needed until its
    // expires_at, any other order for good. Its subselect reads the partial index
    // scanauth_orders_closed_by_expiry (migration 4), oldest deadline first.
    const { rows } = await pool.query<[number, number, number, number]>({
      name: `scanauth_${this.tag}_purge_delete`,
      text: `WITH gone_scenes AS (
          DELETE FROM ${this.s}.scanauth_scenes s
          USING unnest($1::bigint[], $2::bigint[]) AS d(id, version)
          WHERE s.id = d.id AND s.version = d.version
          RETURNING 1
        ), gone_sessions AS (
          DELETE FROM ${this.s}.scanauth_sessions
          WHERE expires_at <= $3 AND id IN (SELECT id FROM ${this.s}.scanauth_sessions WHERE expires_at <= $3 ORDER BY expires_at LIMIT $4)
          RETURNING 1
        ), gone_counters AS (
          DELETE FROM ${this.s}.scanauth_counters
          WHERE expires_at <= $3 AND key IN (SELECT key FROM ${this.s}.scanauth_counters WHERE expires_at <= $3 ORDER BY expires_at LIMIT $4)
          RETURNING 1
        ), gone_orders AS (
          DELETE FROM ${this.s}.scanauth_orders
          WHERE status = 'closed' AND expires_at <= $3 AND paid_at IS NULL AND refunded_fen = 0
            AND out_trade_no IN (SELECT out_trade_no FROM ${this.s}.scanauth_orders
              WHERE status = 'closed' AND expires_at <= $3 AND paid_at IS NULL AND refunded_fen = 0 ORDER BY expires_at LIMIT $4)
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM gone_scenes)::integer, (SELECT count(*) FROM gone_sessions)::integer, (SELECT count(*) FROM gone_counters)::integer,
          (SELECT count(*) FROM gone_orders)::integer`,
      values: [doomedIds, doomedVersions, cutoff, limit],
      rowMode: 'array',
    })
    const [scenes, sessions, counters, orders] = rows[0] as [number, number, number, number]
    return { scenes, sessions, counters, orders, done: cursor.done && sessions < limit && counters < limit && orders < limit }
  }
}
