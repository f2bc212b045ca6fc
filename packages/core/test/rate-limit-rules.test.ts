// The rate limits' pure rules (docs/behaviour.md, B-rate-2…8, B-rate-10…12): windows, keys, the two
// stages of scene creation's checks, the purchase checks, the decision and its Retry-After, and how an
// address is counted.
import { describe, expect, it } from 'vitest'
import {
  addressSubject,
  BUDGET_WINDOW_SECONDS,
  counterKey,
  decide,
  isWithin,
  purchaseChecks,
  purchaseCounterKey,
  sceneChecks,
  secondsUntilEnd,
  windowOf,
  type SceneLimits,
} from '../src/rules/rate-limits'

const MINUTE = 60_000
const T = Date.parse('2026-03-04T05:06:30.250Z')
const LIMITS: SceneLimits = { perDevice: { limit: 10, windowSeconds: 60 }, perAddress: { limit: 30, windowSeconds: 60 }, dailyQrBudget: 90_000 }

describe('windowOf: fixed windows aligned to the epoch (B-rate-2)', () => {
  it('holds now in [start, end), the same for every instant of the window', () => {
    const w = windowOf(T, 60)
    expect(new Date(w.start).toISOString()).toBe('2026-03-04T05:06:00.000Z')
    expect(w.end - w.start).toBe(MINUTE)
    expect(windowOf(w.start, 60)).toEqual(w)
    expect(windowOf(w.end - 1, 60)).toEqual(w)
    expect(windowOf(w.end, 60).start).toBe(w.end)
  })

  it('a window of a day is the UTC day', () => {
    const day = windowOf(T, BUDGET_WINDOW_SECONDS)
    expect(new Date(day.start).toISOString()).toBe('2026-03-04T00:00:00.000Z')
    expect(new Date(day.end).toISOString()).toBe('2026-03-05T00:00:00.000Z')
  })
})

describe('the decision (B-rate-3, B-rate-8)', () => {
  it('lets the first `limit` calls of a window through', () => {
    expect(isWithin(1, 1)).toBe(true)
    expect(isWithin(10, 10)).toBe(true)
    expect(isWithin(11, 10)).toBe(false)
  })

  it('Retry-After is the whole seconds to the end of the window, rounded up, at least 1', () => {
    const w = windowOf(T, 60)
    expect(secondsUntilEnd(w, T)).toBe(30) // 29.75 s left
    expect(secondsUntilEnd(w, w.start)).toBe(60)
    expect(secondsUntilEnd(w, w.end - 1)).toBe(1)
    expect(secondsUntilEnd(w, w.end)).toBe(1)
  })

  it('refuses when any check is over, with the longest wait among those that refuse', () => {
    const { first } = sceneChecks({ deviceId: 'tv', clientAddress: '192.0.2.1', now: T, limits: { ...LIMITS, perAddress: { limit: 30, windowSeconds: 3600 } } })
    expect(decide(first, [10, 30], T)).toBeNull()
    expect(decide(first, [11, 30], T)).toEqual({ kinds: ['device'], retryAfterSeconds: 30 })
    expect(decide(first, [11, 31], T)).toEqual({ kinds: ['device', 'address'], retryAfterSeconds: 3210 })
  })
})

