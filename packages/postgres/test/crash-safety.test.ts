// Crash safety on PostgreSQL: four worker processes (workers/load-worker.ts) hammer one schema with
// scans, keyed and plain grants, revocations and consumptions. Mid-load the test terminates every
// backend of theirs with pg_terminate_backend (found by the application_name only this test's
// workers use, so no other connection on the server is touched), in six rounds, each repeated
// until at least one backend was cut off in the middle of a statement; between the last rounds it
// SIGKILLs two of the workers, one after the other. It proves:
//   - nothing is half-applied: each commit is one statement, so a backend cut off in the middle of
//     one rolls it back whole, and a client killed mid-load leaves whole commits or none. Read
//     straight from the tables, every invariant (checkInvariants) and every half-applied check
//     (support/checks.ts) holds, and no idempotency key was applied twice;
//   - the survivors' own points add up: every grant and consumption that returned is stored, and
//     of those that threw (the caller cannot tell whether they committed) at most all are;
//   - a worker survives its backends being terminated: it reports the errors and goes on working
//     on new connections;
//   - the schema keeps serving afterwards: a fresh pool and store scan, grant and consume.
import { afterAll, describe, expect, it } from 'vitest'
import { createScanAuth } from '@scanauth/core'
import { checkInvariants, halfAppliedWrites, RecordingQrProvider } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { noBackendsLeft, terminateMidStatement, type Terminated } from './support/backends'
import { pointsOf, sessionTokensOf } from './support/checks'
import { openPool } from './support/database'
import { exitAll, range, sum, useWorkerFleet, type WorkerHandle } from './support/fleet'
import { readTables } from './support/tables'
import { SERVICE_SETTINGS, type Report } from './workers/protocol'

const WORKERS = 4
const LANES = 4
const OWN_OPENIDS = 3
const SHARED_SCENES = 150
const SHARED_OPENIDS = 8
const KEYED_GRANTS = 12
const PROGRESS_EVERY = 20
/** Operations every worker completes before the first termination. */
const WARM_UP = 100
/** Rounds of terminating every backend while all workers run. */
const TERMINATIONS = 4
/** Operations every running worker must complete after each termination or kill, before the next. */
const OPERATIONS_BETWEEN = 100
/** Workers killed with SIGKILL, one after the other; the others survive. */
const VICTIMS = 2
const SECOND = 1000
const DAY = 86_400_000
/** What a lost connection makes node-postgres throw: the only errors the workers may report. */
const CONNECTION_LOST = /terminat|connection/i

const pool = openPool(4)
afterAll(() => pool.end())
const fleet = useWorkerFleet(pool)

/** Operations of a report that threw. */
const failures = (report: Report) => Object.values(report.errors).reduce((a, b) => a + b, 0)

/** Waits until every worker in `running` has completed `OPERATIONS_BETWEEN` more operations. */
const keepGoing = (running: WorkerHandle[]) => Promise.all(running.map((w) => w.progressed(w.progress() + OPERATIONS_BETWEEN)))

