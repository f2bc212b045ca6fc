/**
 * The reminders' read of `RedisStore` (`Store.listActiveAuthorizations`; core's `reminder-reads.ts`):
 * one run of a read-only script on one of the two indexes the commit script keeps of every active
 * authorization, `<p>ae` (time ones by endAt) and `<p>ap` (points ones by remainingPoints)
 * (`scripts/active-index.ts`). A page reads one range of an index and the records it names; it
 * never scans the keyspace or reads a user.
 *
 * A prefix written before these indexes existed (by a pre-release build of layout 2) lacks the
 * `ai` field of `<p>seq`: the first read there builds them, in runs of {@link BUILD_BATCH_USERS}
 * users, then answers (docs/redis.md, "Upgrading a prefix written before these indexes"). A fresh
 * prefix's first commit sets the field, so a prefix written by this release never pays it.
 *
 * @module
 */
import type { AuthorizationRecord } from '@scanauth/core'
import type { ActiveAuthorizationQuery } from '@scanauth/core/store'
import { decodeAuthorization, num } from './codec'
import { describeReply, RedisStoreError } from './errors'
import type { Keys } from './keys'
import { ACTIVE_POINTS_SCRIPT, ACTIVE_TIME_SCRIPT, BUILD_ACTIVE_INDEX_SCRIPT } from './scripts/active-index'
import { LuaScript, type ScriptClient } from './scripts/lua-script'

/** The scripts, hashed once per process and shared by every store. */
const activeTimeScript = new LuaScript(ACTIVE_TIME_SCRIPT)
const activePointsScript = new LuaScript(ACTIVE_POINTS_SCRIPT)
const buildScript = new LuaScript(BUILD_ACTIVE_INDEX_SCRIPT)

/**
 * How many user ids one run of the build script indexes: each costs a few commands of the server
 * (the user's active set, its records, a ZADD), so a run takes a few milliseconds, and other
 * commands wait no longer than that.
 */
export const BUILD_BATCH_USERS = 1000

/** A number as a score bound of ZCOUNT or ZRANGE: `+inf` and `-inf` for the infinities. */
export function scoreArg(n: number): string {
  if (n === Infinity) return '+inf'
  if (n === -Infinity) return '-inf'
  return num(n)
}

/** The reminders' read on one client and key layout; `RedisStore` delegates to it. */
export class RedisActiveIndex {
  /**
   * @param client The application's client (never reconfigured here).
   * @param keys The store's key layout.
   */
  constructor(
    private readonly client: ScriptClient,
    private readonly keys: Keys,
  ) {}

  /**
   * `Store.listActiveAuthorizations`: one script run on the index of the query's type; on a prefix
   * whose indexes were never built, a build first (once per prefix), then the read.
   *
   * @throws {@link RedisStoreError} `malformed_record` when a record is not one this store wrote.
   */
  async list(query: ActiveAuthorizationQuery): Promise<AuthorizationRecord[]> {
    const limit = Math.floor(query.limit)
    if (!(limit >= 1)) return []
    const args = this.args(query, limit)
    if (args === null) return []
    const script = query.type === 'time' ? activeTimeScript : activePointsScript
    // Built by another process meanwhile, or deleted and written again: at most a few rounds.
    for (let round = 0; round < 3; round++) {
      const reply = await script.run(this.client, [this.keys.seq], args)
      if (reply !== 'unindexed') return pairs(reply, `active-${query.type}`).map(([id, value]) => decodeAuthorization(Number(id), String(value)))
      await this.build()
    }
    throw new RedisStoreError('unexpected_reply', `the reminders' indexes of ${JSON.stringify(this.keys.prefix)} are still not built after building them`)
  }

  /**
   * Builds the reminders' indexes of a prefix written before they existed, in runs of
   * {@link BUILD_BATCH_USERS} users, until they are complete; nothing when they are (one command).
   * Safe beside commits and beside other processes building at once.
   */
  async build(): Promise<void> {
    while ((await buildScript.run(this.client, [this.keys.seq], [this.keys.prefix, String(BUILD_BATCH_USERS)])) === 1) {
      // Next run: the script moved its cursor.
    }
  }

  /** The script's ARGV for `query`, or null when no stored authorization can match. */
  private args(query: ActiveAuthorizationQuery, limit: number): string[] | null {
    if (query.type === 'time') {
      const { endFrom, endBefore, after } = query
      if (Number.isNaN(endFrom) || Number.isNaN(endBefore) || !(endFrom < endBefore)) return null
      const cursor = after === undefined || Number.isNaN(after.endAt) ? ['', '0'] : [scoreArg(after.endAt), num(after.id)]
      return [this.keys.prefix, scoreArg(endFrom), scoreArg(endBefore), ...cursor, String(limit)]
    }
    if (Number.isNaN(query.pointsBelow) || !(query.pointsBelow > 0)) return null
    return [this.keys.prefix, scoreArg(query.pointsBelow), num(query.afterId ?? 0), String(limit)]
  }
}

/** A flat `[a, b, a, b, …]` script reply as pairs, or `unexpected_reply`. */
function pairs(reply: unknown, script: string): Array<[unknown, unknown]> {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new RedisStoreError('unexpected_reply', `the ${script} script answered ${describeReply(reply)}`)
  const out: Array<[unknown, unknown]> = []
  for (let i = 0; i < reply.length; i += 2) out.push([reply[i], reply[i + 1]])
  return out
}
