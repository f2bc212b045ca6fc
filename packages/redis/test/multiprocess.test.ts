/**
 * Across processes: four Node processes, each with its own ioredis client, RedisStore and
 * `createScanAuth` (`support/worker.ts`), drive the same data at the same time: concurrent scans
 * of the same scenes by new openids that recur over many scenes, point grants to the same new
 * openids, concurrent consumes of the same sessions, grants repeating one idempotency key, and a
 * revocation racing consumption; and one counter incremented from every process. Afterwards every invariant (the ledger against the
 * authorizations included) and the user indexes are checked on the records read straight from
 * Redis, with explicit counts, and the operation counts are reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { checkInvariants, halfAppliedWrites, RecordingQrProvider, type StoreSnapshot } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { checkIndexes, connect, deleteKeysUnder, dumpRecords, testPrefix } from './support/redis'
import type { Job, PhaseReport } from './support/worker'
import { startWorkerProcess, type WorkerProcess } from './support/worker-process'

const PROCESSES = 4
const SCENES = 40
const NEW_OPENIDS = 6
const PAYERS = ['payer-0', 'payer-1', 'payer-2', 'payer-3']
const GRANTS_EACH = 8 // per payer per process
const POINTS = 5 // per grant
const CONSUMES_EACH = 48 // per payer per process
const LANES_EACH = 2 // concurrent consumers per payer per process
const KEYED_GRANTS = [13, 13, 12, 12] // per process: 50 grants with one idempotency key
const RACE_CONSUMES = 24 // per process, 2 points each, racing one revocation
const INCREMENTS = 250 // per process, of one counter

/** Runs one phase in every worker at once and sums their reports. */
async function phase(workers: WorkerProcess[], job: (index: number) => Exclude<Job, { phase: 'exit' }>) {
  const reports = await Promise.all(workers.map((w, i) => w.run(job(i))))
  const total: PhaseReport = { outcomes: {}, byKey: {}, counts: { operations: 0, loads: 0, commits: 0, conflicts: 0 } }
  for (const report of reports) {
    for (const [k, v] of Object.entries(report.outcomes)) total.outcomes[k] = (total.outcomes[k] ?? 0) + v
    for (const [key, outcomes] of Object.entries(report.byKey)) {
      const into = (total.byKey[key] ??= {})
      for (const [k, v] of Object.entries(outcomes)) into[k] = (into[k] ?? 0) + v
    }
    for (const k of Object.keys(total.counts) as Array<keyof PhaseReport['counts']>) total.counts[k] += report.counts[k]
  }
  return total
}

