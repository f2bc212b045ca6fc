/**
 * The order methods of `RedisStore` (`loadOrder`, `saveOrder`, `listOpenOrders`), each one round
 * trip:
 *
 * - `loadOrder`: one `HGETALL` of `<p>od:<outTradeNo>`.
 * - `saveOrder`: one run of the save-order script (`scripts/save-order.ts`), which checks the
 *   expectation (a free outTradeNo, or the stored version) and writes the order with its index
 *   entries, atomically against every other client; with a receipt, like a commit, so that a
 *   write re-sent after a lost reply answers true instead of failing its own expectation.
 * - `listOpenOrders`: one run of the read-only list-orders script (`scripts/list-orders.ts`) on the
 *   most selective open-order index the query allows (the scene's, else the user's, else all),
 *   with the cursor and `createdAtOrBefore` turned into exact lex bounds here.
 * - A batch of `purgeExpired`: one run of the purge-orders script (`scripts/purge-orders.ts`) on
 *   the closed-order index, which deletes closed orders that never took money past their payment
 *   deadline (docs/behaviour.md, B-order-purge).
 *
 * Orders are an aggregate of their own: nothing else is written with them, and nothing of them
 * expires (no TTL on any order key); only a purge deletes one. The key layout is in `keys.ts`, the
 * encoding in `codec-orders.ts`.
 *
 * @module
 */
import { num } from './codec'
import { nextCommitId } from './commit-id'
import type { OrderRecord } from '@scanauth/core'
import type { OpenOrderQuery, OrderWrite } from '@scanauth/core/store'
import { decodeOrder, encodeOrder, hashFromFlat } from './codec-orders'
import { describeReply, RedisStoreError } from './errors'
import { orderMember, type Keys } from './keys'
import { LIST_ORDERS_SCRIPT } from './scripts/list-orders'
import { PURGE_ORDERS_SCRIPT } from './scripts/purge-orders'
import { SAVE_ORDER_SCRIPT } from './scripts/save-order'
import { LuaScript, type ScriptClient } from './scripts/lua-script'

/** The scripts, hashed once per process and shared by every store. */
const saveOrderScript = new LuaScript(SAVE_ORDER_SCRIPT)
const listOrdersScript = new LuaScript(LIST_ORDERS_SCRIPT)
const purgeOrdersScript = new LuaScript(PURGE_ORDERS_SCRIPT)

/** The commands the order methods send besides the scripts (ioredis `Redis` and `Cluster` have them). */
export type OrdersClient = ScriptClient & {
  hgetall(key: string): Promise<Record<string, string>>
}

/** The largest createdAt an order can have (`codec-orders.ts` refuses others): the indexes' 16 digits hold it. */
const MAX_CREATED_AT = Number.MAX_SAFE_INTEGER

/** `ZRANGE … BYLEX` bounds of the open orders a query asks for, in index order. */
export interface OpenOrderRange {
  /** Exclusive (`(`), inclusive (`[`) or `-`: the cursor. */
  min: string
  /** Exclusive (`(`) or `+`: `createdAtOrBefore`. */
  max: string
}

/**
 * The lex bounds of `query`'s cursor and `createdAtOrBefore` over index members
 * (`<createdAt zero-padded to 16 digits>:<outTradeNo>`), or null when no stored order can match.
 * Stored times are safe integers ≥ 0, so a bound outside them, or between two of them, is moved to
 * the nearest one without changing the answer.
 */
export function openOrderRange(query: Pick<OpenOrderQuery, 'after' | 'createdAtOrBefore'>): OpenOrderRange | null {
  let min = '-'
  const after = query.after
  if (after !== undefined && after.createdAt >= 0) {
    const at = after.createdAt
    if (at > MAX_CREATED_AT) return null
    // After (at, outTradeNo) exactly; after a time between two integers: from the next integer on.
    min = Number.isInteger(at) ? `(${orderMember(at, after.outTradeNo)}` : `[${pad(Math.ceil(at))}`
  }
  let max = '+'
  const before = query.createdAtOrBefore
  if (before !== undefined && before < MAX_CREATED_AT) {
    if (before < 0) return null
    // Every member of a time ≤ before is below `<floor(before)>;`, since ';' follows ':'.
    max = `(${pad(Math.floor(before))};`
  }
  return { min, max }
}

/** A time as the 16 digits of an index member. */
function pad(at: number): string {
  return String(at).padStart(16, '0')
}

