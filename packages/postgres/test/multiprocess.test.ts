// Across processes on one PostgreSQL schema: four worker processes, each with its own pg.Pool,
// PostgresStore and createScanAuth (workers/load-worker.ts), race on
//   (a) the same scenes scanned by a different openid in every process: one processing per scene
//       (B-conc-1), with its session, its user (one per openid, B-conc-3) and that user's one trial;
//   (b) one idempotency key sent from every process, for a grant and then for a consumption: applied
//       once, every caller answered alike (B-idem-5);
//   (c) revocation racing consumption of the same points authorization: the ledger and the balance
//       agree, and nothing is spent after the revocation (B-revoke-1, B-ledger-1, B-consume-4);
//   (d) one user scanning many scenes, granted to and consuming from every process: one trial
//       (B-free-1), never two active at once, even mid-load (B-act-3), the queue activated in FIFO
//       order (B-fifo-1).
// After each race the tables are read straight (support/tables.ts) and must pass testkit's
// checkInvariants, the half-applied checks of support/checks.ts and the race's own expectations.
import { afterAll, describe, expect, it } from 'vitest'
import { checkInvariants, halfAppliedWrites, type StoreSnapshot } from '@scanauth/testkit'
import { sampleActiveWhile } from './support/active-sampler'
import { sessionTokensOf } from './support/checks'
import { openPool } from './support/database'
import { range, runOnAll, sum, useWorkerFleet, exitAll } from './support/fleet'
import { readTables } from './support/tables'
import type { Report } from './workers/protocol'

const WORKERS = 4
/** Operations each worker keeps in flight (its pool has four connections). */
const LANES = 4
const SECOND = 1000
const DAY = 86_400_000

const pool = openPool(4)
afterAll(() => pool.end())
const fleet = useWorkerFleet(pool)

/** The tables, checked against every invariant and for half-applied writes. */
async function soundTables(schema: string): Promise<StoreSnapshot> {
  const snapshot = await readTables(pool, schema)
  expect(checkInvariants(snapshot)).toEqual([])
  expect(halfAppliedWrites(snapshot)).toEqual([])
  return snapshot
}

/** No operation of any worker threw. */
function expectNoErrors(reports: Report[]): void {
  expect(reports.map((r) => r.errors)).toEqual(reports.map(() => ({})))
}

const commitsOf = (reports: Report[]) => `${sum(reports, (r) => r.commits)} commits, ${sum(reports, (r) => r.conflicts)} conflicts planned again`