describe(`${PROCESSES} processes on one Redis`, () => {
  let admin: Redis
  let prefix: string
  let setup: ScanAuth
  let workers: WorkerProcess[] = []
  const counts: Array<{ phase: string } & PhaseReport['counts']> = []

  beforeAll(async () => {
    admin = connect()
    prefix = testPrefix()
    setup = createScanAuth({ store: new RedisStore({ client: admin, keyPrefix: prefix }), qr: new RecordingQrProvider() })
    workers = await Promise.all(Array.from({ length: PROCESSES }, () => startWorkerProcess(prefix)))
  }, 60_000)

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.exit()))
    // One line (it was a 48-line JSON dump): operations, loads, commits and conflicts of each phase.
    const phases = counts.map((c) => `${c.phase} ${c.operations}/${c.loads}/${c.commits}/${c.conflicts}`)
    console.info(`[multiprocess] ${PROCESSES} processes, operations/loads/commits/conflicts: ${phases.join('; ')}`)
    await deleteKeysUnder(admin, prefix)
    await admin.quit()
  })

  const dump = (): Promise<StoreSnapshot> => dumpRecords(admin, prefix)

  it('concurrent scans of the same scenes by recurring new openids: one processing per scene, one user and one trial per openid', async () => {
    const scenes = await Promise.all(Array.from({ length: SCENES }, async (_, i) => (await setup.createScene({ deviceId: `tv-${i}` })).sceneStr))
    // Every process scans every scene; for one scene each process uses a different openid, and
    // each openid recurs over many scenes.
    const report = await phase(workers, (w) => ({
      phase: 'scan',
      scenes,
      openidFor: scenes.map((_, i) => `newcomer-${(i + w) % NEW_OPENIDS}`),
    }))
    counts.push({ phase: 'scan', ...report.counts })
    expect(report.counts.operations).toBe(PROCESSES * SCENES)
    expect(Object.keys(report.outcomes).filter((o) => o.startsWith('error'))).toEqual([])
    for (const sceneStr of scenes) {
      const outcomes = report.byKey[sceneStr] ?? {}
      expect((outcomes.authorized ?? 0) + (outcomes.need_purchase ?? 0), sceneStr).toBe(1)
      expect(outcomes.invalid, sceneStr).toBe(PROCESSES - 1)
    }

    const snapshot = await dump()
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    expect(snapshot.scenes.filter((s) => s.status === 'authorized')).toHaveLength(SCENES)
    expect(snapshot.sessions).toHaveLength(SCENES)
    const users = snapshot.users.filter((u) => u.openid.startsWith('newcomer-'))
    expect(new Set(users.map((u) => u.openid)).size).toBe(users.length)
    expect(users.length).toBeLessThanOrEqual(NEW_OPENIDS)
    for (const user of users) {
      expect(user.hasClaimedFree).toBe(true)
      expect(snapshot.authorizations.filter((a) => a.userId === user.id && a.source === 'free')).toHaveLength(1)
    }
    // Every processed scan authorized (each user's trial is active): no need_purchase.
    expect(report.outcomes.need_purchase ?? 0).toBe(0)
  })

  it('concurrent point grants to the same new openids: one user each, every grant stored, one active', async () => {
    const report = await phase(workers, () => ({ phase: 'grant', openids: PAYERS, grantsEach: GRANTS_EACH, points: POINTS }))
    counts.push({ phase: 'grant', ...report.counts })
    expect(report.counts.operations).toBe(PROCESSES * PAYERS.length * GRANTS_EACH)
    expect(Object.keys(report.outcomes).filter((o) => o.startsWith('error'))).toEqual([])

    const snapshot = await dump()
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    for (const openid of PAYERS) {
      const users = snapshot.users.filter((u) => u.openid === openid)
      expect(users, openid).toHaveLength(1)
      const list = snapshot.authorizations.filter((a) => a.userId === users[0]?.id)
      expect(list, openid).toHaveLength(PROCESSES * GRANTS_EACH)
      expect(list.filter((a) => a.status === 'active'), openid).toHaveLength(1)
      expect(list.filter((a) => a.status === 'pending'), openid).toHaveLength(PROCESSES * GRANTS_EACH - 1)
      expect(users[0]?.hasClaimedFree).toBe(false)
    }
  })

  it('concurrent consumes of the same sessions: every point spent exactly once, then the queued trial', async () => {
    // One session per payer; their first scan queues the free trial behind the points.
    const tokens: string[] = []
    for (const openid of PAYERS) {
      const { sceneStr } = await setup.createScene({ deviceId: `tv-of-${openid}` })
      await setup.handleScan({ sceneStr, openid })
      const status = await setup.getStatus(sceneStr)
      if (status.status !== 'authorized') throw new Error(`unexpected ${status.status}`)
      tokens.push(status.sessionToken)
    }
    const report = await phase(workers, () => ({ phase: 'consume', tokens, consumesEach: CONSUMES_EACH, lanesEach: LANES_EACH }))
    counts.push({ phase: 'consume', ...report.counts })
    expect(report.counts.operations).toBe(PROCESSES * PAYERS.length * CONSUMES_EACH)
    expect(Object.keys(report.outcomes).filter((o) => o.startsWith('error'))).toEqual([])

    const points = GRANTS_EACH * PROCESSES * POINTS
    const consumes = CONSUMES_EACH * PROCESSES
    const snapshot = await dump()
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    for (const [i, openid] of PAYERS.entries()) {
      const outcomes = report.byKey[tokens[i] as string] ?? {}
      expect(outcomes.points, openid).toBe(points)
      expect(outcomes.time, openid).toBe(consumes - points)
      const user = snapshot.users.find((u) => u.openid === openid)
      const list = snapshot.authorizations.filter((a) => a.userId === user?.id)
      const pointsLeft = list.filter((a) => a.type === 'points').reduce((sum, a) => sum + a.remainingPoints, 0)
      expect(pointsLeft, openid).toBe(0)
      expect(list.filter((a) => a.status === 'exhausted'), openid).toHaveLength(GRANTS_EACH * PROCESSES)
      expect(list.find((a) => a.source === 'free')?.status, openid).toBe('active')
    }
  })
  it('one idempotency key granted from every process at once (50 grants): one authorization, one grant entry, every caller the same id', async () => {
    const key = 'payment-across-processes'
    const report = await phase(workers, (w) => ({ phase: 'grantKey', openid: 'buyer', key, count: KEYED_GRANTS[w] as number, days: 30 }))
    counts.push({ phase: 'grant with one key', ...report.counts })
    expect(report.counts.operations).toBe(50)
    const outcomes = report.byKey[key] ?? {}
    expect(Object.values(outcomes)).toEqual([50])

    const snapshot = await dump()
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    expect(await checkIndexes(admin, prefix, snapshot)).toEqual([])
    const buyer = snapshot.users.filter((u) => u.openid === 'buyer')
    expect(buyer).toHaveLength(1)
    const granted = snapshot.authorizations.filter((a) => a.userId === buyer[0]?.id)
    expect(granted).toHaveLength(1)
    expect(Object.keys(outcomes)).toEqual([`id ${granted[0]?.id}`])
    expect(snapshot.ledger.filter((e) => e.userId === buyer[0]?.id && e.kind === 'grant')).toHaveLength(1)
    expect(snapshot.idempotency.filter((r) => r.key === key)).toEqual([expect.objectContaining({ authorizationId: granted[0]?.id })])
  })

  it('a revocation racing consumption in every process: each point spent is in the ledger, the invariants hold', async () => {
    // 400 points outlast every consumption, so the revocation always finds them revocable; after
    // it the queued free trial takes over.
    const points = await setup.grant({ openid: 'racer', type: 'points', points: 400 })
    const { sceneStr } = await setup.createScene({ deviceId: 'tv-of-racer' })
    await setup.handleScan({ sceneStr, openid: 'racer' })
    const status = await setup.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error(`unexpected ${status.status}`)
    const token = status.sessionToken
    const report = await phase(workers, (w) => ({
      phase: 'revokeRace',
      token,
      consumes: RACE_CONSUMES,
      points: 2,
      authorizationId: points.id,
      revokeAfter: w === 0 ? 8 : null,
    }))
    counts.push({ phase: 'revoke racing consume', ...report.counts })
    expect(Object.keys(report.outcomes).filter((o) => o.startsWith('error'))).toEqual([])
    expect(report.byKey.revoke).toEqual({ revoked: 1 })

    const snapshot = await dump()
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    expect(await checkIndexes(admin, prefix, snapshot)).toEqual([])
    const stored = snapshot.authorizations.find((a) => a.id === points.id)
    expect(stored?.status).toBe('revoked')
    const consumed = report.byKey[token] ?? {}
    const onPoints = consumed[`points ${points.id}`] ?? 0
    expect(onPoints).toBeGreaterThan(0)
    expect(onPoints + Object.entries(consumed).filter(([k]) => k.startsWith('time ')).reduce((n, [, v]) => n + v, 0)).toBe(PROCESSES * RACE_CONSUMES)
    expect(400 - (stored?.remainingPoints ?? 0)).toBe(2 * onPoints)
    const entries = snapshot.ledger.filter((e) => e.authorizationId === points.id)
    expect(-entries.filter((e) => e.kind === 'consume').reduce((sum, e) => sum + e.points, 0)).toBe(2 * onPoints)
    expect(entries.filter((e) => e.kind === 'revoke')).toHaveLength(1)
  })

  it(`one counter incremented ${INCREMENTS} times by each process at once: it ends at ${PROCESSES * INCREMENTS}, every value answered once`, async () => {
    const key = 'rl:create:device:across-processes:0'
    const now = Date.parse('2026-01-01T00:00:00.000Z')
    const report = await phase(workers, () => ({ phase: 'count', key, expiresAt: now + 60_000, now, count: INCREMENTS, lanes: 4 }))
    counts.push({ phase: 'one counter', ...report.counts })
    const values = report.byKey[key] ?? {}
    expect(Object.keys(values).filter((v) => v.startsWith('error'))).toEqual([])
    // 1…1000, each answered by exactly one call in one process.
    expect(Object.keys(values).map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: PROCESSES * INCREMENTS }, (_, i) => i + 1))
    expect(Object.values(values).every((n) => n === 1)).toBe(true)
    const counter = admin.pipeline().get(`${prefix}c:${key}`).pttl(`${prefix}c:${key}`)
    const [[, value], [, ttl]] = (await counter.exec()) as [[null, string], [null, number]]
    expect(value).toBe(`${PROCESSES * INCREMENTS}|${now + 60_000}`)
    // The TTL of the first increment (60 s, relative), kept by every later one.
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })
})
