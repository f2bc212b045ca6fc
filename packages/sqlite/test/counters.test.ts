// SqliteStore's counters (Store.incrementCounter / deleteCounter) seen in the file itself, through
// a raw connection of the test's own: the row each call leaves, the restart of an expired counter,
// two connections counting one key, the keys stored exactly, and purgeExpired removing dead
// counters in its batches. The statements' plans: query-plans.test.ts; four processes on one
// counter: multiprocess.test.ts; the Store contract's counter cases: testkit.
import { describe, expect, it } from 'vitest'
import { SqliteStoreError } from '@scanauth/sqlite'
import { DAY, SECOND, useTempFile } from './support/fixture'

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60 * SECOND

/** The stored row of `key`, read straight from the file. */
function row(key: string): { count: number; expires_at: number } | undefined {
  return fixture.rawDb({ readonly: true }).prepare('SELECT count, expires_at FROM scanauth_counters WHERE key = ?').get(key) as
    | { count: number; expires_at: number }
    | undefined
}

describe('counters', () => {
  it('creates the table WITHOUT ROWID with its expiry index (migration 4)', () => {
    fixture.openStore()
    const db = fixture.rawDb({ readonly: true })
    const table = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'scanauth_counters'`).pluck().get() as string
    expect(table).toMatch(/WITHOUT ROWID/)
    expect(db.prepare(`SELECT tbl_name FROM sqlite_schema WHERE type = 'index' AND name = 'scanauth_counters_by_expiry'`).pluck().get()).toBe('scanauth_counters')
  })

  it('counts 1, 2, 3 in one row that keeps the expiry of its first call', async () => {
    const store = fixture.openStore()
    const key = 'rl:create:device:tv:1767225600000'
    expect(await store.incrementCounter(key, T0 + MINUTE, T0)).toBe(1)
    expect(row(key)).toEqual({ count: 1, expires_at: T0 + MINUTE })
    // Later calls pass later expiries (as a caller whose clock moved would); a live counter keeps its own.
    expect(await store.incrementCounter(key, T0 + 2 * MINUTE, T0 + SECOND)).toBe(2)
    expect(await store.incrementCounter(key, T0 + 3 * MINUTE, T0 + MINUTE - 1)).toBe(3)
    expect(row(key)).toEqual({ count: 3, expires_at: T0 + MINUTE })
    const db = fixture.rawDb({ readonly: true })
    expect(db.prepare('SELECT typeof(count), typeof(expires_at) FROM scanauth_counters').raw().get()).toEqual(['integer', 'integer'])
    expect(db.prepare('SELECT COUNT(*) FROM scanauth_counters').pluck().get()).toBe(1)
  })

  it('restarts a counter at 1 with the new expiry once now reaches its expiry (the boundary included)', async () => {
    const store = fixture.openStore()
    await store.incrementCounter('k', T0 + MINUTE, T0)
    await store.incrementCounter('k', T0 + MINUTE, T0)
    expect(await store.incrementCounter('k', T0 + 2 * MINUTE, T0 + MINUTE)).toBe(1)
    expect(row('k')).toEqual({ count: 1, expires_at: T0 + 2 * MINUTE })
    expect(await store.incrementCounter('k', T0 + 3 * MINUTE, T0 + MINUTE + 1)).toBe(2)
    expect(row('k')).toEqual({ count: 2, expires_at: T0 + 2 * MINUTE })
    // An expiry already passed when given: each call finds it expired and answers 1 again.
    expect(await store.incrementCounter('past', T0 - 1, T0)).toBe(1)
    expect(await store.incrementCounter('past', T0 - 1, T0)).toBe(1)
  })

  it('deletes a counter with deleteCounter (the next call answers 1); an unknown key is no error', async () => {
    const store = fixture.openStore()
    await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)
    await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)
    await store.deleteCounter('wx:nonce:abc')
    expect(row('wx:nonce:abc')).toBeUndefined()
    await expect(store.deleteCounter('never-counted')).resolves.toBeUndefined()
    expect(await store.incrementCounter('wx:nonce:abc', T0 + MINUTE, T0)).toBe(1)
  })

  it('shares a counter between two connections on the file', async () => {
    const a = fixture.openStore()
    const b = fixture.openStore()
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await (i % 2 === 0 ? a : b).incrementCounter('shared', T0 + MINUTE, T0))
    expect(answers).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('stores non-ASCII and 512-character keys exactly, each its own counter', async () => {
    const store = fixture.openStore()
    const keys = ['wx:事件:😀', 'wx:事件:😁', `rl:${'é'.repeat(509)}`, `rl:${'😀'.repeat(254)}x`, 'a|b{c}d', 'A', 'a']
    for (const key of keys) expect(await store.incrementCounter(key, T0 + MINUTE, T0)).toBe(1)
    expect(await store.incrementCounter('wx:事件:😀', T0 + MINUTE, T0)).toBe(2)
    const stored = fixture.rawDb({ readonly: true }).prepare('SELECT key FROM scanauth_counters').pluck().all() as string[]
    expect(stored.sort()).toEqual([...keys].sort())
    expect(row(`rl:${'😀'.repeat(254)}x`)).toEqual({ count: 1, expires_at: T0 + MINUTE })
  })

  it('purgeExpired deletes counters whose expiry passed more than retentionMs ago, in its batches', async () => {
    const store = fixture.openStore()
    for (let i = 0; i < 10; i++) await store.incrementCounter(`old-${i}`, T0 + i, T0)
    await store.incrementCounter('live', T0 + DAY, T0)
    // Expiries T0 … T0 + 9: at T0 + 4 with 2 ms of retention, those at or before T0 + 2 go.
    expect(await store.purgeExpired({ now: T0 + 4, retentionMs: 2 })).toMatchObject({ counters: 3, more: false })
    const rest = await store.purgeExpired({ now: T0 + 10, batchSize: 2 })
    expect(rest).toMatchObject({ counters: 7, more: false })
    expect(rest.batches).toBeGreaterThanOrEqual(4)
    const left = fixture.rawDb({ readonly: true }).prepare('SELECT key FROM scanauth_counters').pluck().all()
    expect(left).toEqual(['live'])
    const partial = await store.purgeExpired({ now: T0 + DAY, batchSize: 1, maxBatches: 1 })
    expect(partial).toMatchObject({ counters: 1, batches: 1 })
  })

  it('refuses counters once closed', async () => {
    const store = fixture.openStore()
    await store.close()
    await expect(store.incrementCounter('k', T0 + MINUTE, T0)).rejects.toThrow(SqliteStoreError)
    await expect(store.deleteCounter('k')).rejects.toMatchObject({ code: 'closed' })
  })
})
