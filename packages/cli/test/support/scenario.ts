/**
 * The scenario every store runs: a server serves devices over HTTP from the store while the CLI,
 * as child processes, looks users up, grants, revokes, signs out, reads ledgers and orders, purges
 * and migrates on the same store; and refused invocations, checked against a full snapshot of the
 * store taken before and after, write nothing.
 */
import type { Store } from '@scanauth/core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { expectRefusal, json, scanauth, succeeds, type CliRun } from './cli'
import { Device, keepWaiting, startServer, type LiveServer } from './server'

/** One store, as the scenario needs it. */
export interface Backend {
  /** `sqlite`, `redis` or `postgres`. */
  kind: 'sqlite' | 'redis' | 'postgres'
  /** The options that name the store (`--sqlite FILE`, ...). */
  storeArgs: string[]
  /** Environment variables that name the same store without options. */
  storeEnv: Record<string, string>
  /** The store the server uses (its own connection). */
  serverStore: Store
  /** The store's schema version (null on Redis). */
  schemaVersion: number | null
  /** Everything the store holds, read from the backend. */
  snapshot(): Promise<string>
  /** Closes the server's store and removes what the test created. */
  close(): Promise<void>
}

/** A command line and what its refusal must say. */
export type Refusal = [argv: string[], status: 1 | 2, pattern: RegExp]

/** How many CLI processes a batch of refusals runs at once. */
const AT_ONCE = 6

/**
 * Runs each refusal (several at once: none may write, so order cannot matter) and checks its exit
 * status, its one line on standard error and its empty standard output; then checks that the store
 * is byte for byte what it was.
 */
export async function expectRefusedWithoutWrites(backend: Backend, refusals: Refusal[], env: Record<string, string> = {}): Promise<void> {
  const before = await backend.snapshot()
  const runs: CliRun[] = []
  for (let i = 0; i < refusals.length; i += AT_ONCE) {
    runs.push(...(await Promise.all(refusals.slice(i, i + AT_ONCE).map(([argv]) => scanauth(argv, { env })))))
  }
  runs.forEach((run, i) => {
    const [, status, pattern] = refusals[i] as Refusal
    expectRefusal(run, status, pattern)
  })
  expect(await backend.snapshot()).toBe(before)
}

const ALICE = 'o6_alice_bmjrPTlm6_2sgVt7hMZOPfL2M'
const BOB = 'o6_bob_xZ2sgVt7hMZOPfL2M'
const NOBODY = 'o6_nobody_at_all'