describe('PostgresStore crash safety', () => {
  it('keeps every write whole when backends are terminated and worker processes are SIGKILLed mid-load', { timeout: 60_000 }, async () => {
    const { workers, auth, clock, t0, schema, applicationName } = await fleet.start(WORKERS)
    const ownOpenids = range(WORKERS).map((w) => range(OWN_OPENIDS).map((j) => `crash-w${w}-u${j}`))

    // Setup: every worker's own users scan two scenes each, so they have sessions; their trials
    // (half a day) are over by the load, so each of their consumptions spends one point.
    clock.set(t0 + SECOND)
    for (const openid of ownOpenids.flat()) {
      for (const _ of range(2)) await auth.handleScan({ sceneStr: (await auth.createScene({ deviceId: `own-${openid}` })).sceneStr, openid })
    }
    const setup = await readTables(pool, schema)
    const ownTokens = ownOpenids.map((list) => list.flatMap((openid) => sessionTokensOf(setup, openid)))

    // The load, a day later.
    clock.set(t0 + DAY - 60 * SECOND)
    const sharedScenes: string[] = []
    for (const i of range(SHARED_SCENES)) sharedScenes.push((await auth.createScene({ deviceId: `shared-${i}` })).sceneStr)
    const sharedOpenids = range(SHARED_OPENIDS).map((i) => `crash-shared-${i}`)
    // A few keys, each always sent with the same parameters, picked at random by every worker.
    const keyedGrants = range(KEYED_GRANTS).map((k) => ({ key: `crash-order-${k}`, openid: `crash-buyer-${k % 3}`, points: 5 }))
    const loops = workers.map((worker, w) =>
      worker.run({
        kind: 'loop', now: t0 + DAY, lanes: LANES, sharedScenes, sharedOpenids, keyedGrants,
        ownOpenids: ownOpenids[w] ?? [], ownTokens: ownTokens[w] ?? [], progressEvery: PROGRESS_EVERY,
      }),
    )
    const victims = workers.slice(0, VICTIMS)
    const survivors = workers.slice(VICTIMS)
    // A victim's report never comes: its loop fails when it is killed.
    for (const loop of loops.slice(0, VICTIMS)) loop.catch(() => undefined)

    await Promise.all(workers.map((w) => w.progressed(WARM_UP)))
    // Each round fails the test unless it cuts off at least one backend in the middle of a statement.
    const terminated: Terminated[] = []
    for (const _ of range(TERMINATIONS)) {
      terminated.push(await terminateMidStatement(pool, applicationName))
      await keepGoing(workers)
    }
    let running = [...workers]
    for (const victim of victims) {
      victim.child.kill('SIGKILL')
      expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' })
      running = running.filter((w) => w !== victim)
      terminated.push(await terminateMidStatement(pool, applicationName))
      await keepGoing(running)
    }
    for (const w of survivors) w.tell({ kind: 'stop' })
    const reports = await Promise.all(loops.slice(VICTIMS))
    await exitAll(survivors)
    // The killed workers' backends may still be finishing a statement; only then is the data final.
    await noBackendsLeft(pool, applicationName)

    // --- Straight from the tables.
    const snapshot = await readTables(pool, schema)
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    const keyedEntries = snapshot.ledger.filter((e) => e.kind === 'grant' && e.idempotencyKey !== null).map((e) => e.idempotencyKey)
    expect(new Set(keyedEntries).size).toBe(keyedEntries.length)
    // Every keyed grant that returned answered the authorization its key records.
    const recorded = new Map(snapshot.idempotency.map((r) => [r.key, r.authorizationId]))
    for (const report of reports) {
      for (const [key, ids] of Object.entries(report.grantedByKey)) expect(ids, key).toEqual(ids.map(() => recorded.get(key)))
    }

    // Every survivor saw its connections go (a failed operation, or an error on an idle client),
    // went on, and saw nothing else go wrong.
    for (const report of reports) {
      expect(Object.keys(report.errors).filter((message) => !CONNECTION_LOST.test(message))).toEqual([])
      expect(failures(report) + report.idleClientErrors).toBeGreaterThan(0)
    }

    // The survivors' own users: stored points lie between what returned and what was attempted.
    for (const [i, report] of reports.entries()) {
      const { granted, spent } = pointsOf(snapshot, ownOpenids[VICTIMS + i] ?? [])
      expect(granted).toBeGreaterThanOrEqual(report.ownPointsGranted)
      expect(granted).toBeLessThanOrEqual(report.ownPointsGranted + report.ownPointsInDoubt)
      expect(spent).toBeGreaterThanOrEqual(report.consumes.ok)
      expect(spent).toBeLessThanOrEqual(report.consumes.ok + report.consumes.inDoubt)
    }

    // A fresh pool and store on the schema serve a victim's user: a scan, a grant, a consumption.
    const freshPool = openPool(2)
    const fresh = new PostgresStore({ pool: freshPool, schema })
    try {
      await fresh.migrate()
      const after = createScanAuth({ store: fresh, qr: new RecordingQrProvider(), now: () => t0 + DAY + SECOND, ...SERVICE_SETTINGS })
      const openid = ownOpenids[0]?.[0] as string
      const { sceneStr } = await after.createScene({ deviceId: 'after-crash' })
      const victimUser = snapshot.users.find((u) => u.openid === openid)
      expect(await after.handleScan({ sceneStr, openid })).toMatchObject({ userId: victimUser?.id })
      await after.grant({ openid, type: 'points', points: 1 })
      expect(await after.consume({ sessionToken: ownTokens[0]?.[0] as string })).toMatchObject({ status: 'ok' })
    } finally {
      await fresh.close()
      await freshPool.end()
    }
    const final = await readTables(pool, schema)
    expect(checkInvariants(final)).toEqual([])
    expect(halfAppliedWrites(final)).toEqual([])

    const total = (pick: (r: Report) => number) => sum(reports, pick)
    console.log(
      `[crash] ${terminated.length} rounds terminated ${terminated.map((t) => `${t.terminated} (${t.active} mid-statement)`).join(', ')} backends; ` +
        `killed ${VICTIMS} workers; survivors: ${total((r) => r.operations)} operations, ${total(failures)} failed, ` +
        `${total((r) => r.idleClientErrors)} idle-client errors, ${total((r) => r.consumes.ok)} consumptions ok, ${total((r) => r.revokes)} revocations, ` +
        `${total((r) => r.commits)} commits; tables: ${snapshot.scenes.length} scenes, ${snapshot.users.length} users, ` +
        `${snapshot.authorizations.length} authorizations, ${snapshot.ledger.length} ledger entries, ${snapshot.idempotency.length} keys`,
    )
  })
})
