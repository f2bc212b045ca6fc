/**
 * The Store methods behind the entitlement operations: ledger entries appended in the commit and
 * read back by `listLedger`, idempotency records and their conflict, references to authorizations
 * inserted by the same commit, and `endSessions`.
 */
import { describe, expect, it } from 'vitest'
import { NEW_USER, type ChangeSet, type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'
import type { ContractContext } from '../context'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

const user = (openid: string) => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })

const points = (n: number, status: NewAuthorization['status'] = 'pending'): NewAuthorization => ({
  type: 'points',
  status,
  startAt: T0,
  endAt: null,
  remainingPoints: n,
  totalPoints: n,
  source: 'purchase',
  createdAt: T0,
  updatedAt: T0,
})

const entry = (over: Partial<NewLedgerEntry> & Pick<NewLedgerEntry, 'authorizationId'>): NewLedgerEntry => ({
  userId: NEW_USER,
  kind: 'grant',
  points: 5,
  remainingPoints: 5,
  at: T0,
  source: 'purchase',
  idempotencyKey: null,
  reason: null,
  ...over,
})

async function commitOk(ctx: ContractContext, changes: ChangeSet) {
  const result = await ctx.store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

export function storeEntitlementApiSuite(get: () => ContractContext): void {
  describe('Store API: ledger, idempotency, sessions', () => {
    it('appends ledger entries with increasing ids, resolving NEW_USER and inserted authorizations', async () => {
      const ctx = get()
      const ids = await commitOk(ctx, {
        user: { op: 'insert', user: user('o1'), insertAuthorizations: [points(5), points(3, 'active')] },
        ledger: [
          entry({ authorizationId: { inserted: 0 }, idempotencyKey: 'pay-1' }),
          entry({ authorizationId: { inserted: 1 }, points: 3, remainingPoints: 3 }),
          entry({ authorizationId: { inserted: 1 }, kind: 'activate', points: 0, remainingPoints: 3, source: null }),
        ],
      })
      const userId = ids.userId as number
      const [first, second] = ids.authorizationIds as [number, number]
      const entries = await ctx.store.listLedger({ userId, afterId: 0, limit: 10 })
      expect(entries.map((e) => [e.authorizationId, e.kind])).toEqual([
        [first, 'grant'],
        [second, 'grant'],
        [second, 'activate'],
      ])
      expect(entries[0]).toEqual({
        id: expect.any(Number),
        userId,
        authorizationId: first,
        kind: 'grant',
        points: 5,
        remainingPoints: 5,
        at: T0,
        source: 'purchase',
        idempotencyKey: 'pay-1',
        reason: null,
      })
      const entryIds = entries.map((e) => e.id)
      expect(entryIds).toEqual([...entryIds].sort((a, b) => a - b))
      expect(new Set(entryIds).size).toBe(3)
    })

    it('pages the ledger by afterId and limit, one user at a time', async () => {
      const ctx = get()
      const a = await commitOk(ctx, { user: { op: 'insert', user: user('a'), insertAuthorizations: [points(1)] }, ledger: [entry({ authorizationId: { inserted: 0 } })] })
      const b = await commitOk(ctx, { user: { op: 'insert', user: user('b'), insertAuthorizations: [points(1)] }, ledger: [entry({ authorizationId: { inserted: 0 } })] })
      const aId = a.userId as number
      const more = Array.from({ length: 4 }, () => entry({ userId: aId, authorizationId: a.authorizationIds[0] as number, kind: 'consume', points: -1, remainingPoints: 0, source: null }))
      const loaded = (await ctx.store.load({ userId: aId })).user
      await commitOk(ctx, {
        user: { op: 'update', user: { ...(loaded?.user as NonNullable<typeof loaded>['user']), version: 2 }, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [] },
        ledger: more,
      })
      const all = await ctx.store.listLedger({ userId: aId, afterId: 0, limit: 100 })
      expect(all).toHaveLength(5)
      expect(all.every((e) => e.userId === aId)).toBe(true)
      const page1 = await ctx.store.listLedger({ userId: aId, afterId: 0, limit: 2 })
      const page2 = await ctx.store.listLedger({ userId: aId, afterId: (page1[1] as { id: number }).id, limit: 2 })
      const page3 = await ctx.store.listLedger({ userId: aId, afterId: (page2[1] as { id: number }).id, limit: 2 })
      expect([...page1, ...page2, ...page3].map((e) => e.id)).toEqual(all.map((e) => e.id))
      expect(await ctx.store.listLedger({ userId: b.userId as number, afterId: 0, limit: 100 })).toHaveLength(1)
      expect(await ctx.store.listLedger({ userId: 999, afterId: 0, limit: 100 })).toEqual([])
    })

    it('records an idempotency key once: a second record with the key is a conflict, and nothing of it applies', async () => {
      const ctx = get()
      const ids = await commitOk(ctx, {
        user: { op: 'insert', user: user('o1'), insertAuthorizations: [points(5)] },
        ledger: [entry({ authorizationId: { inserted: 0 } })],
        idempotency: { key: 'pay-1', fingerprint: 'f1', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
      })
      expect((await ctx.store.load({ idempotencyKey: 'pay-1' })).idempotency).toEqual({
        key: 'pay-1',
        fingerprint: 'f1',
        authorizationId: ids.authorizationIds[0],
        result: null,
        createdAt: T0,
      })
      const again = await ctx.store.commit({
        user: { op: 'insert', user: user('o2'), insertAuthorizations: [points(5)] },
        ledger: [entry({ authorizationId: { inserted: 0 } })],
        idempotency: { key: 'pay-1', fingerprint: 'f2', authorizationId: { inserted: 0 }, result: null, createdAt: T0 },
      })
      expect(again).toEqual({ ok: false, conflict: 'idempotency' })
      expect((await ctx.store.load({ openid: 'o2' })).user).toBeNull()
      const dump = await ctx.dump()
      expect(dump.authorizations).toHaveLength(1)
      expect(dump.ledger).toHaveLength(1)
      expect(dump.idempotency).toHaveLength(1)
      // A record that carries a result instead of an authorization (a consumption) round-trips as written.
      await commitOk(ctx, { idempotency: { key: 'use-1', fingerprint: 'f3', authorizationId: null, result: '{"status":"need_purchase"}', createdAt: T0 + 1 } })
      expect((await ctx.store.load({ idempotencyKey: 'use-1' })).idempotency).toEqual({
        key: 'use-1',
        fingerprint: 'f3',
        authorizationId: null,
        result: '{"status":"need_purchase"}',
        createdAt: T0 + 1,
      })
    })

    it('ends sessions by token or by user: only live ones, each once', async () => {
      const ctx = get()
      const u = await commitOk(ctx, { user: { op: 'insert', user: user('o1'), insertAuthorizations: [] } })
      const other = await commitOk(ctx, { user: { op: 'insert', user: user('o2'), insertAuthorizations: [] } })
      const session = (token: string, userId: number, sceneId: number, expiresAt: number) =>
        commitOk(ctx, { session: { token, userId, deviceId: 'dev', sceneId, createdAt: T0, expiresAt } })
      const uid = u.userId as number
      await session('live-1', uid, 1, T0 + 10_000)
      await session('live-2', uid, 2, T0 + 10_000)
      await session('over', uid, 3, T0 + 100)
      await session('theirs', other.userId as number, 4, T0 + 10_000)

      expect(await ctx.store.endSessions({ token: 'live-1' }, T0 + 1000)).toBe(1)
      expect(await ctx.store.endSessions({ token: 'live-1' }, T0 + 1000)).toBe(0)
      expect(await ctx.store.endSessions({ token: 'unknown' }, T0 + 1000)).toBe(0)
      const ended = await ctx.store.load({ sessionToken: 'live-1', latestSessionOfScene: 1 })
      expect(ended.session?.expiresAt).toBe(T0 + 1000)
      expect(ended.latestSession?.expiresAt).toBe(T0 + 1000)

      // live-2 is the only one of the user still live at T0 + 1000 ('over' expired at T0 + 100).
      expect(await ctx.store.endSessions({ userId: uid }, T0 + 1000)).toBe(1)
      expect((await ctx.store.load({ sessionToken: 'live-2' })).session?.expiresAt).toBe(T0 + 1000)
      expect((await ctx.store.load({ sessionToken: 'over' })).session?.expiresAt).toBe(T0 + 100)
      expect((await ctx.store.load({ sessionToken: 'theirs' })).session?.expiresAt).toBe(T0 + 10_000)
      expect(await ctx.store.endSessions({ userId: uid }, T0 + 1000)).toBe(0)
      expect(await ctx.store.endSessions({ userId: 999 }, T0 + 1000)).toBe(0)
    })
  })
}
