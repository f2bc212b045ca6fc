/**
 * `Store.listActiveAuthorizations`, the reminders' read (core's `reminder-reads.ts`): the `active`
 * time authorizations ending in `[endFrom, endBefore)` by `endAt` then id, and the `active` points
 * ones with `0 < remainingPoints < pointsBelow` by id, in keyset pages after an exclusive cursor,
 * each exactly as `load({ authorizationId })` answers it. Every state is reached through
 * `createScanAuth` (grants, the activation step, consumption, revocation), and every answer is
 * checked against a model built from the backend's own records (`dump`): nothing pending, expired,
 * exhausted or revoked is ever answered, and a write is in place (or gone) as soon as its commit
 * returns, on every connection.
 *
 * Every scanauth store has the method, so a store without it fails here rather than skipping.
 */
import { describe, expect, it } from 'vitest'
import type { AuthorizationRecord, ScanAuth, Store } from '@scanauth/core'
import { DAY, HOUR, SECOND, type ContractContext } from '../context'
import { freshSession } from '../steps'

type ActiveQuery = Parameters<NonNullable<Store['listActiveAuthorizations']>>[0]
type TimeQuery = Extract<ActiveQuery, { type: 'time' }>
type PointsQuery = Extract<ActiveQuery, { type: 'points' }>

/** The store's `listActiveAuthorizations`, bound to it; fails the test when the store has none. */
function activeRead(store: Store): (query: ActiveQuery) => Promise<AuthorizationRecord[]> {
  const method = store.listActiveAuthorizations
  expect(method, 'the store has listActiveAuthorizations').toBeTypeOf('function')
  return (method as NonNullable<Store['listActiveAuthorizations']>).bind(store)
}

/** Each authorization exactly as `load({ authorizationId })` answers it, in the order given. */
async function loaded(store: Store, ids: number[]): Promise<AuthorizationRecord[]> {
  return Promise.all(ids.map(async (authorizationId) => (await store.load({ authorizationId })).authorization as AuthorizationRecord))
}

/** By `endAt`, then id. */
function byEnd(a: AuthorizationRecord, b: AuthorizationRecord): number {
  return (a.endAt as number) - (b.endAt as number) || a.id - b.id
}

/**
 * What `query` must answer, from the backend's own records (not through the read under test): the
 * ids in the order of the answer, every page of it after the cursor, at most `limit`.
 */
async function modelIds(ctx: ContractContext, query: ActiveQuery): Promise<number[]> {
  const all = (await ctx.dump()).authorizations.filter((a) => a.status === 'active' && a.type === query.type)
  if (query.type === 'time') {
    const { endFrom, endBefore, after } = query
    return all
      .filter((a) => a.endAt !== null && endFrom <= a.endAt && a.endAt < endBefore)
      .filter((a) => after === undefined || (a.endAt as number) > after.endAt || (a.endAt === after.endAt && a.id > after.id))
      .sort(byEnd)
      .slice(0, query.limit)
      .map((a) => a.id)
  }
  return all
    .filter((a) => 0 < a.remainingPoints && a.remainingPoints < query.pointsBelow && a.id > (query.afterId ?? 0))
    .sort((a, b) => a.id - b.id)
    .slice(0, query.limit)
    .map((a) => a.id)
}

/** Checks that `query` answers exactly the model, each record as `load` answers it; returns the answer. */
async function expectModel(ctx: ContractContext, query: ActiveQuery, store: Store = ctx.store): Promise<AuthorizationRecord[]> {
  const answer = await activeRead(store)(query)
  expect(answer, JSON.stringify(query)).toStrictEqual(await loaded(ctx.store, await modelIds(ctx, query)))
  return answer
}

/**
 * Every page of `query` at `limit` a page, each after the last record of the one before, until a
 * short one. Fails after 500 pages (a store that answers its cursor again would page for ever).
 */
async function pages(store: Store, query: ActiveQuery): Promise<AuthorizationRecord[][]> {
  const read = activeRead(store)
  const found: AuthorizationRecord[][] = []
  let next: ActiveQuery = query
  for (;;) {
    if (found.length >= 500) throw new Error(`more than 500 pages of ${JSON.stringify(query)}: does a page start after its cursor?`)
    const page = await read(next)
    found.push(page)
    const last = page[page.length - 1]
    if (page.length < query.limit || last === undefined) return found
    next = next.type === 'time' ? { ...next, after: { endAt: last.endAt as number, id: last.id } } : { ...next, afterId: last.id }
  }
}

