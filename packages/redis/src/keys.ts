/**
 * The key layout: every key the store reads or writes, built from one prefix. `docs/redis.md`
 * documents the same layout as a table; the Lua scripts (`src/scripts/`) build the same names from
 * the prefix they receive, so a change here must be mirrored there.
 *
 * | key                       | type   | contents                                              |
 * |---------------------------|--------|-------------------------------------------------------|
 * | `<p>seq`                  | hash   | last id per kind: `s` scene, `u` user, `a` authorization, `t` session, `l` ledger entry; `layout` = {@link LAYOUT_VERSION}; `ai` = `1` once `<p>ae` and `<p>ap` hold every active authorization, `aib` the next user id while they are being built ({@link ACTIVE_INDEXED}) |
 * | `<p>s:<sceneStr>`         | string | a scene (`codec-scenes.ts`)                           |
 * | `<p>ct:<ticketHash>`      | string | the sceneStr of the scene whose `confirmation.ticketHash` this is; same expiry as that scene |
 * | `<p>u:<userId>`           | string | a user                                                |
 * | `<p>o:<openid>`           | string | the id of the user with this openid                   |
 * | `<p>a`                    | hash   | every authorization, whatever its status: id → `userId\|record` |
 * | `<p>aa:<userId>`          | set    | ids of the user's `active` authorizations             |
 * | `<p>aq:<userId>`          | zset   | the user's queue: `pending` ones, score createdAt, member the id zero-padded to 16 digits (ties sort by id) |
 * | `<p>ae`                   | zset   | every `active` time authorization: score its endAt, member the id zero-padded as in the queue (what `listActiveAuthorizations` reads) |
 * | `<p>ap`                   | zset   | every `active` points authorization: score its remainingPoints, members as in `<p>ae` |
 * | `<p>l:<userId>`           | zset   | the user's ledger: score the entry id, member the packed entry (`codec-entitlements.ts`) |
 * | `<p>i:<key>`              | string | an idempotency record, by the caller's key            |
 * | `<p>t:<token>`            | string | a session                                             |
 * | `<p>us:<userId>`          | zset   | tokens of the user's sessions, score expiresAt (for `endSessions`) |
 * | `<p>ls:<sceneId>`         | string | the token of the scene's latest session               |
 * | `<p>r:<commitId>`         | string | a commit's receipt (its reply; `1` for an order write), so a resent commit is not applied twice |
 * | `<p>scenes`               | channel | not a key: the commit script publishes the `scene_str` of every scene it writes |
 * | `<p>c:<key>`              | string | a counter (`Store.incrementCounter`): `count\|expiresAt`, TTL `expiresAt − now` from its start |
 * | `<p>od:<outTradeNo>`      | hash   | an order, one field per record field (`codec-orders.ts`); never expires; deleted by `purgeExpired` only when closed without money past its deadline |
 * | `<p>oo`                   | zset   | every `open` order: score 0, member {@link orderMember} (createdAt zero-padded to 16 digits, `:`, outTradeNo) |
 * | `<p>ou:<userId>`          | zset   | the user's `open` orders, members as in `<p>oo`                 |
 * | `<p>os:<sceneStr>`        | zset   | the `open` orders opened for the scene, members as in `<p>oo`   |
 * | `<p>oc`                   | zset   | every `closed` order: score its `expiresAt`, member its outTradeNo (what `purgeExpired` reads) |
 * | `<p>oa`                   | zset   | every order, whatever its status: score 0, member {@link orderMember} (what `listOrders` reads) |
 * | `<p>oas:<status>`         | zset   | every order of this status, members as in `<p>oa`              |
 * | `<p>oau:<userId>`         | zset   | every order of the user, members as in `<p>oa`                  |
 *
 * The three open-order indexes hold the same members (all score 0, so they sort bytewise and are
 * read with `ZRANGE … BYLEX`): a member sorts exactly as `listOpenOrders` must answer, by createdAt
 * then outTradeNo, so a page's cursor is one exclusive lex bound. The save-order script keeps them
 * in step with each order's status (`scripts/save-order.ts`); an index that empties is removed by
 * Redis itself. The same script keeps `<p>oc`, the closed orders by payment deadline, from which
 * the purge script (`scripts/purge-orders.ts`) deletes those core lets go (docs/behaviour.md,
 * B-order-purge), and the three indexes of every order (`<p>oa`, `<p>oas:<status>`,
 * `<p>oau:<userId>`, the same members), which the operator's `listOrders` pages through and the
 * purge script leaves with the order.
 *
 * A user load reads the user, its active set and the head of its queue (`ZRANGE 0 0`), then those
 * records from `<p>a` (`HMGET`): the same few commands however long the queue or the history is.
 * Retired authorizations (expired, exhausted, revoked) are only in `<p>a`. The commit script also
 * files every active authorization in the reminders' index of its type (`<p>ae`, `<p>ap`), so that
 * a reminder pass reads the few near their end, never every user (`active-index.ts`).
 *
 * @module
 */

