/**
 * The operator reads of `RedisStore` (`listLiveSessions`, `listUsers`, `listOrders`,
 * `schemaState`; core's `operator-reads.ts`), each one round trip: a read-only script on one index
 * of the key layout (`scripts/operator-reads.ts`), or for `schemaState` two commands on the
 * counters hash. None scans the keyspace: a page reads one index range and the records it names.
 *
 * @module
 */
import type { OrderRecord, SessionRecord, UserRecord } from '@scanauth/core'
import type { LiveSessionQuery, OrderListQuery, SchemaState, UserListQuery } from '@scanauth/core/store'
import { decodeSession, decodeUser, num } from './codec'
import { decodeOrder, hashFromFlat } from './codec-orders'
import { describeReply, RedisStoreError } from './errors'
import { LAYOUT_VERSION, orderMember, type Keys } from './keys'
import { LIST_ALL_ORDERS_SCRIPT, LIST_USERS_SCRIPT, LIVE_SESSIONS_SCRIPT } from './scripts/operator-reads'
import { LuaScript, type ScriptClient } from './scripts/lua-script'

/** The scripts, hashed once per process and shared by every store. */
const liveSessionsScript = new LuaScript(LIVE_SESSIONS_SCRIPT)
const listUsersScript = new LuaScript(LIST_USERS_SCRIPT)
const listAllOrdersScript = new LuaScript(LIST_ALL_ORDERS_SCRIPT)

/** The commands the operator reads send besides the scripts (ioredis `Redis` and `Cluster` have them). */
export type OperatorReadsClient = ScriptClient & {
  exists(key: string): Promise<number>
  hget(key: string, field: string): Promise<string | null>
}

/** The largest createdAt an order can have (`codec-orders.ts` refuses others): the indexes' 16 digits hold it. */
const MAX_CREATED_AT = Number.MAX_SAFE_INTEGER

/** `ZRANGE … BYLEX` bounds over the members of the order indexes (`<createdAt, 16 digits>:<outTradeNo>`). */
export interface OrderRange {
  /** `-`, or an inclusive (`[`) or exclusive (`(`) member bound: the cursor or `createdFrom`, whichever is later. */
  min: string
  /** `+`, or an exclusive (`(`) bound: `createdBefore`. */
  max: string
}

/** A time as the 16 digits of an index member. */
function pad(at: number): string {
  return String(at).padStart(16, '0')
}

/**
 * The lex bounds of `query`'s cursor, `createdFrom` and `createdBefore`, or null when no stored
 * order can match. Stored times are safe integers ≥ 0 (`codec-orders.ts`), so a bound between two
 * of them, or outside them, moves to the nearest one without changing the answer.
 */
export function orderListRange(query: Pick<OrderListQuery, 'after' | 'createdFrom' | 'createdBefore'>): OrderRange | null {
  const lower: string[] = []
  const { after, createdFrom, createdBefore } = query
  if (after !== undefined && after.createdAt >= 0) {
    if (after.createdAt > MAX_CREATED_AT) return null
    // After (at, outTradeNo) exactly; after a time between two integers: from the next integer on.
    lower.push(Number.isInteger(after.createdAt) ? `(${orderMember(after.createdAt, after.outTradeNo)}` : `[${pad(Math.ceil(after.createdAt))}`)
  }
  if (createdFrom !== undefined && createdFrom > 0) {
    if (createdFrom > MAX_CREATED_AT) return null
    lower.push(`[${pad(Math.ceil(createdFrom))}`)
  }
  // The later of two lower bounds is the greater string after its bracket (same fixed-width digits;
  // at one time, the cursor's `<time>:<outTradeNo>` sorts after the bare `<time>`).
  const min = lower.reduce<string>((a, b) => (a === '-' || b.slice(1) > a.slice(1) ? b : a), '-')
  let max = '+'
  if (createdBefore !== undefined && createdBefore <= MAX_CREATED_AT) {
    if (createdBefore <= 0) return null
    // Every member of a time below ceil(createdBefore) sorts below that time's bare 16 digits.
    max = `(${pad(Math.ceil(createdBefore))}`
  }
  return { min, max }
}

