/**
 * The Store's counters (`incrementCounter`, `deleteCounter`), which core's rate limits and the
 * WeChat replay and duplicate records are built on: counting from 1, keys independent of each
 * other, the restart of an expired counter, deletion, concurrent increments over several
 * connections, and keys of any well-formed Unicode up to 512 characters.
 *
 * Every expiry here lies a minute or more after the `now` of the call that sets it, and "later"
 * is a `now` moved past it: a store that forgets counters by a TTL (Redis, which the test does not
 * wait for) passes as well as one that compares the stored expiry with `now` (memory, SQLite).
 */
import { describe, expect, it } from 'vitest'
import type { Store } from '@scanauth/core'
import type { ContractContext } from '../context'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60_000

/** The store and up to three peers on the same backing data (just the store when it has none). */
async function connections(ctx: ContractContext): Promise<Store[]> {
  const stores = [ctx.store]
  const open = ctx.harness.openPeer
  if (open !== undefined) for (let i = 0; i < 3; i++) stores.push(await open.call(ctx.harness))
  return stores
}

/** Registers the counter cases of the Store contract (see the module comment). */
export function storeCounterApiSuite(get: () => ContractContext): void {
  describe('Store API: counters', () => {
    it('counts 1, 2, 3 … from the first call', async () => {
      const { store } = get()
      const answers = []
      for (let i = 0; i < 5; i++) answers.push(await store.incrementCounter('rl:create:device:tv:0', T0 + MINUTE, T0 + i))
      expect(answers).toEqual([1, 2, 3, 4, 5])
    })

    it('keeps separate keys apart', async () => {
      const { store } = get()
      expect(await store.incrementCounter('a', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('a', T0 + MINUTE, T0)).toBe(2)
      expect(await store.incrementCounter('b', T0 + MINUTE, T0)).toBe(1)
      // Keys are compared exactly: no case folding, no trimming, no prefix matching.
      expect(await store.incrementCounter('A', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('a ', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('ab', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('a', T0 + MINUTE, T0)).toBe(3)
    })

    it('restarts a counter at 1 once now reaches its expiry, then counts on under the new expiry', async () => {
      const { store } = get()
      expect(await store.incrementCounter('w', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('w', T0 + MINUTE, T0 + 1000)).toBe(2)
      // One millisecond before the expiry the counter is live: it counts on, and a later expiry
      // passed with the call does not extend it.
      expect(await store.incrementCounter('w', T0 + 5 * MINUTE, T0 + MINUTE - 1)).toBe(3)
      // At the expiry (expiresAt <= now) it starts again with the expiry of this call.
      expect(await store.incrementCounter('w', T0 + 3 * MINUTE, T0 + MINUTE)).toBe(1)
      expect(await store.incrementCounter('w', T0 + 9 * MINUTE, T0 + 2 * MINUTE)).toBe(2)
      expect(await store.incrementCounter('w', T0 + 9 * MINUTE, T0 + 3 * MINUTE - 1)).toBe(3)
      expect(await store.incrementCounter('w', T0 + 4 * MINUTE, T0 + 3 * MINUTE)).toBe(1)
    })

    it('deletes a counter: the next call answers 1; deleting an unknown key does nothing', async () => {
      const { store } = get()
      await store.incrementCounter('wx:nonce:n1', T0 + MINUTE, T0)
      await store.incrementCounter('wx:nonce:n1', T0 + MINUTE, T0)
      await store.incrementCounter('wx:nonce:n2', T0 + MINUTE, T0)
      await store.deleteCounter('wx:nonce:n1')
      await expect(store.deleteCounter('never-counted')).resolves.toBeUndefined()
      expect(await store.incrementCounter('wx:nonce:n1', T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('wx:nonce:n2', T0 + MINUTE, T0)).toBe(2)
    })

    it('answers 50 concurrent increments of one key, spread over the connections, with 1 … 50 each once', async () => {
      const ctx = get()
      const stores = await connections(ctx)
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (stores[i % stores.length] as Store).incrementCounter('rl:create:budget:0', T0 + MINUTE, T0)),
      )
      expect([...answers].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
      expect(await ctx.store.incrementCounter('rl:create:budget:0', T0 + MINUTE, T0)).toBe(51)
    })

    it('takes keys of any well-formed Unicode, exactly as given, up to 512 characters', async () => {
      const { store } = get()
      const keys = [
        'wx:事件:😀',
        'wx:事件:😁', // differs from the one above only in its last astral character
        'wx:caf\u00e9', // NFC …
        'wx:cafe\u0301', // … and NFD of the same text: two keys, never normalized into one
        'k|{tag}*?[x]\\:%_\'"', // characters that mean something to Redis globs, Cluster tags, SQL LIKE
        'x'.repeat(512),
        `${'x'.repeat(511)}y`,
        '事'.repeat(512),
        '😀'.repeat(256), // 512 UTF-16 code units, 256 code points
      ]
      for (const key of keys) expect(await store.incrementCounter(key, T0 + MINUTE, T0), key.slice(0, 20)).toBe(1)
      for (const key of keys) expect(await store.incrementCounter(key, T0 + MINUTE, T0), key.slice(0, 20)).toBe(2)
      await store.deleteCounter('😀'.repeat(256))
      expect(await store.incrementCounter('😀'.repeat(256), T0 + MINUTE, T0)).toBe(1)
      expect(await store.incrementCounter('事'.repeat(512), T0 + MINUTE, T0)).toBe(3)
    })
  })
}