/**
 * The version of the key layout, kept in the `layout` field of `<p>seq`. 0.1.0 wrote layout 1
 * (no field): its live authorizations in a hash per user (`al:<userId>`), which a load read whole.
 * The scripts refuse a prefix that holds data without this version (`docs/redis.md`, "Upgrading").
 */
export const LAYOUT_VERSION = '2'

/**
 * The field of `<p>seq` that says the reminders' indexes (`<p>ae`, `<p>ap`) hold every active
 * authorization. The first commit on a fresh prefix sets it beside `layout` (the commit script keeps
 * the indexes from then on); a prefix written before the indexes existed lacks it, and the first
 * `listActiveAuthorizations` builds them (`active-index.ts`; docs/redis.md, "Upgrading a prefix
 * written before these indexes").
 */
export const ACTIVE_INDEXED = 'ai'

/** The field of `<p>seq` that holds the next user id to index while the reminders' indexes are being built. */
export const ACTIVE_INDEX_CURSOR = 'aib'

/**
 * The member of an authorization in its user's queue and in the reminders' indexes: the id
 * zero-padded to 16 digits (every id below 2^53 fits), so that members of equal score (the same
 * createdAt, endAt or remainingPoints) sort by id.
 */
export function queueMember(id: number | string): string {
  return String(id).padStart(16, '0')
}

/**
 * The member of an open order in the open-order indexes: its createdAt zero-padded to 16 digits,
 * `:`, its outTradeNo. Fixed-width digits make bytewise order numeric order for every createdAt
 * the store accepts (a safe integer ≥ 0, `codec-orders.ts`), and equal times then sort by
 * outTradeNo, bytewise. The save-order script builds the same string from the stored `createdAt`.
 */
export function orderMember(createdAt: number, outTradeNo: string): string {
  return `${String(createdAt).padStart(16, '0')}:${outTradeNo}`
}

/** The default key prefix. `{sa}` is a Redis Cluster hash tag: every key lands in one hash slot. */
export const DEFAULT_KEY_PREFIX = 'scanauth:{sa}:'

/**
 * Builds the store's key names under one prefix. A store's layout is `store.keys`: use it to look
 * at what the store wrote, or to remove a store's data.
 *
 * @example
 * ```ts
 * const store = new RedisStore({ client: redis, keyPrefix: 'myapp:{sa}:' })
 * await redis.get(store.keys.scene(sceneStr))             // the packed scene record
 *
 * // Every key of this store (never KEYS, never FLUSHDB on a shared server):
 * let cursor = '0'
 * do {
 *   const [next, keys] = await redis.scan(cursor, 'MATCH', store.keys.pattern, 'COUNT', 1000)
 *   if (keys.length > 0) await redis.del(...keys)
 *   cursor = next
 * } while (cursor !== '0')
 * ```
 */
export class Keys {
  /** @param prefix The prefix of every key, e.g. {@link DEFAULT_KEY_PREFIX}. */
  constructor(readonly prefix: string) {}

  /** The id counters (and the key every script names, so Cluster routes it to the prefix's slot). */
  get seq(): string {
    return `${this.prefix}seq`
  }

  /** A scene, by its scene_str. */
  scene(sceneStr: string): string {
    return `${this.prefix}s:${sceneStr}`
  }

  /**
   * The confirm-ticket index (docs/behaviour.md B-confirm-6): the sceneStr of the scene whose
   * `confirmation.ticketHash` is `ticketHash`. The commit script writes it with every write of a
   * scene that has a confirmation, with the scene's own expiry (`PEXPIRETIME` → `PXAT`), so it
   * lives exactly as long as the scene and a decided scene's ticket still finds it ("already
   * used") until Redis frees both. Like a counter key, a `{` or `}` in the digest cannot move it
   * out of the prefix's hash slot.
   */
  confirmTicket(ticketHash: string): string {
    return `${this.prefix}ct:${ticketHash}`
  }

  /** A user record, by id. */
  user(userId: number | string): string {
    return `${this.prefix}u:${userId}`
  }

  /** The openid index: the id of the user with this openid. */
  openid(openid: string): string {
    return `${this.prefix}o:${openid}`
  }

  /** Every authorization (hash: id → `userId|record`). */
  get authorizations(): string {
    return `${this.prefix}a`
  }

  /** Ids of the user's `active` authorizations (set). */
  activeAuthorizations(userId: number | string): string {
    return `${this.prefix}aa:${userId}`
  }