/** The order methods on one client and key layout; `RedisStore` delegates to them. */
export class RedisOrders {
  /**
   * @param client The application's client (never reconfigured here).
   * @param keys The store's key layout.
   * @param receiptTtlMs How long a successful write's receipt is kept (`commitReceiptSeconds`); 0 for none.
   */
  constructor(
    private readonly client: OrdersClient,
    private readonly keys: Keys,
    private readonly receiptTtlMs: number,
  ) {}

  /**
   * The order with this outTradeNo, or null: one `HGETALL`.
   *
   * @throws {@link RedisStoreError} `malformed_record` when the key holds a hash this store did not write.
   */
  async load(outTradeNo: string): Promise<OrderRecord | null> {
    return decodeOrder(outTradeNo, await this.client.hgetall(this.keys.order(outTradeNo)))
  }

  /**
   * Inserts or replaces one order in one script run: true when written, false when the
   * expectation failed (nothing written).
   *
   * @throws {@link RedisStoreError} `invalid_order` when the order cannot be stored faithfully (nothing is sent).
   */
  async save(write: OrderWrite): Promise<boolean> {
    const { order } = write
    const pairs = encodeOrder(order)
    const expected = write.op === 'update' ? num(write.expectedVersion) : ''
    // The receipt id names this call, not the order: each call of saveOrder is its own write.
    const receiptId = this.receiptTtlMs > 0 ? nextCommitId() : ''
    const args = [this.keys.prefix, receiptId, String(this.receiptTtlMs), write.op === 'insert' ? 'i' : 'u', expected, order.outTradeNo, ...pairs]
    const reply = await saveOrderScript.run(this.client, [this.keys.seq, this.keys.order(order.outTradeNo)], args)
    if (reply === 1) return true
    if (reply === 0) return false
    throw new RedisStoreError('unexpected_reply', `the save-order script answered ${describeReply(reply)}`)
  }

  /**
   * The open orders that match `query`, oldest first (createdAt, then outTradeNo), at most
   * `limit`: one script run on the scene's index when the query names a scene, else the user's,
   * else the index of all open orders.
   *
   * @throws {@link RedisStoreError} `malformed_record` when an order's hash is not one this store wrote.
   */
  async list(query: OpenOrderQuery): Promise<OrderRecord[]> {
    const limit = Math.floor(query.limit)
    const range = openOrderRange(query)
    if (!(limit >= 1) || range === null) return []
    const [index, userFilter] =
      query.sceneStr !== undefined
        ? [this.keys.sceneOpenOrders(query.sceneStr), query.userId === undefined ? '' : num(query.userId)]
        : query.userId !== undefined
          ? [this.keys.userOpenOrders(query.userId), '']
          : [this.keys.openOrders, '']
    const reply = await listOrdersScript.run(this.client, [this.keys.seq, index], [this.keys.prefix, range.min, range.max, String(limit), userFilter])
    if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new RedisStoreError('unexpected_reply', `the list-orders script answered ${describeReply(reply)}`)
    const orders: OrderRecord[] = []
    for (let i = 0; i < reply.length; i += 2) {
      const outTradeNo = String(reply[i])
      const flat = reply[i + 1] as unknown
      const order = Array.isArray(flat) ? decodeOrder(outTradeNo, hashFromFlat(flat)) : null
      // The script answers only orders it read: an empty hash here is a reply out of shape.
      if (order === null) throw new RedisStoreError('unexpected_reply', `the list-orders script answered ${describeReply(reply)}`)
      orders.push(order)
    }
    return orders
  }

  /**
   * One batch of a purge: deletes up to `limit` closed orders whose payment deadline is at or
   * before `cutoff` and that never took money, oldest deadline first, in one script run. Answers
   * how many it deleted and whether it reached the end of the due ones.
   */
  async purge(cutoff: number, limit: number): Promise<{ deleted: number; done: boolean }> {
    const reply = await purgeOrdersScript.run(this.client, [this.keys.seq, this.keys.closedOrders], [this.keys.prefix, num(cutoff), String(limit)])
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== 'number' || (reply[1] !== 0 && reply[1] !== 1)) {
      throw new RedisStoreError('unexpected_reply', `the purge-orders script answered ${describeReply(reply)}`)
    }
    return { deleted: reply[0], done: reply[1] === 1 }
  }
}
