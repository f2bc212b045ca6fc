/**
 * RedisStore's counters (Store.incrementCounter / deleteCounter), checked by reading Redis
 * directly: the key and its packed value, the TTL taken from the injected clock, a counter that
 * Redis forgot once its TTL ran out, the restart decided from the stored expiry, one round trip,
 * exact keys, and a value this store did not write. Four processes on one counter:
 * multiprocess.test.ts; on a Cluster: cluster.test.ts; the Store contract's cases: testkit.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { RedisStore, RedisStoreError } from '../src/index'
import { connect, countCommands, deleteKeysUnder, keysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60_000

let client: Redis
let prefix: string
let store: RedisStore

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
})

afterEach(async () => {
  await deleteKeysUnder(client, prefix)
  await client.quit()
})

/** The counter's stored value and its TTL in milliseconds (-2: no key, -1: no TTL). */
async function stored(key: string): Promise<{ value: string | null; ttl: number }> {
  const name = store.keys.counter(key)
  const [value, ttl] = await Promise.all([client.get(name), client.pttl(name)])
  return { value, ttl }
}

describe('RedisStore counters', () => {
  it('keeps a counter at <prefix>c:<key> as count|expiresAt, with the TTL expiresAt − now of its start', async () => {
    const key = 'rl:create:device:tv:1767225600000'
    expect(await store.incrementCounter(key, T0 + MINUTE, T0)).toBe(1)
    expect(await keysUnder(client, prefix)).toEqual([`${prefix}c:${key}`])
    const first = await stored(key)
    expect(first.value).toBe(`1|${T0 + MINUTE}`)
    expect(first.ttl).toBeGreaterThan(MINUTE - 5_000)
    expect(first.ttl).toBeLessThanOrEqual(MINUTE)
    // Later calls carry later expiries; a live counter keeps its own expiry and its TTL (KEEPTTL).
    expect(await store.incrementCounter(key, T0 + 10 * MINUTE, T0 + 1000)).toBe(2)
    expect(await store.incrementCounter(key, T0 + 10 * MINUTE, T0 + 2000)).toBe(3)
    const later = await stored(key)
    expect(later.value).toBe(`3|${T0 + MINUTE}`)
    expect(later.ttl).toBeLessThanOrEqual(first.ttl)
  })

  it('takes the TTL from the injected clock, never from the server: a clock years away still gets expiresAt − now', async () => {
    const past = Date.parse('2001-09-09T01:46:40.000Z')
    await store.incrementCounter('old-clock', past + 5_000, past)
    const { ttl } = await stored('old-clock')
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(5_000)
    // A fractional expiry is rounded up; an expiry already passed still sets a TTL (1 ms), never PX 0.
    await store.incrementCounter('fraction', T0 + 1500.5, T0)
    expect((await stored('fraction')).value).toBe(`1|${T0 + 1500.5}`)
    expect(await store.incrementCounter('passed', T0 - 1, T0)).toBe(1)
    // An expiry beyond about 100 years sets none.
    await store.incrementCounter('for-ever', T0 + 200 * 365 * 24 * 3600_000, T0)
    expect((await stored('for-ever')).ttl).toBe(-1)
  })

  it('restarts at 1 once Redis has dropped a counter whose TTL ran out, with the clock standing still', async () => {
    expect(await store.incrementCounter('short', T0 + 50, T0)).toBe(1)
    expect(await store.incrementCounter('short', T0 + 50, T0)).toBe(2)
    await sleep(120)
    expect(await client.exists(store.keys.counter('short'))).toBe(0)
    expect(await store.incrementCounter('short', T0 + 50, T0)).toBe(1)
  })

  it('restarts at 1 when now reaches the stored expiry, even while Redis still holds the key, and sets the new TTL', async () => {
    await store.incrementCounter('k', T0 + MINUTE, T0)
    await store.incrementCounter('k', T0 + MINUTE, T0)
    expect(await store.incrementCounter('k', T0 + 3 * MINUTE, T0 + MINUTE)).toBe(1)
    const restarted = await stored('k')
    expect(restarted.value).toBe(`1|${T0 + 3 * MINUTE}`)
    expect(restarted.ttl).toBeGreaterThan(MINUTE)
    expect(restarted.ttl).toBeLessThanOrEqual(2 * MINUTE)
    expect(await store.incrementCounter('k', T0 + 9 * MINUTE, T0 + MINUTE + 1)).toBe(2)
  })

  it('increments in one round trip (one EVALSHA) and deletes with one DEL', async () => {
    await store.incrementCounter('warm-up', T0 + MINUTE, T0) // caches the script on the server
    const commands = countCommands(client)
    expect(await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)).toBe(1)
    expect(await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)).toBe(2)
    expect(commands.byName()).toEqual({ evalsha: 2 })
    commands.reset()
    await store.deleteCounter('wx:nonce:abc')
    await store.deleteCounter('never-counted')
    expect(commands.byName()).toEqual({ del: 2 })
    expect(await client.exists(store.keys.counter('wx:nonce:abc'))).toBe(0)
    expect(await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)).toBe(1)
  })

  it('keeps counting after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)', async () => {
    await store.incrementCounter('k', T0 + MINUTE, T0)
    await client.script('FLUSH')
    expect(await store.incrementCounter('k', T0 + MINUTE, T0)).toBe(2)
  })

  it('names non-ASCII, 512-character and brace-holding keys exactly, each its own counter', async () => {
    const keys = ['wx:事件:😀', 'wx:事件:😁', `rl:${'é'.repeat(509)}`, `rl:${'😀'.repeat(254)}x`, 'a|b{c}d', 'A', 'a']
    for (const key of keys) expect(await store.incrementCounter(key, T0 + MINUTE, T0)).toBe(1)
    expect(await store.incrementCounter('wx:事件:😀', T0 + MINUTE, T0)).toBe(2)
    const names = (await keysUnder(client, prefix)).map((k) => k.slice(`${prefix}c:`.length))
    expect(names.sort()).toEqual([...keys].sort())
  })

  it('refuses a counter key that holds a value it did not write, and leaves it alone', async () => {
    await client.set(store.keys.counter('foreign'), 'not a counter')
    const attempt = store.incrementCounter('foreign', T0 + MINUTE, T0)
    await expect(attempt).rejects.toBeInstanceOf(RedisStoreError)
    await expect(attempt).rejects.toMatchObject({ code: 'malformed_record' })
    expect(await client.get(store.keys.counter('foreign'))).toBe('not a counter')
  })
})