  /** The user's `pending` authorizations in activation order (zset: score createdAt, member the id zero-padded to 16 digits). */
  queue(userId: number | string): string {
    return `${this.prefix}aq:${userId}`
  }

  /**
   * Every `active` time authorization (zset: score its endAt, member `queueMember(id)`): what
   * `listActiveAuthorizations({ type: 'time' })` reads.
   */
  get activeByEnd(): string {
    return `${this.prefix}ae`
  }

  /**
   * Every `active` points authorization (zset: score its remainingPoints, member `queueMember(id)`):
   * what `listActiveAuthorizations({ type: 'points' })` reads.
   */
  get activeByPoints(): string {
    return `${this.prefix}ap`
  }

  /** The user's ledger (zset: score the entry id, member the packed entry). */
  ledger(userId: number | string): string {
    return `${this.prefix}l:${userId}`
  }

  /** The idempotency record of a caller's key. */
  idempotency(key: string): string {
    return `${this.prefix}i:${key}`
  }

  /** Tokens of the user's sessions (zset: score the session's expiresAt). */
  userSessions(userId: number | string): string {
    return `${this.prefix}us:${userId}`
  }

  /** A session, by its token. */
  session(token: string): string {
    return `${this.prefix}t:${token}`
  }

  /** The token of the latest session a scene produced, by scene id. */
  latestSession(sceneId: number | string): string {
    return `${this.prefix}ls:${sceneId}`
  }

  /** A commit's receipt, by the commit's random id. */
  receipt(commitId: string): string {
    return `${this.prefix}r:${commitId}`
  }

  /**
   * The pub/sub channel on which the commit script publishes the `scene_str` of every scene it
   * writes (`watchScenes`). A channel, not a key: it holds nothing, and SCAN never finds it.
   */
  get sceneChannel(): string {
    return `${this.prefix}scenes`
  }

  /**
   * A counter, by the caller's key (`Store.incrementCounter`: rate-limit windows, replay and
   * duplicate records). The key follows the prefix, so a `{` or `}` in it never moves the counter
   * out of the prefix's hash slot: Redis hashes the first tag, the prefix's.
   */
  counter(key: string): string {
    return `${this.prefix}c:${key}`
  }

  /** An order, by its outTradeNo (hash: one field per record field; never expires, deleted only by a purge when closed). */
  order(outTradeNo: string): string {
    return `${this.prefix}od:${outTradeNo}`
  }

  /** Every `open` order (zset: score 0, member `orderMember(createdAt, outTradeNo)`). */
  get openOrders(): string {
    return `${this.prefix}oo`
  }

  /**
   * Every `closed` order (zset: score its `expiresAt`, the payment deadline; member its
   * outTradeNo): what `purgeExpired` reads, oldest deadline first.
   */
  get closedOrders(): string {
    return `${this.prefix}oc`
  }

  /** The user's `open` orders (zset: score 0, member `orderMember(createdAt, outTradeNo)`). */
  userOpenOrders(userId: number | string): string {
    return `${this.prefix}ou:${userId}`
  }

  /**
   * The `open` orders opened for a scene (zset: score 0, member `orderMember(createdAt, outTradeNo)`). Like a
   * counter key, a `{` or `}` in the scene_str cannot move it out of the prefix's slot.
   */
  sceneOpenOrders(sceneStr: string): string {
    return `${this.prefix}os:${sceneStr}`
  }

  /** Every order, whatever its status (zset: score 0, member `orderMember(createdAt, outTradeNo)`): what `listOrders` reads without filters. */
  get allOrders(): string {
    return `${this.prefix}oa`
  }

  /** Every order of one status (zset: score 0, member `orderMember(createdAt, outTradeNo)`). */
  ordersOfStatus(status: string): string {
    return `${this.prefix}oas:${status}`
  }

  /** Every order of one user, whatever its status (zset: score 0, member `orderMember(createdAt, outTradeNo)`). */
  ordersOfUser(userId: number | string): string {
    return `${this.prefix}oau:${userId}`
  }

  /** A SCAN `MATCH` pattern for every key under the prefix (glob characters in the prefix escaped). */
  get pattern(): string {
    return `${escapeGlob(this.prefix)}*`
  }
}

/** Escapes the characters SCAN `MATCH` treats as glob syntax, so a prefix matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`)
}

/**
 * Whether every key under `prefix` hashes to one Cluster slot: Redis hashes only the part between
 * the first `{` and the next `}` when it is not empty, so the prefix must hold both braces itself.
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{')
  if (open === -1) return false
  const close = prefix.indexOf('}', open + 1)
  return close > open + 1
}