describe('PostgresStore across processes', () => {
  it('(a) every process scans the same scenes with its own openid: each scene is processed once, with its session, user and trial', { timeout: 60_000 }, async () => {
    const SCENES = 40
    const OPENIDS = 6
    const { workers, auth, t0, schema } = await fleet.start(WORKERS)
    const scenes: string[] = []
    for (const i of range(SCENES)) scenes.push((await auth.createScene({ deviceId: `race-tv-${i}` })).sceneStr)
    // Every worker goes through the scenes in the same order, so the four scans of a scene meet;
    // for one scene each worker brings another openid, and each openid comes back on many scenes.
    const openidOf = (worker: number, scene: number) => `race-user-${(scene + worker) % OPENIDS}`
    const reports = await runOnAll(workers, (w) => ({
      kind: 'scan', now: t0 + SECOND, lanes: LANES, tasks: scenes.map((sceneStr, i) => ({ sceneStr, openid: openidOf(w, i) })),
    }))
    await exitAll(workers)
    expectNoErrors(reports)
    const snapshot = await soundTables(schema)

    const processed = reports.flatMap((r) => r.processed)
    expect(processed.map((p) => p.sceneStr).sort()).toEqual([...scenes].sort())
    expect(sum(reports, (r) => r.invalid)).toBe(WORKERS * SCENES - SCENES)
    // Users exist exactly for the openids whose scan was processed, one each.
    expect(snapshot.users.map((u) => u.openid).sort()).toEqual([...new Set(processed.map((p) => p.openid))].sort())
    const userOf = new Map(snapshot.users.map((u) => [u.openid, u]))
    for (const p of processed) {
      const user = userOf.get(p.openid)
      expect(p).toMatchObject({ userId: user?.id, result: 'authorized' })
      const scene = snapshot.scenes.find((s) => s.sceneStr === p.sceneStr)
      expect(scene).toMatchObject({ status: 'authorized', userId: user?.id, authorizedAt: t0 + SECOND })
      expect(snapshot.sessions.filter((s) => s.sceneId === scene?.id)).toEqual([expect.objectContaining({ userId: user?.id, deviceId: scene?.deviceId })])
    }
    // The right grants: each user has its free trial and nothing else, active since all scans share one moment.
    for (const user of snapshot.users) {
      expect(user.hasClaimedFree).toBe(true)
      expect(snapshot.authorizations.filter((a) => a.userId === user.id)).toEqual([expect.objectContaining({ source: 'free', type: 'time', status: 'active' })])
    }
    console.log(`[multiprocess] (a) ${WORKERS * SCENES} scans of ${SCENES} scenes: ${processed.length} processed for ${snapshot.users.length} users; ${commitsOf(reports)}`)
  })

  it('(b) one idempotency key from every process: the grant and the consumption are applied once, every caller gets the same answer', { timeout: 60_000 }, async () => {
    const CALLS = 12 // per worker, for each key
    const openid = 'keyed-buyer'
    const { workers, auth, t0, clock, schema } = await fleet.start(WORKERS)
    // A new openid: the processes race to create the user as well as to use the key.
    const grant = { openid, points: 7, key: 'order-across-processes' }
    const grants = await runOnAll(workers, { kind: 'grant', now: t0 + SECOND, lanes: LANES, tasks: range(CALLS).map(() => grant) })
    expectNoErrors(grants)
    const afterGrant = await soundTables(schema)
    expect(afterGrant.users.map((u) => u.openid)).toEqual([openid])
    expect(afterGrant.authorizations).toEqual([expect.objectContaining({ type: 'points', totalPoints: 7, remainingPoints: 7, status: 'active', source: 'purchase' })])
    const [granted] = afterGrant.authorizations
    const answered = grants.flatMap((r) => r.grantedByKey[grant.key] ?? [])
    expect(answered).toEqual(range(WORKERS * CALLS).map(() => granted?.id))
    expect(afterGrant.ledger.filter((e) => e.kind === 'grant')).toEqual([expect.objectContaining({ authorizationId: granted?.id, points: 7, idempotencyKey: grant.key })])
    expect(afterGrant.idempotency).toEqual([expect.objectContaining({ key: grant.key, authorizationId: granted?.id, result: null })])

    // A session for the buyer (its trial queues behind the points), then one consumption key from every process.
    clock.set(t0 + 2 * SECOND)
    const { sceneStr } = await auth.createScene({ deviceId: 'keyed-tv' })
    await auth.handleScan({ sceneStr, openid })
    const [token] = sessionTokensOf(await readTables(pool, schema), openid)
    const consumeKey = 'consume-across-processes'
    const consumes = await runOnAll(workers, { kind: 'consume', now: t0 + 3 * SECOND, lanes: LANES, points: 2, tasks: range(CALLS).map(() => ({ token: token as string, key: consumeKey })) })
    await exitAll(workers)
    expectNoErrors(consumes)
    const snapshot = await soundTables(schema)
    const answers = new Map<string, number>()
    for (const r of consumes) for (const [json, n] of Object.entries(r.consumeAnswers)) answers.set(json, (answers.get(json) ?? 0) + n)
    expect([...answers.values()]).toEqual([WORKERS * CALLS])
    expect(JSON.parse([...answers.keys()][0] as string)).toMatchObject({ status: 'ok', authorization: { id: granted?.id, remainingPoints: 5 } })
    expect(snapshot.authorizations.find((a) => a.id === granted?.id)).toMatchObject({ remainingPoints: 5, status: 'active' })
    expect(snapshot.ledger.filter((e) => e.kind === 'consume')).toEqual([expect.objectContaining({ authorizationId: granted?.id, points: -2, idempotencyKey: consumeKey })])
    expect(snapshot.idempotency.find((r) => r.key === consumeKey)).toMatchObject({ authorizationId: null, result: expect.any(String) })
    console.log(`[multiprocess] (b) ${WORKERS * CALLS} keyed grants and ${WORKERS * CALLS} keyed consumptions: one of each applied; ${commitsOf([...grants, ...consumes])}`)
  })

  it('(c) revocation races consumption of one points authorization from every process: ledger and balance agree', { timeout: 60_000 }, async () => {
    const POINTS = 200 // more than every consumption together: only the revocation ends it
    const ATTEMPTS = 30 // consumptions per worker
    const openid = 'refunded-user'
    const { workers, auth, t0, clock, schema } = await fleet.start(WORKERS)
    // A session per worker; the trial (half a day) is over at t0 + DAY, when the points take over.
    clock.set(t0 + SECOND)
    for (const w of range(WORKERS)) await auth.handleScan({ sceneStr: (await auth.createScene({ deviceId: `refund-tv-${w}` })).sceneStr, openid })
    clock.set(t0 + 2 * SECOND)
    const granted = await auth.grant({ openid, type: 'points', points: POINTS, source: 'purchase' })
    const tokens = sessionTokensOf(await readTables(pool, schema), openid)
    expect(tokens).toHaveLength(WORKERS)

    // Worker w revokes once 8 + 4w of its consumptions have started. With four lanes, at least five
    // of them have then returned, so the first revocation to commit follows at least five ok ones.
    const reports = await runOnAll(workers, (w) => ({
      kind: 'consume-revoke', now: t0 + DAY, lanes: LANES, tokens: range(ATTEMPTS).map((k) => tokens[(k + w) % WORKERS] as string),
      revokeAfter: 8 + 4 * w, authorizationId: granted.id, reason: 'refund',
    }))
    await exitAll(workers)
    expectNoErrors(reports)
    const snapshot = await soundTables(schema)

    const stored = snapshot.authorizations.find((a) => a.id === granted.id)
    expect(stored?.status).toBe('revoked')
    // Every revocation answered `revoked`: one wrote it, the others found it written (B-revoke-2).
    expect(reports.map((r) => [r.revokes, r.revokesRefused])).toEqual(reports.map(() => [1, 0]))
    const ok = sum(reports, (r) => r.consumes.ok)
    expect(ok).toBeGreaterThanOrEqual(5)
    expect(ok + sum(reports, (r) => r.consumes.need_purchase)).toBe(WORKERS * ATTEMPTS)
    expect(sum(reports, (r) => r.consumes.insufficient_points)).toBe(0)
    expect(sum(reports, (r) => r.consumedFrom[granted.id] ?? 0)).toBe(ok)
    // The ledger: every point spent is one consume entry, the balance is what is left, and the
    // revocation is the authorization's last entry, recorded with the balance it froze.
    const entries = snapshot.ledger.filter((e) => e.authorizationId === granted.id)
    const spent = entries.filter((e) => e.kind === 'consume')
    expect(spent).toHaveLength(ok)
    expect(spent.every((e) => e.points === -1)).toBe(true)
    expect(POINTS - (stored?.remainingPoints ?? 0)).toBe(ok)
    expect(entries.filter((e) => e.kind === 'revoke')).toEqual([expect.objectContaining({ reason: 'refund', remainingPoints: stored?.remainingPoints })])
    expect(entries.at(-1)?.kind).toBe('revoke')
    console.log(`[multiprocess] (c) revocation racing ${WORKERS * ATTEMPTS} consumptions: ${ok} ok before it; ${commitsOf(reports)}`)
  })

  it('(d) one user scans, is granted to and consumes from every process: one trial, never two active, the queue in FIFO order', { timeout: 60_000 }, async () => {
    const SCENES = 40
    const GRANTS = 5 // per worker, of 2 points each
    const CONSUMES = 15 // per worker: 60 attempts for 40 points
    const openid = 'busy-user'
    const { workers, auth, t0, schema } = await fleet.start(WORKERS)
    const scenes: string[] = []
    for (const i of range(SCENES)) scenes.push((await auth.createScene({ deviceId: `busy-tv-${i}` })).sceneStr)

    const { value: phases, samples } = await sampleActiveWhile(pool, schema, (async () => {
      const scans = await runOnAll(workers, { kind: 'scan', now: t0 + SECOND, lanes: LANES, tasks: scenes.map((sceneStr) => ({ sceneStr, openid })) })
      const grants = await runOnAll(workers, { kind: 'grant', now: t0 + 2 * SECOND, lanes: LANES, tasks: range(GRANTS).map(() => ({ openid, points: 2 })) })
      const queued = await readTables(pool, schema)
      // A day later the trial is over: the consumptions spend the queue, one authorization after another.
      const tokens = sessionTokensOf(queued, openid)
      const consumes = await runOnAll(workers, (w) => ({
        kind: 'consume', now: t0 + DAY, lanes: LANES, points: 1, tasks: range(CONSUMES).map((k) => ({ token: tokens[(w * CONSUMES + k) % tokens.length] as string })),
      }))
      return { scans, grants, queued, consumes }
    })())
    await exitAll(workers)
    const { scans, grants, queued, consumes } = phases
    expectNoErrors([...scans, ...grants, ...consumes])
    expect(samples.reads).toBeGreaterThan(0)
    expect(samples.violations).toEqual([])

    // After the scans and grants: one user, each scene processed once for it, one trial (active),
    // and every grant queued behind it.
    expect(checkInvariants(queued)).toEqual([])
    expect(queued.users).toHaveLength(1)
    expect(scans.flatMap((r) => r.processed).map((p) => p.sceneStr).sort()).toEqual([...scenes].sort())
    expect(scans.flatMap((r) => r.processed).every((p) => p.result === 'authorized')).toBe(true)
    expect(queued.sessions).toHaveLength(SCENES)
    expect(queued.authorizations.filter((a) => a.source === 'free')).toEqual([expect.objectContaining({ status: 'active' })])
    const points = queued.authorizations.filter((a) => a.type === 'points')
    expect(points).toHaveLength(WORKERS * GRANTS)
    expect(points.every((a) => a.status === 'pending')).toBe(true)

    // After the consumptions: every point spent, two from each authorization, which were activated
    // one at a time in queue order (created at one moment, so by id: B-fifo-1).
    const snapshot = await soundTables(schema)
    expect(sum(consumes, (r) => r.consumes.ok)).toBe(2 * WORKERS * GRANTS)
    expect(sum(consumes, (r) => r.consumes.need_purchase)).toBe(WORKERS * CONSUMES - 2 * WORKERS * GRANTS)
    const pointsIds = points.map((a) => a.id).sort((a, b) => a - b)
    const usedFrom = new Map<number, number>()
    for (const r of consumes) for (const [id, n] of Object.entries(r.consumedFrom)) usedFrom.set(Number(id), (usedFrom.get(Number(id)) ?? 0) + n)
    expect([...usedFrom.entries()].sort(([a], [b]) => a - b)).toEqual(pointsIds.map((id) => [id, 2]))
    const activations = snapshot.ledger.filter((e) => e.kind === 'activate' && pointsIds.includes(e.authorizationId)).map((e) => e.authorizationId)
    expect(activations).toEqual(pointsIds)
    expect(snapshot.authorizations.map((a) => a.status)).toEqual(snapshot.authorizations.map((a) => (a.source === 'free' ? 'expired' : 'exhausted')))
    console.log(
      `[multiprocess] (d) one user: ${WORKERS * SCENES} scans, ${WORKERS * GRANTS} grants, ${WORKERS * CONSUMES} consumptions; ` +
        `${samples.reads} mid-load reads of the active authorizations; ${commitsOf([...scans, ...grants, ...consumes])}`,
    )
  })
})