/** The operator reads on one client and key layout; `RedisStore` delegates to them. */
export class RedisOperatorReads {
  /**
   * @param client The application's client (never reconfigured here).
   * @param keys The store's key layout.
   */
  constructor(
    private readonly client: OperatorReadsClient,
    private readonly keys: Keys,
  ) {}

  /** `Store.listLiveSessions`: one script run on the user's session index. */
  async liveSessions(query: LiveSessionQuery): Promise<SessionRecord[]> {
    const limit = Math.floor(query.limit)
    if (!(limit >= 1)) return []
    const before = query.beforeId === undefined ? '' : num(query.beforeId)
    const reply = await liveSessionsScript.run(this.client, [this.keys.seq, this.keys.userSessions(query.userId)], [this.keys.prefix, num(query.now), before, String(limit)])
    return pairs(reply, 'live-sessions').map(([token, value]) => decodeSession(String(token), String(value)))
  }

  /** `Store.listUsers`: one script run over the user ids after the cursor. */
  async users(query: UserListQuery): Promise<UserRecord[]> {
    const limit = Math.floor(query.limit)
    if (!(limit >= 1)) return []
    const reply = await listUsersScript.run(this.client, [this.keys.seq], [this.keys.prefix, num(Math.max(0, query.afterId ?? 0)), String(limit)])
    return pairs(reply, 'list-users').map(([id, value]) => decodeUser(Number(id), String(value)))
  }

  /**
   * `Store.listOrders`: one script run on the user's index of every order when the query names a
   * user, else the index of the status, else the index of every order.
   *
   * @throws {@link RedisStoreError} `malformed_record` when an order's hash is not one this store wrote.
   */
  async orders(query: OrderListQuery): Promise<OrderRecord[]> {
    const limit = Math.floor(query.limit)
    const range = orderListRange(query)
    if (!(limit >= 1) || range === null) return []
    const { userId, status } = query
    const index = userId !== undefined ? this.keys.ordersOfUser(userId) : status !== undefined ? this.keys.ordersOfStatus(status) : this.keys.allOrders
    const args = [this.keys.prefix, range.min, range.max, String(limit), userId === undefined ? '' : num(userId), status ?? '']
    const reply = await listAllOrdersScript.run(this.client, [this.keys.seq, index], args)
    return pairs(reply, 'list-all-orders').map(([outTradeNo, flat]) => {
      const order = Array.isArray(flat) ? decodeOrder(String(outTradeNo), hashFromFlat(flat)) : null
      // The script answers only orders it read: an empty hash here is a reply out of shape.
      if (order === null) throw new RedisStoreError('unexpected_reply', `the list-all-orders script answered ${describeReply(reply)}`)
      return order
    })
  }

  /**
   * `Store.schemaState`: the key layout the prefix holds, from its counters hash (which the first
   * commit creates with the `layout` field; 0.1.0 wrote none): 0 when nothing was written under the
   * prefix. Two commands sent together, one round trip; no script, so a prefix of another layout
   * is answered rather than refused.
   */
  async schemaState(): Promise<SchemaState> {
    const [exists, layout] = await Promise.all([this.client.exists(this.keys.seq), this.client.hget(this.keys.seq, 'layout')])
    const version = exists === 0 ? 0 : layout === null ? 1 : Number(layout)
    if (!Number.isSafeInteger(version) || version < 0) {
      throw new RedisStoreError('malformed_record', `the counters hash ${JSON.stringify(this.keys.seq)} names the key layout ${JSON.stringify(layout)}`)
    }
    return { version, latest: Number(LAYOUT_VERSION), pending: [], exists: true }
  }
}

/** A flat `[a, b, a, b, …]` script reply as pairs, or `unexpected_reply`. */
function pairs(reply: unknown, script: string): Array<[unknown, unknown]> {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new RedisStoreError('unexpected_reply', `the ${script} script answered ${describeReply(reply)}`)
  const out: Array<[unknown, unknown]> = []
  for (let i = 0; i < reply.length; i += 2) out.push([reply[i], reply[i + 1]])
  return out
}
