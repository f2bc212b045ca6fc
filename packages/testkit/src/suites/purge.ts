/**
 * `purgeExpired`, the same on every store (docs/behaviour.md, D-retention): it takes the service's
 * `now` and nothing else decides time; it never deletes what a device or an audit still needs
 * (a scene while it or its latest session lives, a live session or counter, and users,
 * authorizations, ledger entries and idempotency keys ever); and, on a store that deletes rows
 * itself, it deletes what is no longer needed, `retentionMs` later, in batches.
 *
 * A store whose backend forgets records by itself (Redis TTLs; `expiresByItself` in the harness)
 * must do the opposite of the last part: its purge deletes no scene, session or counter. (Closed
 * orders never expire by themselves: every store's purge deletes them, `store-api-order-purge.ts`.)
 */
import { describe, expect, it } from 'vitest'
import type { PurgeOptions, PurgeResult, Store } from '@scanauth/core'
import { HOUR, SCENE_TTL_SECONDS, SECOND, SESSION_TTL_HOURS, type ContractContext } from '../context'
import { expectScanAuthError, newSceneStr, only, scanNewScene } from '../steps'

const SCENE_TTL = SCENE_TTL_SECONDS * SECOND
const SESSION_TTL = SESSION_TTL_HOURS * HOUR

/** The store's purge; fails the test when the store has none (every scanauth store has one). */
function purgeOf(store: Store): (options: PurgeOptions) => Promise<PurgeResult> {
  expect(store.purgeExpired, 'the store has purgeExpired').toBeTypeOf('function')
  return (options) => (store.purgeExpired as (o: PurgeOptions) => Promise<PurgeResult>).call(store, options)
}

/** How many records of every kind the backend holds. */
async function counts(ctx: ContractContext) {
  const s = await ctx.dump()
  return {
    scenes: s.scenes.length,
    users: s.users.length,
    authorizations: s.authorizations.length,
    sessions: s.sessions.length,
    ledger: s.ledger.length,
    idempotency: s.idempotency.length,
  }
}

/**
 * On a store whose backend forgets records by itself: the purge at `options` deletes nothing (these
 * cases hold no order). Returns true then, so the caller stops; false on a store that deletes rows.
 */
async function leftToTheBackend(ctx: ContractContext, options: PurgeOptions): Promise<boolean> {
  if (ctx.harness.expiresByItself !== true) return false
  const before = await ctx.dump()
  expect(await purgeOf(ctx.store)(options)).toMatchObject({ scenes: 0, sessions: 0, counters: 0, orders: 0, more: false })
  expect(await ctx.dump()).toEqual(before)
  return true
}