/** The scenario over the store `open` returns (each store's own refusals are in its test file). */
export function describeCliScenario(name: string, open: () => Promise<Backend>): void {
  describe(`scanauth on ${name} while a server uses the store`, () => {
    let backend: Backend
    let server: LiveServer
    let tv: Device
    let tvToken: string
    let aliceId: number
    let trialId: number
    const on = (...argv: string[]) => [...argv, ...backend.storeArgs]

    beforeAll(async () => {
      backend = await open()
      server = await startServer(backend.serverStore)
      tv = new Device(server.url, 'tv-livingroom')
      // Alice scans the code on the TV: the free trial, a session.
      const scene = await tv.createScene()
      const waiting = tv.status(scene, 10)
      const scan = await server.auth.handleScan({ sceneStr: scene, openid: ALICE })
      const polled = await waiting
      expect(polled.status).toBe('authorized')
      tvToken = polled.session_token
      aliceId = scan.userId as number
      trialId = (await server.auth.getUser({ userId: aliceId }))?.current?.id as number
      // A grant through the server with an idempotency key, for the conflict below.
      await server.auth.grant({ openid: BOB, type: 'points', points: 5, source: 'support', idempotencyKey: 'support:1' })
    })

    afterAll(async () => {
      await server?.close()
      await backend?.close()
    })

    it('user: the user, its current authorization, its queue, live sessions and the last ledger entries', async () => {
      const out = await json(on('user', ALICE))
      expect(out.user).toMatchObject({ id: aliceId, openid: ALICE, hasClaimedFree: true, queue: [] })
      expect(out.user.current).toMatchObject({ id: trialId, type: 'time', status: 'active', source: 'free' })
      expect(out.sessions.live).toBe(1)
      expect(out.sessions.latest).toEqual([
        { id: expect.any(Number), tokenPrefix: tvToken.slice(0, 8), deviceId: 'tv-livingroom', createdAt: expect.any(String), expiresAt: expect.any(String) },
      ])
      expect(out.ledger.total).toBe(2)
      expect(out.ledger.last.map((e: { kind: string }) => e.kind)).toEqual(['grant', 'activate'])
      expect(JSON.stringify(out)).not.toContain(tvToken)

      const text = (await succeeds(on('user', ALICE))).stdout
      expect(text).toContain(`user        #${aliceId}  ${ALICE}`)
      expect(text).toMatch(new RegExp(`current     #${trialId}  time  active  until \\S+Z  source free`))
      expect(text).toContain(`${tvToken.slice(0, 8)}…  tv-livingroom`)
      expect(text).toContain('sessions    1 live')
      expect(text).toContain('ledger      2 entries')
      expect(text).not.toContain(tvToken)
      expect(text).not.toContain(tvToken.slice(0, 9))
    })

    it('refuses an unknown id, an unknown openid and a conflicting idempotency key, writing nothing, while a device waits', async () => {
      const waiter = keepWaiting(new Device(server.url, 'kiosk-1'), await new Device(server.url, 'kiosk-1').createScene())
      try {
        await expectRefusedWithoutWrites(backend, [
          [on('revoke', '999999'), 1, /no authorization has the id 999999/],
          [on('revoke', '999999', '--reason', 'x'), 1, /no authorization has the id 999999/],
          [on('user', NOBODY), 1, /no user has the openid "o6_nobody_at_all"/],
          [on('signout', NOBODY), 1, /no user has the openid/],
          [on('ledger', NOBODY), 1, /no user has the openid/],
          [on('orders', NOBODY, '--json'), 1, /no user has the openid/],
          [on('grant', BOB, '--points', '6', '--source', 'support', '--idempotency-key', 'support:1'), 1, /refused \(idempotency_conflict\)/],
          [on('grant', ALICE, '--points', '5', '--source', 'support', '--idempotency-key', 'support:1', '--json'), 1, /idempotency_conflict/],
          [on('grant', ALICE, '--days', '1.5'), 2, /--days must be a whole number from 1 to 36525, not "1\.5"/],
          [on('grant', 'o'.repeat(129), '--days', '3'), 2, /openid must be at most 128 characters, not 129/],
          [on('revoke', 'abc'), 2, /the authorization id must be a whole number/],
        ])
        // The device is answered all along: its long poll (2 s) comes back pending, so the server
        // served from the store throughout. Waited for, as the refusals may take less than one poll.
        await vi.waitFor(() => expect(waiter.polls()).toBeGreaterThan(0), { timeout: 10_000, interval: 50 })
      } finally {
        await waiter.stop()
      }
    })

    it('grant: time and points, by openid, idempotent with a key, while the server serves the TV and a new user scans', async () => {
      // The server writes meanwhile: the TV spends (its time authorization is used without a
      // decrement), and Bob signs in on a second device.
      const phone = new Device(server.url, 'phone-bob')
      const phoneScene = await phone.createScene()
      const busy = Promise.all([
        ...Array.from({ length: 5 }, () => tv.consume(tvToken)),
        server.auth.handleScan({ sceneStr: phoneScene, openid: BOB }),
      ])
      const days = await json(on('grant', ALICE, '--days', '30', '--source', 'purchase', '--idempotency-key', 'cli:days-30'))
      for (const consumed of (await busy).slice(0, 5) as Array<{ status: number; body: { status: string } }>) expect(consumed.body.status).toBe('ok')
      const points = await json(on('grant', ALICE, '--points', '100'))

      expect(days.authorization).toMatchObject({ userId: aliceId, type: 'time', status: 'pending', source: 'purchase', remainingPoints: 0 })
      expect(Date.parse(days.authorization.endAt) - Date.parse(days.authorization.startAt)).toBe(30 * 86_400_000)
      expect(points.authorization).toMatchObject({ userId: aliceId, type: 'points', status: 'pending', source: 'admin', remainingPoints: 100, totalPoints: 100 })

      // The same key again: the first grant, nothing more.
      const again = await json(on('grant', ALICE, '--days', '30', '--source', 'purchase', '--idempotency-key', 'cli:days-30'))
      expect(again.authorization.id).toBe(days.authorization.id)
      const user = await server.auth.getUser({ openid: ALICE })
      expect(user?.queue.map((a) => a.id).sort()).toEqual([days.authorization.id, points.authorization.id].sort())

      // A new openid becomes a user, without the free trial.
      const carol = await json(on('grant', 'o6_carol', '--points', '3'))
      expect(carol.authorization).toMatchObject({ type: 'points', status: 'active', remainingPoints: 3 })
      expect(await server.auth.getUser({ openid: 'o6_carol' })).toMatchObject({ hasClaimedFree: false, current: { id: carol.authorization.id } })

      const text = (await succeeds(on('grant', ALICE, '--points', '7', '--source', 'promo:spring'))).stdout
      expect(text).toMatch(new RegExp(`^granted to user #${aliceId} \\(${ALICE}\\)\\n  #\\d+  points  pending  7/7 points  source promo:spring\\n$`))
    })

    it('revoke: the active authorization is revoked and the next of the queue activates, as the device sees at once', async () => {
      const out = await json(on('revoke', String(trialId), '--reason', 'refund 2026-118'))
      expect(out.authorization).toMatchObject({ id: trialId, status: 'revoked' })
      expect(out.alreadyRevoked).toBe(false)
      expect(out.current).toMatchObject({ type: 'time', status: 'active', source: 'purchase' })
      const session = await tv.session(tvToken)
      expect(session.status).toBe(200)
      expect(session.body.authorization).toMatchObject({ type: 'time', end_at: out.current.endAt })

      const text = (await succeeds(on('revoke', String(trialId)))).stdout
      expect(text.split('\n')[0]).toBe(`authorization #${trialId} was already revoked (user #${aliceId})`)
      expect(text).toMatch(/\ncurrent {5}#\d+ {2}time {2}active {2}until \S+Z {2}source purchase\n/)
    })

    it('ledger: pages of the same entries core lists, and the text says how to read on', async () => {
      const all = await server.auth.listLedger({ openid: ALICE }, { limit: 1000 })
      const first = await json(on('ledger', ALICE, '--limit', '3'))
      expect(first).toEqual({ user: { id: aliceId, openid: ALICE }, entries: all.entries.slice(0, 3), nextAfterId: all.entries[2]?.id })
      const rest = await json(on('ledger', ALICE, '--after', String(first.nextAfterId), '--limit', '1000'))
      expect(rest.entries).toEqual(all.entries.slice(3))
      expect(rest.nextAfterId).toBeNull()
      expect(all.entries.find((e) => e.kind === 'revoke')).toMatchObject({ authorizationId: trialId, reason: 'refund 2026-118' })

      const text = (await succeeds(on('ledger', ALICE, '--limit', '2'))).stdout.split('\n')
      expect(text[0]).toBe(`user #${aliceId} (${ALICE}): 2 entries`)
      expect(text[1]).toMatch(/^ {2}#\d+ {2}\S+Z {2}grant {5}auth #\d+ {2}0 {2}0 left {2}source free$/)
      expect(text[3]).toBe(`more: scanauth ledger ${ALICE} --after ${all.entries[1]?.id}`)
    })

    it('orders: the open ones and the paid ones its grants name', async () => {
      // The TV buys 30 days and pays; then opens an order for 100 points and leaves it open.
      const paidId = await tv.purchase(tvToken, 'days-30')
      const paid = await server.auth.applyPayment(server.payments.pay(paidId))
      expect(paid).toMatchObject({ result: 'granted', orderId: paidId })
      const openId = await tv.purchase(tvToken, 'points-100')
      // A grant keyed like an order's, for a payment taken outside scanauth's orders.
      await succeeds(on('grant', ALICE, '--days', '1', '--idempotency-key', 'order:EXTERNAL-7'))

      const out = await json(on('orders', ALICE))
      expect(out.user).toEqual({ id: aliceId, openid: ALICE })
      expect(out.orders.map((o: { orderId: string }) => o.orderId)).toEqual([paidId, openId])
      const [first, second] = out.orders
      expect(first).toMatchObject({ orderId: paidId, planId: 'days-30', status: 'paid', amountFen: 1990, grant: { type: 'time', days: 30 }, channel: 'native', foundBy: ['ledger'] })
      expect(first.authorizationId).toEqual(expect.any(Number))
      expect(first.paidAt).toEqual(expect.any(String))
      expect(first.authorizationId).toBe((paid as { authorizationId: number }).authorizationId)
      expect(second).toMatchObject({ orderId: openId, planId: 'points-100', status: 'open', amountFen: 990, authorizationId: null, paidAt: null, foundBy: ['open'] })
      expect(out.unmatchedGrants).toEqual([{ idempotencyKey: 'order:EXTERNAL-7', authorizationId: expect.any(Number), at: expect.any(String) }])

      const text = (await succeeds(on('orders', ALICE))).stdout
      expect(text).toContain(`user #${aliceId} (${ALICE}): 2 orders`)
      expect(text).toMatch(new RegExp(`${paidId}  paid  days-30 +¥19\\.90  device code  created \\S+Z  paid \\S+Z +auth #${first.authorizationId}\\n`))
      expect(text).toMatch(new RegExp(`${openId}  open  points-100  ¥9\\.90 +device code  created \\S+Z  pay by \\S+Z`))
      expect(text).toContain('1 grant keyed order:<id> without such an order in the store\n  order:EXTERNAL-7')
    })

    it('signout: every live session ends, and the device is signed out at once', async () => {
      expect((await tv.session(tvToken)).status).toBe(200)
      const out = await json(on('signout', ALICE))
      expect(out).toEqual({ userId: aliceId, openid: ALICE, ended: 1 })
      expect((await tv.session(tvToken)).status).toBe(401)
      expect((await json(on('user', ALICE))).sessions).toEqual({ live: 0, latest: [] })
      expect((await succeeds(on('signout', ALICE))).stdout).toBe(`signed out user #${aliceId} (${ALICE}): 0 sessions ended\n`)
    })

    it('purge: the default options, now; what it deleted', async () => {
      const out = await json(on('purge'))
      expect(out).toEqual({
        scenes: expect.any(Number),
        sessions: expect.any(Number),
        counters: expect.any(Number),
        orders: expect.any(Number),
        batches: expect.any(Number),
        more: false,
      })
      // Redis deletes only closed orders (B-order-purge): its other records expire by TTL.
      if (backend.kind === 'redis') expect(out).toMatchObject({ scenes: 0, sessions: 0, counters: 0 })
      // Alice's ended session is due; the waiting scenes are not.
      else expect(out.sessions).toBeGreaterThanOrEqual(1)
      const text = (await succeeds(on('purge'))).stdout
      if (backend.kind === 'redis') expect(text).toMatch(/^purged \d+ closed orders? in \d+ batch(es)? \(Redis expires scenes, sessions and counters by itself\)\n$/)
      else expect(text).toMatch(/^purged \d+ scenes?, \d+ sessions?, \d+ counters? and \d+ closed orders? in \d+ batch(es)?\n$/)
    })

    it('migrate: says the version; the store is current, so nothing changes', async () => {
      const before = await backend.snapshot()
      const out = await json(on('migrate'))
      const version = backend.schemaVersion
      expect(out).toEqual({ store: backend.kind, from: version, to: version, migrated: false })
      const text = (await succeeds(on('migrate'))).stdout
      if (backend.kind === 'redis') expect(text).toMatch(/^redis redis:\/\/\S+ prefix \S+: nothing to migrate \(Redis keeps no schema\)\n$/)
      else expect(text).toMatch(new RegExp(`^${backend.kind} .+: at schema version ${version}, nothing to migrate\\n$`))
      expect(await backend.snapshot()).toBe(before)
    })

    it('finds the store from the environment variables the examples read, without options', async () => {
      const out = await json(['user', ALICE], { env: backend.storeEnv })
      expect(out.user.id).toBe(aliceId)
    })
  })
}