describe('sceneChecks: what scene creation counts (B-rate-4…7)', () => {
  it('counts the device and the address first, the budget in a stage of its own', () => {
    const { first, budget } = sceneChecks({ deviceId: 'tv-1', clientAddress: '192.0.2.1', now: T, limits: LIMITS })
    const minute = windowOf(T, 60)
    expect(first).toEqual([
      { kind: 'device', key: `ratelimit:create_scene:device:${minute.start}:tv-1`, limit: 10, window: minute },
      { kind: 'address', key: `ratelimit:create_scene:address:${minute.start}:192.0.2.1`, limit: 30, window: minute },
    ])
    const day = windowOf(T, BUDGET_WINDOW_SECONDS)
    expect(budget).toEqual({ kind: 'budget', key: `ratelimit:create_scene:budget:${day.start}:`, limit: 90_000, window: day })
  })

  it('has no address counter without an address, and none for a limit turned off', () => {
    expect(sceneChecks({ deviceId: 'tv', clientAddress: undefined, now: T, limits: LIMITS }).first.map((c) => c.kind)).toEqual(['device'])
    const off = sceneChecks({ deviceId: 'tv', clientAddress: '192.0.2.1', now: T, limits: { perDevice: false, perAddress: false, dailyQrBudget: false } })
    expect(off).toEqual({ first: [], budget: null })
  })

  it('keys name the window, so the next window counts from zero under a new key', () => {
    const now = sceneChecks({ deviceId: 'tv', clientAddress: undefined, now: T, limits: LIMITS }).first[0]
    const next = sceneChecks({ deviceId: 'tv', clientAddress: undefined, now: T + MINUTE, limits: LIMITS }).first[0]
    expect(now?.key).not.toBe(next?.key)
    expect(now?.window.end).toBe(next?.window.start)
  })

  it('puts the subject last, so no device id can make two keys collide, and keeps keys within 512 characters', () => {
    const w = windowOf(T, 60)
    expect(counterKey('device', w, 'a:b')).not.toBe(counterKey('address', w, 'b'))
    expect(counterKey('device', w, 'x'.repeat(128)).length).toBeLessThan(512)
  })
})

describe('purchaseChecks: what a purchase counts (B-rate-10…12)', () => {
  const PURCHASES = { purchasesPerUser: { limit: 10, windowSeconds: 600 }, purchasesPerAddress: { limit: 30, windowSeconds: 600 } }

  it('counts the buyer and the address together, in windows of their own', () => {
    const checks = purchaseChecks({ userId: 42, clientAddress: '::ffff:192.0.2.9', now: T, limits: PURCHASES })
    const window = windowOf(T, 600)
    expect(checks).toEqual([
      { kind: 'purchase_user', key: `ratelimit:purchase:user:${window.start}:42`, limit: 10, window },
      { kind: 'purchase_address', key: `ratelimit:purchase:address:${window.start}:192.0.2.9`, limit: 30, window },
    ])
    expect(new Date(window.start).toISOString()).toBe('2026-03-04T05:00:00.000Z')
    expect(decide(checks, [11, 1], T)).toEqual({ kinds: ['purchase_user'], retryAfterSeconds: secondsUntilEnd(window, T) })
    expect(decide(checks, [10, 31], T)).toEqual({ kinds: ['purchase_address'], retryAfterSeconds: 210 })
  })

  it('has no address counter without an address, none for a limit turned off, and keys apart from scene creation\'s', () => {
    expect(purchaseChecks({ userId: 1, clientAddress: undefined, now: T, limits: PURCHASES }).map((c) => c.kind)).toEqual(['purchase_user'])
    expect(purchaseChecks({ userId: 1, clientAddress: '192.0.2.1', now: T, limits: { purchasesPerUser: false, purchasesPerAddress: false } })).toEqual([])
    const w = windowOf(T, 60)
    expect(purchaseCounterKey('purchase_address', w, '192.0.2.1')).not.toBe(counterKey('address', w, '192.0.2.1'))
    // An IPv6 client counts as its /64, as for scene creation.
    const [, v6] = purchaseChecks({ userId: 1, clientAddress: '2001:db8:1:2:aaaa::1', now: T, limits: PURCHASES })
    expect(v6?.key.endsWith(':2001:db8:1:2::/64')).toBe(true)
  })
})

describe('addressSubject: how a client address is counted (B-rate-5)', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::7', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['1:2:3:4:5:6:192.0.2.1', '1:2:3:4::/64'],
  ])('%s counts as %s', (address, subject) => {
    expect(addressSubject(address)).toBe(subject)
  })

  it('keeps anything that is not an IP address as it is', () => {
    for (const other of ['client-42', '1:2:3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::1', '12345::1', 'unknown']) {
      expect(addressSubject(other)).toBe(other)
    }
  })

  it('counts every address of one /64 together, and neighbouring networks apart', () => {
    expect(addressSubject('2001:db8:1:2::a')).toBe(addressSubject('2001:db8:1:2:ffff::b'))
    expect(addressSubject('2001:db8:1:2::a')).not.toBe(addressSubject('2001:db8:1:3::a'))
  })
})
