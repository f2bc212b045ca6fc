// The one retention rule (docs/behaviour.md, D-retention, B-order-purge) and the purge loop every store shares.
// How each store applies them is in the testkit's purge suite, run on every store.
import { describe, expect, it } from 'vitest'
import { type OrderRecord } from '@scanauth/core'
import { DEFAULT_PURGE_BATCH_SIZE, mayPurge, orderNeededUntil, purgeCutoff, purgeInBatches, resolvePurgeOptions, sceneNeededUntil, type PurgeBatchOutcome } from '@scanauth/core/store'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const fail = (option: string, message: string) => new Error(`${option}: ${message}`)

describe('sceneNeededUntil', () => {
  it('is the scene’s own deadline while it has no session', () => {
    expect(sceneNeededUntil({ expiresAt: T0 }, null)).toBe(T0)
  })

  it('is the latest session’s deadline when that is later: an authorized scene answers polls while its session lives', () => {
    expect(sceneNeededUntil({ expiresAt: T0 }, { expiresAt: T0 + 1000 })).toBe(T0 + 1000)
  })

  it('never ends before the scene’s own deadline', () => {
    // A session ended early (revoked) does not shorten the scene's own life.
    expect(sceneNeededUntil({ expiresAt: T0 }, { expiresAt: T0 - 1000 })).toBe(T0)
  })
})

describe('orderNeededUntil (B-order-purge)', () => {
  const closed: Pick<OrderRecord, 'status' | 'expiresAt' | 'paidAt' | 'refundedFen'> = { status: 'closed', expiresAt: T0, paidAt: null, refundedFen: 0 }

  it('is the payment deadline of a closed order that never took money', () => {
    expect(orderNeededUntil(closed)).toBe(T0)
    expect(mayPurge(orderNeededUntil(closed) as number, purgeCutoff(T0 - 1, 0))).toBe(false)
    expect(mayPurge(orderNeededUntil(closed) as number, purgeCutoff(T0, 0))).toBe(true)
  })

  it.each(['open', 'paid', 'refunded'] as const)('keeps a %s order for good, however old', (status) => {
    expect(orderNeededUntil({ ...closed, status })).toBeNull()
  })

  it('keeps a closed order for good when it records money all the same (a payment time, a refund)', () => {
    expect(orderNeededUntil({ ...closed, paidAt: T0 - 1 })).toBeNull()
    expect(orderNeededUntil({ ...closed, refundedFen: 1 })).toBeNull()
  })
})

describe('mayPurge and purgeCutoff', () => {
  it('deletes at the exact millisecond a record stops being needed, like every other deadline (B-expiry-1)', () => {
    expect(mayPurge(T0, purgeCutoff(T0 - 1, 0))).toBe(false)
    expect(mayPurge(T0, purgeCutoff(T0, 0))).toBe(true)
  })

  it('keeps a record retentionMs longer', () => {
    expect(mayPurge(T0, purgeCutoff(T0 + 999, 1000))).toBe(false)
    expect(mayPurge(T0, purgeCutoff(T0 + 1000, 1000))).toBe(true)
  })
})

describe('resolvePurgeOptions', () => {
  it('fills in the defaults', () => {
    expect(resolvePurgeOptions({ now: T0 }, fail)).toEqual({ now: T0, retentionMs: 0, batchSize: DEFAULT_PURGE_BATCH_SIZE, maxBatches: Number.POSITIVE_INFINITY })
  })

  it('requires now: a store never reads a clock of its own', () => {
    expect(() => resolvePurgeOptions({} as never, fail)).toThrow(/^now: now is required/)
    expect(() => resolvePurgeOptions(undefined as never, fail)).toThrow(/^now: /)
    expect(() => resolvePurgeOptions({ now: Number.NaN }, fail)).toThrow(/^now: /)
  })

  it.each([
    [{ retentionMs: -1 }, 'retentionMs'],
    [{ batchSize: 0 }, 'batchSize'],
    [{ batchSize: 1.5 }, 'batchSize'],
    [{ maxBatches: 0 }, 'maxBatches'],
    [{ extra: 1 }, 'options'],
  ])('names the bad option of %j', (bad, option) => {
    expect(() => resolvePurgeOptions({ now: T0, ...bad }, fail)).toThrow(new RegExp(`^${option}: `))
  })
})

describe('purgeInBatches', () => {
  /** A batch function over a list of due records: deletes up to `limit` per call. */
  function dueRecords(count: number) {
    let left = count
    const cutoffs: number[] = []
    const batch = (cutoff: number, limit: number): PurgeBatchOutcome => {
      cutoffs.push(cutoff)
      const deleted = Math.min(left, limit)
      left -= deleted
      return { scenes: deleted, sessions: 0, counters: 1, done: deleted < limit }
    }
    return { batch, cutoffs, left: () => left }
  }

  it('runs batches until one comes back short, adding up what they deleted', async () => {
    const records = dueRecords(10)
    const result = await purgeInBatches(resolvePurgeOptions({ now: T0, retentionMs: 5, batchSize: 4 }, fail), records.batch)
    expect(result).toEqual({ scenes: 10, sessions: 0, counters: 3, orders: 0, batches: 3, more: false })
    expect(records.cutoffs).toEqual([T0 - 5, T0 - 5, T0 - 5])
  })

  it('adds up the orders of the stores that report them', async () => {
    let left = 5
    const batch = (_cutoff: number, limit: number): PurgeBatchOutcome => {
      const orders = Math.min(left, limit)
      left -= orders
      return { scenes: 0, sessions: 0, counters: 0, orders, done: orders < limit }
    }
    expect(await purgeInBatches(resolvePurgeOptions({ now: T0, batchSize: 2 }, fail), batch)).toEqual({
      scenes: 0,
      sessions: 0,
      counters: 0,
      orders: 5,
      batches: 3,
      more: false,
    })
  })

  it('stops at maxBatches and says more is left; the next call goes on', async () => {
    const records = dueRecords(10)
    const options = resolvePurgeOptions({ now: T0, batchSize: 3, maxBatches: 2 }, fail)
    expect(await purgeInBatches(options, records.batch)).toMatchObject({ scenes: 6, batches: 2, more: true })
    expect(records.left()).toBe(4)
    expect(await purgeInBatches(options, records.batch)).toMatchObject({ scenes: 4, batches: 2, more: false })
  })

  it('checks with beforeNext before every further batch, and stops when it throws', async () => {
    const records = dueRecords(10)
    let checks = 0
    const stopped = purgeInBatches(resolvePurgeOptions({ now: T0, batchSize: 2 }, fail), records.batch, () => {
      if (++checks === 2) throw new Error('closed')
    })
    await expect(stopped).rejects.toThrow('closed')
    expect(records.left()).toBe(6)
  })
})
