/**
 * The operator reads of the Store (`listLiveSessions`, `listUsers`, `schemaState`, and `migrate`
 * where a store has it), which an operator's tools (`@scanauth/cli`, a console) read a store with:
 * each listing answers records exactly as `load` does, in its order, in keyset pages after (or
 * before) an exclusive cursor, a short page being the last; what is not live, or not the user's,
 * is left out. `listOrders` is in `store-api-order-listing.ts`, registered here.
 *
 * Every scanauth store has these methods, so a store without one fails here rather than skipping,
 * as with the order methods. The query types are taken from the `Store` interface itself.
 */
import { describe, expect, it } from 'vitest'
import type { SessionRecord, Store, UserRecord } from '@scanauth/core'
import { NEW_USER } from '@scanauth/core/store'
import type { ContractContext } from '../context'
import { operatorRead, storeOrderListingSuite } from './store-api-order-listing'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** Commits `changes`, failing the test when the store refuses them; answers the ids assigned. */
async function commitOk(ctx: ContractContext, changes: Parameters<Store['commit']>[0]) {
  const result = await ctx.store.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

/** Inserts a user with one session; answers the user's id. */
async function userWithSession(ctx: ContractContext, openid: string, token: string, createdAt: number, expiresAt: number): Promise<number> {
  const ids = await commitOk(ctx, {
    user: { op: 'insert', user: { openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] },
    session: { token, userId: NEW_USER, deviceId: `device of ${token}`, sceneId: 1, createdAt, expiresAt },
  })
  return ids.userId as number
}

/** Adds a session of an existing user. */
async function addSession(ctx: ContractContext, userId: number, token: string, createdAt: number, expiresAt: number, sceneId = 2): Promise<void> {
  await commitOk(ctx, { session: { token, userId, deviceId: `device of ${token}|😀`, sceneId, createdAt, expiresAt } })
}

/** Each session as `load` answers it. */
async function loaded(store: Store, tokens: string[]): Promise<SessionRecord[]> {
  return Promise.all(tokens.map(async (sessionToken) => (await store.load({ sessionToken })).session as SessionRecord))
}

/** Registers the operator-read cases of the Store contract (see the module comment). */
export function storeOperatorReadsSuite(get: () => ContractContext): void {
  describe('Store API: operator reads', () => {
    it("listLiveSessions: the user's sessions live at now, newest first, in pages before an exclusive cursor; the ended, the expired and others' left out", async () => {
      const ctx = get()
      const now = T0 + 10 * MINUTE
      // Lifetimes differ on purpose: the newest session is not the one that expires last.
      const alice = await userWithSession(ctx, 'alice', 'a-1', T0, T0 + 3 * HOUR)
      const bob = await userWithSession(ctx, 'bob', 'b-1', T0, T0 + HOUR)
      await addSession(ctx, alice, 'a-2', T0 + MINUTE, T0 + 2 * MINUTE) // expired before now
      await addSession(ctx, alice, 'a-3', T0 + 2 * MINUTE, T0 + HOUR)
      await addSession(ctx, alice, 'a-4', T0 + 3 * MINUTE, now) // expires at now: over (B-expiry-1)
      await addSession(ctx, alice, 'a-5', T0 + 4 * MINUTE, now + 1)
      await addSession(ctx, alice, 'a-6', T0 + 5 * MINUTE, T0 + HOUR) // ended below
      await addSession(ctx, bob, 'b-2', T0 + 5 * MINUTE, T0 + HOUR)
      await addSession(ctx, alice, 'a-7', T0 + 6 * MINUTE, T0 + HOUR, 3)
      await addSession(ctx, alice, 'a-8', T0 + 7 * MINUTE, T0 + 2 * HOUR, 3)
      expect(await ctx.store.endSessions({ token: 'a-6' }, T0 + 8 * MINUTE)).toBe(1)

      const list = operatorRead(ctx.store, 'listLiveSessions')
      const live = await loaded(ctx.store, ['a-8', 'a-7', 'a-5', 'a-3', 'a-1'])
      expect(live.map((s) => s.id)).toEqual([...live.map((s) => s.id)].sort((x, y) => y - x))
      expect(await list({ userId: alice, now, limit: 1000 })).toStrictEqual(live)

      // Pages of two: each starts below the last id of the one before; the short one is the last.
      const pages: SessionRecord[][] = []
      let beforeId: number | undefined
      for (;;) {
        const page = await list(beforeId === undefined ? { userId: alice, now, limit: 2 } : { userId: alice, now, beforeId, limit: 2 })
        pages.push(page)
        if (page.length < 2) break
        beforeId = (page[page.length - 1] as SessionRecord).id
      }
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
      expect(pages.flat()).toStrictEqual(live)
      // A cursor that names a session not listed (the ended one): the live ones below it.
      const ended = (await ctx.store.load({ sessionToken: 'a-6' })).session as SessionRecord
      expect(await list({ userId: alice, now, beforeId: ended.id, limit: 2 })).toStrictEqual(live.slice(2, 4))
      expect(await list({ userId: alice, now, beforeId: (live[4] as SessionRecord).id, limit: 2 })).toEqual([])

      expect(await list({ userId: bob, now, limit: 10 })).toStrictEqual(await loaded(ctx.store, ['b-2', 'b-1']))
      expect(await list({ userId: bob + alice + 1000, now, limit: 10 })).toEqual([])
      // Later: only what outlives that moment.
      expect(await list({ userId: alice, now: T0 + HOUR, limit: 10 })).toStrictEqual(await loaded(ctx.store, ['a-8', 'a-1']))
      expect(await list({ userId: alice, now: T0 + 3 * HOUR, limit: 10 })).toEqual([])
      // Signed out everywhere: none.
      await ctx.store.endSessions({ userId: alice }, now + 2)
      expect(await list({ userId: alice, now: now + 2, limit: 10 })).toEqual([])
    })

    it('listUsers: every user by id, in pages after an exclusive cursor, each exactly as load answers it, from any connection', async () => {
      const ctx = get()
      const list = operatorRead(ctx.store, 'listUsers')
      expect(await list({ limit: 10 })).toEqual([])
      // Openids with what a packed record or a query could trip over.
      const openids = ['o-1', 'o|2|😀', "o'3\"%_", 'o-4', 'o 5 空', 'o-6', 'o-7']
      for (const openid of openids) await ctx.auth.grant({ openid, type: 'points', points: 1 })
      // A user written again keeps its place (id order, not write order).
      await ctx.auth.grant({ openid: 'o|2|😀', type: 'points', points: 2 })
      const users: UserRecord[] = []
      for (const openid of openids) users.push((await ctx.store.load({ openid })).user?.user as UserRecord)
      expect(users.map((u) => u.id)).toEqual([...users.map((u) => u.id)].sort((x, y) => x - y))
      expect(users[1]?.version).toBeGreaterThan(1)

      expect(await list({ limit: 1000 })).toStrictEqual(users)
      expect(await list({ afterId: 0, limit: 2 })).toStrictEqual(users.slice(0, 2))
      const pages: UserRecord[][] = []
      let afterId = 0
      for (;;) {
        const page = await list({ afterId, limit: 3 })
        pages.push(page)
        if (page.length < 3) break
        afterId = (page[page.length - 1] as UserRecord).id
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1])
      expect(pages.flat()).toStrictEqual(users)
      expect(await list({ afterId: (users[2] as UserRecord).id, limit: 2 })).toStrictEqual(users.slice(3, 5))
      expect(await list({ afterId: (users[6] as UserRecord).id, limit: 3 })).toEqual([])

      if (ctx.harness.openPeer !== undefined) {
        const peer = await ctx.harness.openPeer()
        expect(await operatorRead(peer, 'listUsers')({ limit: 1000 })).toStrictEqual(users)
      }
    })

    it('schemaState: a fresh store is usable and says so, holds the latest version once written to; migrate, where a store has it, changes nothing on it', async () => {
      const ctx = get()
      const schemaState = operatorRead(ctx.store, 'schemaState')
      const fresh = await schemaState()
      expect(Number.isSafeInteger(fresh.latest) && fresh.latest >= 1, `latest ${fresh.latest}`).toBe(true)
      // 0 only where a fresh backend needs nothing created first (a Redis prefix).
      expect([0, fresh.latest]).toContain(fresh.version)
      expect(fresh).toMatchObject({ pending: [], exists: true })

      await ctx.auth.grant({ openid: 'o-1', type: 'points', points: 1 })
      const written = await schemaState()
      expect(written).toStrictEqual({ ...fresh, version: fresh.latest })

      if (ctx.store.migrate !== undefined) {
        const before = await ctx.dump()
        expect(await ctx.store.migrate()).toStrictEqual({ from: fresh.latest, to: fresh.latest })
        expect(await ctx.dump()).toEqual(before)
        expect(await schemaState()).toStrictEqual(written)
      }
    })
  })
  storeOrderListingSuite(get)
}
