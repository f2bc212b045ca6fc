import { describe, expect, it } from 'vitest'
import {
  findCurrent,
  fifoOrder,
  freeAuthorization,
  isValid,
  newPointsAuthorization,
  newTimeAuthorization,
  runActivationStep,
  spend,
  type AuthorizationDraft,
} from '../src/rules/authorizations'
import { decidePoll, decideScan, newScene } from '../src/rules/scene'
import { hasPassed } from '../src/rules/time'

const NOW = 1_000_000

function stored(overrides: Partial<AuthorizationDraft> & Pick<AuthorizationDraft, 'id'>): AuthorizationDraft {
  return { ...newTimeAuthorization({ now: NOW - 100, durationMs: 1000, source: 'admin' }), changed: false, ...overrides }
}

describe('hasPassed: the one expiry boundary', () => {
  it('a deadline has passed at and after it, not before', () => {
    expect(hasPassed(NOW, NOW - 1)).toBe(false)
    expect(hasPassed(NOW, NOW)).toBe(true)
    expect(hasPassed(NOW, NOW + 1)).toBe(true)
  })
})

describe('isValid', () => {
  it('time: valid only while now is before end_at; a null end_at is never valid', () => {
    expect(isValid({ type: 'time', endAt: NOW + 1, remainingPoints: 0 }, NOW)).toBe(true)
    expect(isValid({ type: 'time', endAt: NOW, remainingPoints: 0 }, NOW)).toBe(false)
    expect(isValid({ type: 'time', endAt: null, remainingPoints: 0 }, NOW)).toBe(false)
  })
  it('points: valid only above zero', () => {
    expect(isValid({ type: 'points', endAt: null, remainingPoints: 1 }, NOW)).toBe(true)
    expect(isValid({ type: 'points', endAt: null, remainingPoints: 0 }, NOW)).toBe(false)
    expect(isValid({ type: 'points', endAt: null, remainingPoints: -1 }, NOW)).toBe(false)
  })
})

describe('runActivationStep', () => {
  it('retires an invalid active one and activates the oldest pending, ties by lower id, new drafts last', () => {
    const expiredActive = stored({ id: 1, status: 'active', endAt: NOW })
    const tieHigh = stored({ id: 5, status: 'pending', createdAt: 10 })
    const tieLow = stored({ id: 4, status: 'pending', createdAt: 10 })
    const fresh = { ...newPointsAuthorization({ now: 10, points: 1, source: 'x' }) }
    const out = runActivationStep([expiredActive, tieHigh, fresh, tieLow], NOW)
    expect(out.map((a) => a.status)).toEqual(['expired', 'pending', 'pending', 'active'])
    expect(out[3]).toMatchObject({ startAt: NOW, endAt: NOW + 1000, updatedAt: NOW, changed: true })
    expect(out[1]?.changed).toBe(false)
  })

  it('stops when a valid active one remains (mutual exclusion)', () => {
    const list = [stored({ id: 1, status: 'active', endAt: NOW + 1 }), stored({ id: 2, status: 'pending' })]
    expect(runActivationStep(list, NOW)).toEqual(list)
  })

  it('marks an active points authorization at zero exhausted', () => {
    const out = runActivationStep([{ ...newPointsAuthorization({ now: 0, points: 1, source: 'x' }), id: 1, status: 'active', remainingPoints: 0 }], NOW)
    expect(out[0]).toMatchObject({ status: 'exhausted', updatedAt: NOW })
  })

  it('keeps the times of an activated points authorization', () => {
    const p = { ...newPointsAuthorization({ now: 7, points: 1, source: 'x' }), id: 3, changed: false }
    expect(runActivationStep([p], NOW)[0]).toMatchObject({ status: 'active', startAt: 7, endAt: null, updatedAt: NOW })
  })
})

describe('findCurrent', () => {
  it('is the active one with the highest id; an invalid one is retired and treated as absent', () => {
    const a = stored({ id: 1, status: 'active', endAt: NOW + 5 })
    expect(findCurrent([a], NOW).current).toBe(a)
    const result = findCurrent([stored({ id: 2, status: 'active', endAt: NOW })], NOW)
    expect(result.current).toBeNull()
    expect(result.list[0]?.status).toBe('expired')
    expect(findCurrent([stored({ id: 3, status: 'pending' })], NOW).current).toBeNull()
  })
})

