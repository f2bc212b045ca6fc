/**
 * What the Redis tests share: the server address, a key prefix of their own, reading every record
 * straight from Redis (not through `load`), deleting only their own keys, and counting the
 * commands a client sends.
 */
import { randomBytes } from 'node:crypto'
import { Redis, type Cluster } from 'ioredis'
import type { AuthorizationRecord, OrderRecord } from '@scanauth/core'
import type { StoreHarness, StoreSnapshot } from '@scanauth/testkit'
import { decodeAuthorization, decodeSession, decodeUser } from '../../src/codec'
import { decodeScene } from '../../src/codec-scenes'
import { decodeIdempotency, decodeLedgerEntry } from '../../src/codec-entitlements'
import { decodeOrder } from '../../src/codec-orders'
import { Keys, queueMember } from '../../src/keys'
import { RedisStore } from '../../src/redis-store'

/** The server under test. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A client of the server under test. */
export function connect(): Redis {
  return new Redis(REDIS_URL)
}

/** A key prefix no other test uses; `{t}` is its Cluster hash tag. */
export function testPrefix(): string {
  return `scanauth:test:${randomBytes(6).toString('hex')}:{t}:`
}

type AnyClient = Redis | Cluster

/** The nodes to SCAN: every master of a Cluster, or the one server. */
function scanTargets(client: AnyClient): Redis[] {
  return client.isCluster ? (client as Cluster).nodes('master') : [client as Redis]
}

/** Every key under `prefix` (SCAN, never KEYS). */
export async function keysUnder(client: AnyClient, prefix: string): Promise<string[]> {
  const pattern = new Keys(prefix).pattern
  const found: string[] = []
  for (const node of scanTargets(client)) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      found.push(...keys)
      cursor = next
    } while (cursor !== '0')
  }
  return found
}

/** Deletes every key under `prefix` and nothing else (never FLUSHDB: the server is shared). */
export async function deleteKeysUnder(client: AnyClient, prefix: string): Promise<number> {
  const keys = await keysUnder(client, prefix)
  // One DEL per key: on a Cluster a multi-key DEL must stay in one slot, and this stays correct
  // even for a prefix without a hash tag.
  await Promise.all(keys.map((key) => client.del(key)))
  return keys.length
}

/**
 * Every record under `prefix`, read and decoded straight from Redis (not through `load`), each
 * list ordered by id (idempotency records by key, orders by outTradeNo). Index keys (`aa:`, `aq:`,
 * `us:`, `ls:`, `oo`, `ou:`, `os:`) hold no records; {@link checkIndexes} compares the user's with
 * the records, `test/orders.test.ts` the open-order ones.
 */
export async function dumpRecords(client: AnyClient, prefix: string): Promise<StoreSnapshot & { orders: OrderRecord[] }> {
  const snapshot: StoreSnapshot & { orders: OrderRecord[] } = { scenes: [], users: [], authorizations: [], sessions: [], ledger: [], idempotency: [], orders: [] }
  await Promise.all(
    (await keysUnder(client, prefix)).map(async (key) => {
      const rest = key.slice(prefix.length)
      const colon = rest.indexOf(':')
      const kind = colon === -1 ? rest : rest.slice(0, colon)
      const name = rest.slice(colon + 1)
      if (kind === 's') snapshot.scenes.push(decodeScene(name, (await client.get(key)) as string))
      else if (kind === 'u') snapshot.users.push(decodeUser(Number(name), (await client.get(key)) as string))
      else if (kind === 't') snapshot.sessions.push(decodeSession(name, (await client.get(key)) as string))
      else if (kind === 'i') snapshot.idempotency.push(decodeIdempotency(name, (await client.get(key)) as string))
      else if (kind === 'od') {
        const order = decodeOrder(name, await client.hgetall(key))
        if (order !== null) snapshot.orders.push(order)
      } else if (kind === 'l') for (const member of await client.zrange(key, 0, -1)) snapshot.ledger.push(decodeLedgerEntry(Number(name), member))
      else if (kind === 'a') {
        for (const [id, value] of Object.entries(await client.hgetall(key))) snapshot.authorizations.push(decodeAuthorization(Number(id), value))
      }
    }),
  )
  const { idempotency, orders, ...byId } = snapshot
  for (const list of Object.values(byId)) (list as Array<{ id: number }>).sort((a, b) => a.id - b.id)
  idempotency.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  orders.sort((a, b) => (a.outTradeNo < b.outTradeNo ? -1 : a.outTradeNo > b.outTradeNo ? 1 : 0))
  return snapshot
}