/** Registers the purge cases of the Store contract (see the module comment). */
export function purgeSuite(get: () => ContractContext): void {
  describe('purgeExpired', () => {
    it('takes the service clock: without now, or with bad options, it refuses with invalid_options and deletes nothing', async () => {
      const ctx = get()
      const purge = purgeOf(ctx.store)
      await newSceneStr(ctx.auth, 'tv-1')
      ctx.clock.advance(SCENE_TTL)
      const before = await counts(ctx)
      await expect(purge({} as PurgeOptions)).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringMatching(/now/) })
      await expect(purge({ now: ctx.clock.now(), retentionMs: -1 })).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringMatching(/retentionMs/) })
      await expect(purge({ now: ctx.clock.now(), batchSize: 0 })).rejects.toMatchObject({ code: 'invalid_options', message: expect.stringMatching(/batchSize/) })
      expect(await counts(ctx)).toEqual(before)
    })

    it('keeps what is still needed: a live pending scene, an authorized scene, its session and every user record', async () => {
      const ctx = get()
      const purge = purgeOf(ctx.store)
      const pending = await newSceneStr(ctx.auth, 'tv-1')
      const { sceneStr: authorized } = await scanNewScene(ctx.auth, 'alice', 'tv-2')
      await ctx.auth.grant({ openid: 'alice', type: 'points', points: 5, source: 'purchase', idempotencyKey: 'order-1' })
      const before = await counts(ctx)
      ctx.clock.advance(SCENE_TTL - 1)
      const result = await purge({ now: ctx.clock.now() })
      expect(result).toMatchObject({ scenes: 0, sessions: 0, more: false })
      expect(await counts(ctx)).toEqual(before)
      expect((await ctx.auth.getStatus(pending)).status).toBe('pending')
      expect((await ctx.auth.getStatus(authorized)).status).toBe('authorized')
    })

    it('keeps an authorized scene past its own expiry while its session lives: the device can still poll it', async () => {
      const ctx = get()
      const purge = purgeOf(ctx.store)
      const { sceneStr } = await scanNewScene(ctx.auth, 'alice')
      ctx.clock.advance(SESSION_TTL - 1)
      await purge({ now: ctx.clock.now() })
      expect((await ctx.auth.getStatus(sceneStr)).status).toBe('authorized')
      expect(await ctx.auth.verifySession(only((await ctx.dump()).sessions).token)).not.toBeNull()
    })

    it('never deletes users, authorizations, ledger entries or idempotency keys, however old', async () => {
      const ctx = get()
      const purge = purgeOf(ctx.store)
      await scanNewScene(ctx.auth, 'alice')
      await ctx.auth.grant({ openid: 'alice', type: 'points', points: 5, source: 'purchase', idempotencyKey: 'order-1' })
      const before = await ctx.dump()
      ctx.clock.advance(1000 * 24 * HOUR)
      await purge({ now: ctx.clock.now() })
      const after = await ctx.dump()
      expect({ users: after.users, authorizations: after.authorizations, ledger: after.ledger, idempotency: after.idempotency }).toEqual({
        users: before.users,
        authorizations: before.authorizations,
        ledger: before.ledger,
        idempotency: before.idempotency,
      })
      // The key still answers with the first grant: nothing is granted twice after a purge.
      const again = await ctx.auth.grant({ openid: 'alice', type: 'points', points: 5, source: 'purchase', idempotencyKey: 'order-1' })
      expect(again.id).toBe(only(before.authorizations, (a) => a.type === 'points').id)
    })

    describe('on a store that deletes rows itself (one whose backend expires them deletes nothing)', () => {
      it('deletes a pending scene once expired, retentionMs later; a poll then answers scene_not_found', async () => {
        const ctx = get()
        const purge = purgeOf(ctx.store)
        const sceneStr = await newSceneStr(ctx.auth, 'tv-1')
        ctx.clock.advance(SCENE_TTL)
        if (await leftToTheBackend(ctx, { now: ctx.clock.now() + HOUR })) return
        expect(await purge({ now: ctx.clock.now(), retentionMs: HOUR })).toMatchObject({ scenes: 0 })
        expect((await ctx.auth.getStatus(sceneStr)).status).toBe('expired')
        expect(await purge({ now: ctx.clock.now() + HOUR - 1, retentionMs: HOUR })).toMatchObject({ scenes: 0 })
        expect(await purge({ now: ctx.clock.now() + HOUR, retentionMs: HOUR })).toMatchObject({ scenes: 1, sessions: 0, more: false })
        await expectScanAuthError(ctx.auth.getStatus(sceneStr), 'scene_not_found', 404)
        expect((await ctx.dump()).scenes).toEqual([])
      })

      it('deletes an authorized scene together with its session, at the session’s deadline', async () => {
        const ctx = get()
        const purge = purgeOf(ctx.store)
        const { sceneStr } = await scanNewScene(ctx.auth, 'alice')
        if (await leftToTheBackend(ctx, { now: ctx.clock.now() + SESSION_TTL })) return
        const token = only((await ctx.dump()).sessions).token
        ctx.clock.advance(SESSION_TTL - 1)
        expect(await purge({ now: ctx.clock.now() })).toMatchObject({ scenes: 0, sessions: 0 })
        ctx.clock.advance(1)
        expect(await purge({ now: ctx.clock.now() })).toMatchObject({ scenes: 1, sessions: 1, more: false })
        await expectScanAuthError(ctx.auth.getStatus(sceneStr), 'scene_not_found', 404)
        expect(await ctx.auth.verifySession(token)).toBeNull()
        const after = await counts(ctx)
        expect(after).toMatchObject({ scenes: 0, sessions: 0, users: 1, authorizations: 1 })
        // The user comes back with the history it had: no second free trial (B-free-1).
        expect((await scanNewScene(ctx.auth, 'alice', 'tv-2')).scan.result).toBe('need_purchase')
      })

      it('deletes counters once their expiry has passed, and only those', async () => {
        const ctx = get()
        const purge = purgeOf(ctx.store)
        const now = ctx.clock.now()
        await ctx.store.incrementCounter('early', now + 1000, now)
        await ctx.store.incrementCounter('late', now + 5000, now)
        if (await leftToTheBackend(ctx, { now: now + 5000 })) {
          // The counters are still counted as the store's own clock comparison says.
          expect(await ctx.store.incrementCounter('late', now + 9000, now + 4999)).toBe(2)
          return
        }
        expect(await purge({ now: now + 999 })).toMatchObject({ counters: 0 })
        expect(await purge({ now: now + 1000 })).toMatchObject({ counters: 1 })
        // The live one counts on where it was.
        expect(await ctx.store.incrementCounter('late', now + 5000, now + 1000)).toBe(2)
        expect(await purge({ now: now + 5000 })).toMatchObject({ counters: 1 })
      })

      it('is not held up by scenes kept for their sessions: a batch full of them still reaches the expired scene behind', async () => {
        const ctx = get()
        const purge = purgeOf(ctx.store)
        // Three authorized scenes, expired but kept while their sessions live, ahead of (expiring
        // before) one pending scene: more kept scenes than a batch holds.
        const authorized: string[] = []
        for (const openid of ['alice', 'bob', 'carol']) authorized.push((await scanNewScene(ctx.auth, openid, `tv-${openid}`)).sceneStr)
        ctx.clock.advance(1)
        const pending = await newSceneStr(ctx.auth, 'tv-pending')
        ctx.clock.advance(SCENE_TTL)
        if (await leftToTheBackend(ctx, { now: ctx.clock.now(), batchSize: 2, maxBatches: 1 })) return
        expect(await purge({ now: ctx.clock.now(), batchSize: 2, maxBatches: 1 })).toMatchObject({ scenes: 1, sessions: 0 })
        await expectScanAuthError(ctx.auth.getStatus(pending), 'scene_not_found', 404)
        for (const sceneStr of authorized) expect((await ctx.auth.getStatus(sceneStr)).status).toBe('authorized')
      })

      it('works in batches: maxBatches stops it with more left, and the next call finishes', async () => {
        const ctx = get()
        const purge = purgeOf(ctx.store)
        for (let i = 0; i < 7; i++) await newSceneStr(ctx.auth, `tv-${i}`)
        ctx.clock.advance(SCENE_TTL)
        if (await leftToTheBackend(ctx, { now: ctx.clock.now(), batchSize: 2, maxBatches: 2 })) return
        const first = await purge({ now: ctx.clock.now(), batchSize: 2, maxBatches: 2 })
        expect(first).toMatchObject({ scenes: 4, batches: 2, more: true })
        const rest = await purge({ now: ctx.clock.now(), batchSize: 2 })
        expect(rest).toMatchObject({ scenes: 3, more: false })
        expect((await ctx.dump()).scenes).toEqual([])
      })
    })
  })
}