describe('freeAuthorization', () => {
  it('is active when nothing is active, pending otherwise, with the same duration', () => {
    expect(freeAuthorization([], NOW, 7)).toMatchObject({ status: 'active', source: 'free', type: 'time', startAt: NOW, endAt: NOW + 7, remainingPoints: 0, totalPoints: 0 })
    expect(freeAuthorization([stored({ id: 1, status: 'active' })], NOW, 7)).toMatchObject({ status: 'pending', endAt: NOW + 7 })
  })
})

describe('spend', () => {
  const points = { ...newPointsAuthorization({ now: 0, points: 3, source: 'x' }), id: 1, status: 'active' as const, changed: false }
  it('decrements points, never below zero', () => {
    const ok = spend([points], points, 3, NOW)
    expect(ok).toMatchObject({ status: 'ok', used: { remainingPoints: 0, updatedAt: NOW } })
    expect(spend([points], points, 4, NOW)).toEqual({ status: 'insufficient_points' })
  })
  it('uses a time authorization unchanged and reports need_purchase without one', () => {
    const time = stored({ id: 2, status: 'active', endAt: NOW + 10 })
    expect(spend([time], time, 5, NOW)).toMatchObject({ status: 'ok', used: time })
    expect(spend([], null, 1, NOW)).toEqual({ status: 'need_purchase' })
  })
})

describe('fifoOrder', () => {
  it('orders by created_at, then id, new drafts after stored ones', () => {
    const list = [stored({ id: 9, createdAt: 2 }), stored({ id: null, createdAt: 1 }), stored({ id: 3, createdAt: 1 })]
    expect([...list].sort(fifoOrder).map((a) => a.id)).toEqual([3, null, 9])
  })
})

describe('scene decisions', () => {
  const scene = { ...newScene({ sceneStr: 'pc_x', deviceId: 'd', now: 0, ttlMs: 100 }), id: 1 }
  it('poll: pending until expires_at, then expired with a write', () => {
    expect(decidePoll(scene, 99)).toEqual({ kind: 'answer', status: 'pending', expire: null })
    expect(decidePoll(scene, 100)).toMatchObject({ kind: 'answer', status: 'expired', expire: { status: 'expired', version: 2 } })
    expect(decidePoll({ ...scene, status: 'expired' }, 0)).toEqual({ kind: 'answer', status: 'expired', expire: null })
    expect(decidePoll({ ...scene, status: 'authorized', userId: 4 }, 1000)).toEqual({ kind: 'authorized', userId: 4 })
  })
  it('scan: invalid for missing, authorized, expired, denied; process pending and (by default) scanned', () => {
    expect(decideScan(null, 0)).toEqual({ kind: 'invalid', expire: null })
    expect(decideScan({ ...scene, status: 'authorized' }, 0)).toEqual({ kind: 'invalid', expire: null })
    expect(decideScan(scene, 100)).toMatchObject({ kind: 'invalid', expire: { status: 'expired' } })
    expect(decideScan({ ...scene, status: 'scanned' }, 50)).toEqual({ kind: 'process', scene: { ...scene, status: 'scanned' } })
    expect(decideScan({ ...scene, status: 'denied' }, 50)).toEqual({ kind: 'invalid', expire: null })
    expect(decideScan(scene, 50)).toEqual({ kind: 'process', scene })
  })
  it('scan (confirm mode, B-confirm-3): a scanned or denied scene takes no second scan', () => {
    expect(decideScan({ ...scene, status: 'scanned' }, 50, 'link')).toEqual({ kind: 'invalid', expire: null })
    expect(decideScan({ ...scene, status: 'denied' }, 50, 'link')).toEqual({ kind: 'invalid', expire: null })
    expect(decideScan(scene, 50, 'link')).toEqual({ kind: 'process', scene })
  })
  it('poll: scanned answers pending by default (B-scene-3); in confirm mode scanned until expires_at, denied for good (B-confirm-9)', () => {
    expect(decidePoll({ ...scene, status: 'scanned' }, 99)).toEqual({ kind: 'answer', status: 'pending', expire: null })
    expect(decidePoll({ ...scene, status: 'scanned' }, 99, 'link')).toEqual({ kind: 'answer', status: 'scanned', expire: null })
    expect(decidePoll({ ...scene, status: 'scanned' }, 100, 'link')).toMatchObject({ kind: 'answer', status: 'expired', expire: { status: 'expired' } })
    expect(decidePoll({ ...scene, status: 'denied' }, 1000, 'link')).toEqual({ kind: 'answer', status: 'denied', expire: null })
    expect(decidePoll({ ...scene, status: 'denied' }, 1000)).toEqual({ kind: 'answer', status: 'expired', expire: null })
  })
})