/**
 * Compares a user's index keys with the records read straight from Redis: the active set holds
 * exactly the user's `active` authorizations, the queue exactly its `pending` ones, each scored by
 * its createdAt under its zero-padded id; and the reminders' indexes of every user: `<p>ae` exactly
 * the active time ones scored by endAt, `<p>ap` exactly the active points ones scored by
 * remainingPoints. Returns one line per mismatch.
 */
export async function checkIndexes(client: AnyClient, prefix: string, snapshot: StoreSnapshot): Promise<string[]> {
  const keys = new Keys(prefix)
  const problems: string[] = []
  for (const user of snapshot.users) {
    const owned = snapshot.authorizations.filter((a) => a.userId === user.id)
    const active = owned.filter((a) => a.status === 'active').map((a) => String(a.id)).sort()
    const stored = [...(await client.smembers(keys.activeAuthorizations(user.id)))].sort()
    if (JSON.stringify(stored) !== JSON.stringify(active)) problems.push(`user ${user.id}: active set ${stored} for ${active}`)
    const queue = owned
      .filter((a) => a.status === 'pending')
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
      .flatMap((a) => [queueMember(a.id), String(a.createdAt)])
    const storedQueue = await client.zrange(keys.queue(user.id), 0, -1, 'WITHSCORES')
    if (JSON.stringify(storedQueue) !== JSON.stringify(queue)) problems.push(`user ${user.id}: queue ${storedQueue} for ${queue}`)
  }
  const reminders = [
    { key: keys.activeByEnd, type: 'time', score: (a: AuthorizationRecord) => a.endAt as number },
    { key: keys.activeByPoints, type: 'points', score: (a: AuthorizationRecord) => a.remainingPoints },
  ] as const
  for (const { key, type, score } of reminders) {
    const expected = snapshot.authorizations
      .filter((a) => a.status === 'active' && a.type === type)
      .sort((a, b) => score(a) - score(b) || a.id - b.id)
      .flatMap((a) => [queueMember(a.id), String(score(a))])
    const stored = await client.zrange(key, 0, -1, 'WITHSCORES')
    if (JSON.stringify(stored) !== JSON.stringify(expected)) problems.push(`${key.slice(prefix.length)}: ${stored} for ${expected}`)
  }
  return problems
}

/**
 * A harness factory for the contract suite: a RedisStore on a fresh prefix over a new client from
 * `open`, peers on clients of their own, a dump straight from Redis, and a cleanup that deletes
 * the prefix's keys and quits every client it opened.
 */
export function redisHarness(open: () => AnyClient): () => Promise<StoreHarness> {
  return async () => {
    const prefix = testPrefix()
    const client = open()
    const clients: AnyClient[] = [client]
    return {
      store: new RedisStore({ client, keyPrefix: prefix }),
      openPeer: () => {
        const peer = open()
        clients.push(peer)
        return new RedisStore({ client: peer, keyPrefix: prefix })
      },
      // Key TTLs free expired records: the store's purgeExpired has nothing to delete.
      expiresByItself: true,
      dump: () => dumpRecords(client, prefix),
      cleanup: async () => {
        await deleteKeysUnder(client, prefix)
        await Promise.all(clients.map((c) => c.quit()))
      },
    }
  }
}

/**
 * Counts the commands `client` sends from now on, by name (EVALSHA, GET, ...). An EVAL that follows
 * an EVALSHA is ioredis re-sending a script the server forgot (NOSCRIPT): the faults tests flush the
 * shared server's script cache while other test files run, so such a re-send is counted apart, in
 * `fallbacks`, and not as a round trip of the store's own.
 */
export function countCommands(client: AnyClient): { total(): number; byName(): Record<string, number>; reset(): void; fallbacks(): number } {
  const counts = new Map<string, number>()
  let unanswered = 0
  let fallbacks = 0
  const target = client as unknown as { sendCommand(command: { name: string }, ...rest: unknown[]): unknown }
  const send = target.sendCommand.bind(target)
  target.sendCommand = (command, ...rest) => {
    if (command.name === 'eval' && unanswered > 0) {
      unanswered--
      fallbacks++
    } else {
      if (command.name === 'evalsha') unanswered++
      counts.set(command.name, (counts.get(command.name) ?? 0) + 1)
    }
    return send(command, ...rest)
  }
  return {
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    byName: () => Object.fromEntries(counts),
    reset: () => {
      counts.clear()
      unanswered = 0
      fallbacks = 0
    },
    fallbacks: () => fallbacks,
  }
}
