// The ledger read off a user draft (rules/ledger.ts) and the idempotency rules (rules/idempotency.ts),
// as pure functions: no store, no clock.
import { describe, expect, it } from 'vitest'
import type { AuthorizationRecord } from '../src/store/records'
import { newPointsAuthorization, revoke, runActivationStep, spend } from '../src/rules/authorizations'
import { fingerprintOf, isRepeat } from '../src/rules/idempotency'
import { ledgerEntries } from '../src/rules/ledger'
import { addAuthorization, draftUser, newUser, withAuthorizations } from '../src/rules/user'
import { NEW_USER } from '../src/store/contract'

const T = 1_000_000

function stored(id: number, over: Partial<AuthorizationRecord>): AuthorizationRecord {
  return { id, userId: 9, type: 'points', status: 'pending', startAt: T, endAt: null, remainingPoints: 5, totalPoints: 5, source: 'admin', createdAt: T + id, updatedAt: T, ...over }
}

const user = { id: 9, openid: 'o', createdAt: T, lastSeenAt: T, hasClaimedFree: true, version: 3 }

describe('ledgerEntries', () => {
  it('records nothing when nothing changed', () => {
    expect(ledgerEntries(draftUser({ user, authorizations: [stored(1, { status: 'active' })] }), { now: T })).toEqual([])
  })

  it('a grant to a new user: grant (+points) and activate, referring to the inserted user and authorization', () => {
    let draft = addAuthorization(newUser('o', T), newPointsAuthorization({ now: T, points: 4, source: 'purchase' }))
    draft = withAuthorizations(draft, runActivationStep(draft.authorizations, T))
    expect(ledgerEntries(draft, { now: T, idempotencyKey: 'k' })).toEqual([
      { userId: NEW_USER, authorizationId: { inserted: 0 }, kind: 'grant', points: 4, remainingPoints: 4, at: T, source: 'purchase', idempotencyKey: 'k', reason: null },
      { userId: NEW_USER, authorizationId: { inserted: 0 }, kind: 'activate', points: 0, remainingPoints: 4, at: T, source: null, idempotencyKey: null, reason: null },
    ])
  })

  it('orders what ended before what began, and a consumption last, with the points at each step', () => {
    const draft = draftUser({ user, authorizations: [stored(1, { status: 'active', remainingPoints: 0 }), stored(2, {})] })
    const activated = runActivationStep(draft.authorizations, T + 10)
    const outcome = spend(activated, activated[1] ?? null, 2, T + 10)
    if (outcome.status !== 'ok') throw new Error('expected a spend')
    const entries = ledgerEntries(withAuthorizations(draft, outcome.list), { now: T + 10, idempotencyKey: 'use' })
    expect(entries.map((e) => [e.kind, e.authorizationId, e.points, e.remainingPoints, e.idempotencyKey])).toEqual([
      ['exhaust', 1, 0, 0, null],
      ['activate', 2, 0, 5, null],
      ['consume', 2, -2, 3, 'use'],
    ])
  })

  it('a revocation carries its reason', () => {
    const draft = draftUser({ user, authorizations: [stored(1, { status: 'active' })] })
    const list = draft.authorizations.map((a) => revoke(a, T + 1))
    expect(ledgerEntries(withAuthorizations(draft, list), { now: T + 1, reason: 'refund' })).toEqual([
      { userId: 9, authorizationId: 1, kind: 'revoke', points: 0, remainingPoints: 5, at: T + 1, source: null, idempotencyKey: null, reason: 'refund' },
    ])
  })
})

describe('idempotency', () => {
  it('a fingerprint depends on the operation and every parameter, and hides a token', () => {
    const a = fingerprintOf('consume', ['secret-token', 1])
    expect(a).toBe(fingerprintOf('consume', ['secret-token', 1]))
    expect(a).not.toBe(fingerprintOf('consume', ['secret-token', 2]))
    expect(a).not.toBe(fingerprintOf('grant', ['secret-token', 1]))
    expect(a).not.toContain('secret')
  })

  it('a record with another fingerprint is a conflict (409); none is a first call', () => {
    const record = { key: 'k', fingerprint: 'f', authorizationId: 1, result: null, createdAt: T }
    expect(isRepeat(null, 'f')).toBe(false)
    expect(isRepeat(record, 'f')).toBe(true)
    expect(() => isRepeat(record, 'g')).toThrow(expect.objectContaining({ code: 'idempotency_conflict', status: 409 }))
  })
})