/** The stored record of an authorization `grant` answered (its view carries ISO times), as `load` answers it. */
async function stored(store: Store, granted: Promise<{ id: number }>): Promise<AuthorizationRecord> {
  const { id } = await granted
  return (await store.load({ authorizationId: id })).authorization as AuthorizationRecord
}

/** Grants `openid` a time authorization of `days` (active at once when the user has nothing active). */
function grantDays(auth: ScanAuth, store: Store, openid: string, days: number): Promise<AuthorizationRecord> {
  return stored(store, auth.grant({ openid, type: 'time', durationSeconds: days * 86_400, source: 'purchase' }))
}

/** Grants `openid` `points` points. */
function grantPoints(auth: ScanAuth, store: Store, openid: string, points: number): Promise<AuthorizationRecord> {
  return stored(store, auth.grant({ openid, type: 'points', points, source: 'purchase' }))
}

/** Registers the cases of the reminders' read (see the module comment). */
export function storeActiveAuthorizationsSuite(get: () => ContractContext): void {
  describe('Store API: active authorizations for reminders', () => {
    it('answers nothing on a fresh store, and to a time query only the active time ones in [endFrom, endBefore), by endAt then id', async () => {
      const ctx = get()
      const { auth, clock, store } = ctx
      const T = clock.now()
      expect(await activeRead(store)({ type: 'time', endFrom: -1e15, endBefore: 1e15, limit: 1000 })).toEqual([])
      expect(await activeRead(store)({ type: 'points', pointsBelow: 1e9, limit: 1000 })).toEqual([])

      // Active time ones: two end at the same moment (granted at one clock reading), the others apart.
      const ends = new Map<string, number>()
      for (const [openid, days] of [['t-3a', 3], ['t-3b', 3], ['t-1', 1], ['t-5', 5], ['t-10', 10], ['t-7|😀', 7]] as const) {
        ends.set(openid, (await grantDays(auth, store, openid, days)).endAt as number)
      }
      expect(ends.get('t-3a')).toBe(T + 3 * DAY)
      // Never answered: a queued (pending) one, whose endAt is already set; a revoked one; an
      // expired one; an active points one.
      expect((await grantDays(auth, store, 't-1', 2)).status).toBe('pending')
      const revoked = await grantDays(auth, store, 'revoked', 4)
      await auth.revokeAuthorization({ authorizationId: revoked.id })
      await grantPoints(auth, store, 'p-3', 3)
      const short = await grantDays(auth, store, 'short', 1 / 24) // ends in an hour
      clock.advance(2 * HOUR)
      await grantPoints(auth, store, 'short', 1) // its activation step expires the short one
      expect((await store.load({ authorizationId: short.id })).authorization?.status).toBe('expired')

      const everything = await expectModel(ctx, { type: 'time', endFrom: -1e15, endBefore: 1e15, limit: 1000 })
      expect(everything.map((a) => a.endAt)).toEqual(['t-1', 't-3a', 't-3b', 't-5', 't-7|😀', 't-10'].map((o) => ends.get(o)))
      // The tie in id order (granted in that order).
      expect((everything[1] as AuthorizationRecord).id).toBeLessThan((everything[2] as AuthorizationRecord).id)

      // The window: endFrom inclusive, endBefore exclusive, both tried at the tie.
      const three = T + 3 * DAY
      expect((await expectModel(ctx, { type: 'time', endFrom: three, endBefore: T + 7 * DAY, limit: 100 })).map((a) => a.endAt)).toEqual([three, three, T + 5 * DAY])
      expect((await expectModel(ctx, { type: 'time', endFrom: T, endBefore: three, limit: 100 })).map((a) => a.endAt)).toEqual([T + DAY])
      expect(await expectModel(ctx, { type: 'time', endFrom: three + 1, endBefore: T + 5 * DAY, limit: 100 })).toEqual([])
      expect(await expectModel(ctx, { type: 'time', endFrom: three, endBefore: three, limit: 100 })).toEqual([])
      // At most limit; a cursor before the window leaves the window's start in force.
      expect(await expectModel(ctx, { type: 'time', endFrom: T, endBefore: 1e15, limit: 2 })).toHaveLength(2)
      expect(await expectModel(ctx, { type: 'time', endFrom: three, endBefore: 1e15, after: { endAt: T + DAY, id: 1e9 }, limit: 100 })).toHaveLength(5)
    })

    it('pages time ones by the (endAt, id) cursor without gaps or repeats: ties split across pages, any cursor, one that has left the answer', async () => {
      const ctx = get()
      const { auth, clock, store } = ctx
      // Eleven: three ties of three, and two alone, a second later.
      for (let i = 0; i < 9; i++) await grantDays(auth, store, `tie-${i}`, 1 + (i % 3))
      clock.advance(SECOND)
      await grantDays(auth, store, 'alone-1', 1)
      await grantDays(auth, store, 'alone-2', 2)
      const query: TimeQuery = { type: 'time', endFrom: 0, endBefore: clock.now() + 30 * DAY, limit: 2 }
      const all = await expectModel(ctx, { ...query, limit: 1000 })
      expect(all).toHaveLength(11)
      for (const size of [1, 2, 3, 4, 11, 12]) {
        const found = await pages(store, { ...query, limit: size })
        expect(found.flat(), `pages of ${size}`).toStrictEqual(all)
        expect(found.slice(0, -1).every((p) => p.length === size)).toBe(true)
      }
      // After every cursor: exactly the rest.
      for (const [i, a] of all.entries()) {
        expect(await activeRead(store)({ ...query, after: { endAt: a.endAt as number, id: a.id }, limit: 1000 })).toStrictEqual(all.slice(i + 1))
      }
      // A cursor naming one revoked since (in the middle of a tie): the page starts just after where it was.
      const gone = all[4] as AuthorizationRecord
      expect(all.filter((a) => a.endAt === gone.endAt).length).toBeGreaterThan(1)
      await auth.revokeAuthorization({ authorizationId: gone.id })
      const cursor = { endAt: gone.endAt as number, id: gone.id }
      expect(await expectModel(ctx, { ...query, after: cursor, limit: 3 })).toStrictEqual(all.slice(5, 8))
      // A cursor between two ends (no authorization ends there), and past the last.
      const end = gone.endAt as number
      expect(await expectModel(ctx, { ...query, after: { endAt: end - 0.5, id: 0 }, limit: 1000 })).toStrictEqual(all.filter((a) => a.endAt as number >= end && a.id !== gone.id))
      const last = all[10] as AuthorizationRecord
      expect(await expectModel(ctx, { ...query, after: { endAt: last.endAt as number, id: last.id }, limit: 10 })).toEqual([])
    })

    it('answers active points ones with 0 < remainingPoints < pointsBelow by id: consumption moves one in at once, exhaustion and revocation take it out', async () => {
      const ctx = get()
      const { auth, clock, dump, store } = ctx
      const rich = await grantPoints(auth, store, 'rich', 10)
      const low = await grantPoints(auth, store, 'low', 3)
      const edge = await grantPoints(auth, store, 'edge', 5)
      const last = await grantPoints(auth, store, 'last', 1)
      const two = await grantPoints(auth, store, 'two', 2)
      const queued = await grantPoints(auth, store, 'low', 1) // pending behind low's 3: not answered yet
      expect(queued.status).toBe('pending')
      await grantDays(auth, store, 'time-only', 1)

      const below5: PointsQuery = { type: 'points', pointsBelow: 5, limit: 100 }
      expect((await expectModel(ctx, below5)).map((a) => a.id)).toEqual([low.id, last.id, two.id])
      expect(await expectModel(ctx, { ...below5, pointsBelow: 1 })).toEqual([])
      expect((await expectModel(ctx, { ...below5, pointsBelow: 6 })).map((a) => a.id)).toEqual([low.id, edge.id, last.id, two.id])
      expect((await expectModel(ctx, { ...below5, afterId: low.id, limit: 1 })).map((a) => a.id)).toEqual([last.id])
      expect(await expectModel(ctx, { ...below5, afterId: two.id })).toEqual([])

      // Spending 6 of rich's 10 brings it below the threshold with that very commit.
      clock.advance(SECOND)
      const richToken = await freshSession(auth, dump, 'rich')
      await auth.consume({ sessionToken: richToken, points: 6 })
      const withRich = await expectModel(ctx, below5)
      expect(withRich.map((a) => [a.id, a.remainingPoints])).toEqual([[rich.id, 4], [low.id, 3], [last.id, 1], [two.id, 2]])
      // Its last point spent, last's one is still active with 0 points (until the next activation
      // step) and not answered; that step exhausts it and activates the trial its scan queued, a
      // time one.
      const lastToken = await freshSession(auth, dump, 'last')
      await auth.consume({ sessionToken: lastToken })
      expect((await store.load({ authorizationId: last.id })).authorization).toMatchObject({ status: 'active', remainingPoints: 0 })
      expect((await expectModel(ctx, below5)).map((a) => a.id)).toEqual([rich.id, low.id, two.id])
      await auth.verifySession(lastToken)
      expect((await store.load({ authorizationId: last.id })).authorization?.status).toBe('exhausted')
      expect((await expectModel(ctx, below5)).map((a) => a.id)).toEqual([rich.id, low.id, two.id])
      expect((await expectModel(ctx, { type: 'time', endFrom: 0, endBefore: 1e15, limit: 10 })).map((a) => a.userId)).toContain(last.userId)
      // Revoked: gone, and low's queued one, active now, comes in.
      await auth.revokeAuthorization({ authorizationId: low.id })
      expect((await expectModel(ctx, below5)).map((a) => a.id)).toEqual([rich.id, two.id, queued.id])

      // Pages by afterId.
      const all = await expectModel(ctx, { ...below5, pointsBelow: 100 })
      expect(all).toHaveLength(4)
      for (const size of [1, 2, 4, 5]) expect((await pages(store, { ...below5, pointsBelow: 100, limit: size })).flat()).toStrictEqual(all)
    })

    it('a time authorization leaves with the commit of the activation step that expires it, and the queued one that follows comes in with its new end', async () => {
      const ctx = get()
      const { auth, clock, store } = ctx
      const first = await grantDays(auth, store, 'alice', 1)
      const second = await grantDays(auth, store, 'alice', 2)
      const window: TimeQuery = { type: 'time', endFrom: 0, endBefore: 1e15, limit: 100 }
      expect((await expectModel(ctx, window)).map((a) => a.id)).toEqual([first.id])
      // Past its end, but no operation has run the user's activation step: still stored active,
      // and outside a pass's window, which starts at the pass's now.
      clock.advance(DAY + SECOND)
      expect((await expectModel(ctx, window)).map((a) => a.id)).toEqual([first.id])
      expect(await expectModel(ctx, { ...window, endFrom: clock.now() })).toEqual([])
      await grantPoints(auth, store, 'alice', 1) // its activation step expires the first, activates the second
      const [next] = await expectModel(ctx, window)
      expect(next).toMatchObject({ id: second.id, status: 'active', startAt: clock.now(), endAt: clock.now() + 2 * DAY })
      expect(await expectModel(ctx, { ...window, endBefore: clock.now() + 2 * DAY })).toEqual([])
    })

    it('two instances on two connections writing while one reads: every pass in order, and every write in place on the other connection as its commit returns', async () => {
      const ctx = get()
      const [a, b] = (await ctx.auths(2)) as [ScanAuth, ScanAuth]
      const [mine, other] = (await ctx.stores(2)) as [Store, Store]
      const window: TimeQuery = { type: 'time', endFrom: 0, endBefore: 1e15, limit: 3 }
      const ids = async (store: Store) => (await activeRead(store)({ ...window, limit: 1000 })).map((x) => x.id)

      // One at a time first: a grant through one connection is answered on the other at once, and
      // so is its revocation through the other.
      const granted = await grantDays(a, mine, 'seen', 2)
      expect(await ids(other)).toContain(granted.id)
      await b.revokeAuthorization({ authorizationId: granted.id })
      expect(await ids(other)).not.toContain(granted.id)
      expect(await ids(mine)).not.toContain(granted.id)

      // Then at once: two instances grant while the reader pages through, over and over.
      let done = false
      const writes = Promise.all([
        (async () => {
          for (let i = 0; i < 12; i++) await grantDays(a, mine, `a-${i}`, 1 + (i % 4))
        })(),
        (async () => {
          for (let i = 0; i < 12; i++) await grantPoints(b, other, `b-${i}`, 1 + (i % 6))
        })(),
      ]).finally(() => {
        done = true
      })
      const passes: AuthorizationRecord[][] = []
      while (!done && passes.length < 500) {
        passes.push((await pages(other, window)).flat())
        // A turn of the event loop, so that an in-process store's writers are never starved.
        await new Promise((resolve) => setTimeout(resolve, 0))
      }
      await writes
      for (const pass of passes) {
        // Each pass moves forward only: strictly increasing (endAt, id), so no repeats.
        for (let i = 1; i < pass.length; i++) expect(byEnd(pass[i - 1] as AuthorizationRecord, pass[i] as AuthorizationRecord)).toBeLessThan(0)
        expect(pass.every((x) => x.status === 'active' && x.type === 'time')).toBe(true)
      }
      // Afterwards, on both connections, exactly the model.
      expect(await expectModel(ctx, { ...window, limit: 1000 }, other)).toHaveLength(12)
      await expectModel(ctx, { ...window, limit: 1000 }, mine)
      expect(await expectModel(ctx, { type: 'points', pointsBelow: 4, limit: 1000 }, other)).toHaveLength(6)
      expect((await pages(other, { ...window, limit: 5 })).flat()).toStrictEqual(await activeRead(mine)({ ...window, limit: 1000 }))
    })
  })
}
