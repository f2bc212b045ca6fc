/**
 * The Store methods themselves: what "absent" returns, ids, expectations and conflicts,
 * all-or-nothing commits, NEW_USER references, which authorizations a load returns, and a
 * confirmation on an authorized scene found by its ticket (`load({ confirmTicketHash })`).
 */
import { describe, expect, it } from 'vitest'
import { type SceneRecord } from '@scanauth/core'
import { NEW_USER, type ChangeSet, type NewAuthorization } from '@scanauth/core/store'
import type { ContractContext } from '../context'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

function scene(sceneStr: string): Omit<SceneRecord, 'id'> {
  return { sceneStr, deviceId: 'dev', status: 'pending', userId: null, createdAt: T0, expiresAt: T0 + 300_000, authorizedAt: null, requestedFrom: null, pollSecretHash: null, confirmation: null, version: 1 }
}

function user(openid: string) {
  return { openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }
}

function authorization(createdAt: number, status: NewAuthorization['status'] = 'pending'): NewAuthorization {
  return { type: 'points', status, startAt: createdAt, endAt: null, remainingPoints: 5, totalPoints: 5, source: 'admin', createdAt, updatedAt: createdAt }
}

const hex = (n: number) => `pc_${n.toString(16).padStart(32, '0')}`

async function commitOk(ctx: ContractContext, changes: ChangeSet) {
  const result = await ctx.store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

export function storeApiSuite(get: () => ContractContext): void {
  describe('Store API', () => {
    it('load answers null for everything absent', async () => {
      const loaded = await get().store.load({ sceneStr: hex(1), openid: 'nobody', sessionToken: 'nope', latestSessionOfScene: 99 })
      expect(loaded).toEqual({ scene: null, user: null, session: null, latestSession: null, idempotency: null, authorization: null })
      expect(await get().store.load({ idempotencyKey: 'k', authorizationId: 7 })).toMatchObject({ idempotency: null, authorization: null })
      expect((await get().store.load({ userId: 12345 })).user).toBeNull()
    })

    it('parts not asked for are null', async () => {
      const ctx = get()
      await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      const loaded = await ctx.store.load({ sceneStr: hex(1) })
      expect(loaded.user).toBeNull()
      expect(loaded.session).toBeNull()
      expect(loaded.latestSession).toBeNull()
    })

    it('assigns increasing integer ids starting at 1 and returns records as written', async () => {
      const ctx = get()
      const a = await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      const b = await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(2)) } })
      expect(a.sceneId).toBe(1)
      expect(b.sceneId).toBe(2)
      expect((await ctx.store.load({ sceneStr: hex(2) })).scene).toEqual({ ...scene(hex(2)), id: 2 })
    })

    it('refuses a second scene with the same scene_str', async () => {
      const ctx = get()
      await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      expect(await ctx.store.commit({ scene: { op: 'insert', scene: scene(hex(1)) } })).toEqual({ ok: false, conflict: 'scene' })
    })

    it('refuses a scene update on a stale version and applies nothing of that change set', async () => {
      const ctx = get()
      await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      const stored = (await ctx.store.load({ sceneStr: hex(1) })).scene as SceneRecord
      await commitOk(ctx, { scene: { op: 'update', scene: { ...stored, status: 'expired', version: 2 }, expectedVersion: 1 } })
      const stale = await ctx.store.commit({
        scene: { op: 'update', scene: { ...stored, status: 'authorized', userId: NEW_USER, version: 2 }, expectedVersion: 1 },
        user: { op: 'insert', user: user('o-stale'), insertAuthorizations: [authorization(T0)] },
      })
      expect(stale).toEqual({ ok: false, conflict: 'scene' })
      expect((await ctx.store.load({ openid: 'o-stale' })).user).toBeNull()
      expect((await ctx.store.load({ sceneStr: hex(1) })).scene?.status).toBe('expired')
      expect((await ctx.dump()).authorizations).toHaveLength(0)
    })

    it('refuses a user insert whose openid exists, and a user update on a stale version', async () => {
      const ctx = get()
      const ids = await commitOk(ctx, { user: { op: 'insert', user: user('o1'), insertAuthorizations: [] } })
      expect(await ctx.store.commit({ user: { op: 'insert', user: user('o1'), insertAuthorizations: [] } })).toEqual({ ok: false, conflict: 'user' })
      const loaded = (await ctx.store.load({ openid: 'o1' })).user
      expect(loaded?.user).toEqual({ ...user('o1'), id: ids.userId })
      const next = { ...user('o1'), id: ids.userId as number, version: 2 }
      await commitOk(ctx, { user: { op: 'update', user: next, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [] } })
      expect(
        await ctx.store.commit({ user: { op: 'update', user: next, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [] } }),
      ).toEqual({ ok: false, conflict: 'user' })
    })

    it('resolves NEW_USER in the scene and the session to the inserted user', async () => {
      const ctx = get()
      const created = await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      const stored = (await ctx.store.load({ sceneStr: hex(1) })).scene as SceneRecord
      const ids = await commitOk(ctx, {
        scene: { op: 'update', scene: { ...stored, status: 'authorized', userId: NEW_USER, authorizedAt: T0, version: 2 }, expectedVersion: 1 },
        user: { op: 'insert', user: user('o-new'), insertAuthorizations: [authorization(T0, 'active')] },
        session: { token: 'tok-1', userId: NEW_USER, deviceId: 'dev', sceneId: created.sceneId as number, createdAt: T0, expiresAt: T0 + 1000 },
      })
      expect(ids.userId).toBeGreaterThan(0)
      expect(ids.sessionId).toBeGreaterThan(0)
      expect(ids.authorizationIds).toHaveLength(1)
      const loaded = await ctx.store.load({ sceneStr: hex(1), sessionToken: 'tok-1', latestSessionOfScene: stored.id, userId: ids.userId as number })
      expect(loaded.scene?.userId).toBe(ids.userId)
      expect(loaded.session).toEqual({ token: 'tok-1', userId: ids.userId, deviceId: 'dev', sceneId: stored.id, createdAt: T0, expiresAt: T0 + 1000, id: ids.sessionId })
      expect(loaded.latestSession).toEqual(loaded.session)
      expect(loaded.user?.authorizations[0]).toMatchObject({ id: ids.authorizationIds[0], userId: ids.userId, status: 'active' })
    })

    it('loads the latest session of a scene: the one with the highest id', async () => {
      const ctx = get()
      const u = await commitOk(ctx, { user: { op: 'insert', user: user('o1'), insertAuthorizations: [] } })
      const base = { userId: u.userId as number, deviceId: 'dev', sceneId: 7, createdAt: T0, expiresAt: T0 + 1000 }
      const first = await commitOk(ctx, { session: { ...base, token: 'a' } })
      const second = await commitOk(ctx, { session: { ...base, token: 'b' } })
      expect(second.sessionId).toBeGreaterThan(first.sessionId as number)
      expect((await ctx.store.load({ latestSessionOfScene: 7 })).latestSession?.token).toBe('b')
    })

    it('loads the active authorizations and the head of the queue; the whole queue when asked', async () => {
      const ctx = get()
      const ids = await commitOk(ctx, {
        user: {
          op: 'insert',
          user: user('o1'),
          insertAuthorizations: [authorization(T0 + 5), authorization(T0 + 1), authorization(T0 + 1), { ...authorization(T0), status: 'expired' }, { ...authorization(T0), status: 'active' }],
        },
      })
      const [late, tieA, tieB, , active] = ids.authorizationIds
      const loaded = (await ctx.store.load({ userId: ids.userId as number })).user
      expect(loaded?.authorizations.map((a) => a.id)).toEqual([active, tieA])
      const whole = (await ctx.store.load({ userId: ids.userId as number, wholeQueue: true })).user
      expect(whole?.authorizations.map((a) => a.id)).toEqual([active, tieA, tieB, late])
      expect((await ctx.store.load({ openid: 'o1', wholeQueue: true })).user?.authorizations.map((a) => a.id)).toEqual([active, tieA, tieB, late])
      // An update that retires one removes it from what a load returns; the next in line becomes the head.
      const retire = (index: number, status: 'exhausted' | 'revoked') => ({ ...(whole?.authorizations[index] as NonNullable<typeof whole>['authorizations'][number]), status })
      await commitOk(ctx, {
        user: {
          op: 'update',
          user: { ...(loaded?.user as NonNullable<typeof loaded>['user']), version: 2 },
          expectedVersion: 1,
          insertAuthorizations: [],
          updateAuthorizations: [retire(0, 'exhausted'), retire(1, 'revoked')],
        },
      })
      expect((await ctx.store.load({ openid: 'o1' })).user?.authorizations.map((a) => a.id)).toEqual([tieB])
      expect((await ctx.store.load({ openid: 'o1', wholeQueue: true })).user?.authorizations.map((a) => a.id)).toEqual([tieB, late])
      expect((await ctx.dump()).authorizations).toHaveLength(5)
      // Any authorization loads by id, whatever its status.
      expect((await ctx.store.load({ authorizationId: tieA as number })).authorization).toMatchObject({ id: tieA, status: 'revoked', userId: ids.userId })
      expect((await ctx.store.load({ authorizationId: active as number })).authorization).toMatchObject({ id: active, status: 'exhausted' })
    })

    it('stores a confirmation on an authorized scene as written, finds it by its ticket, and forgets the ticket with the confirmation', async () => {
      // Core keeps the phone-pay ticket of a scan that ended in need_purchase this way (docs/behaviour.md
      // B-phone-2): the scene authorized for its user, the confirmation holding the ticket's digest.
      const ctx = get()
      const created = await commitOk(ctx, { scene: { op: 'insert', scene: scene(hex(1)) } })
      const confirmation = { scannedBy: 'o-pay', scannedAt: T0 + 1_000, ticketHash: 'tH-1_pay', csrfHash: null }
      const ids = await commitOk(ctx, {
        scene: {
          op: 'update',
          scene: { ...scene(hex(1)), id: created.sceneId as number, status: 'authorized', userId: NEW_USER, authorizedAt: T0 + 1_000, confirmation, version: 2 },
          expectedVersion: 1,
        },
        user: { op: 'insert', user: user('o-pay'), insertAuthorizations: [] },
      })
      const authorized: SceneRecord = {
        ...scene(hex(1)), id: created.sceneId as number, status: 'authorized', userId: ids.userId as number, authorizedAt: T0 + 1_000, confirmation, version: 2,
      }
      expect((await ctx.store.load({ confirmTicketHash: confirmation.ticketHash })).scene).toStrictEqual(authorized)
      expect((await ctx.store.load({ sceneStr: hex(1) })).scene).toStrictEqual(authorized)

      const cleared = { ...authorized, confirmation: null, version: 3 }
      await commitOk(ctx, { scene: { op: 'update', scene: cleared, expectedVersion: 2 } })
      expect((await ctx.store.load({ confirmTicketHash: confirmation.ticketHash })).scene).toBeNull()
      expect((await ctx.store.load({ sceneStr: hex(1) })).scene).toStrictEqual(cleared)
    })

    it('puts a pending authorization activated by an update out of the queue', async () => {
      const ctx = get()
      const ids = await commitOk(ctx, { user: { op: 'insert', user: user('o1'), insertAuthorizations: [authorization(T0), authorization(T0 + 1)] } })
      const loaded = (await ctx.store.load({ userId: ids.userId as number })).user as NonNullable<Awaited<ReturnType<typeof ctx.store.load>>['user']>
      const head = loaded.authorizations[0] as (typeof loaded.authorizations)[number]
      await commitOk(ctx, {
        user: { op: 'update', user: { ...loaded.user, version: 2 }, expectedVersion: 1, insertAuthorizations: [], updateAuthorizations: [{ ...head, status: 'active' }] },
      })
      const after = (await ctx.store.load({ userId: ids.userId as number })).user
      expect(after?.authorizations.map((a) => [a.id, a.status])).toEqual([
        [ids.authorizationIds[0], 'active'],
        [ids.authorizationIds[1], 'pending'],
      ])
    })
  })
}
