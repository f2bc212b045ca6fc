// Crash safety: a worker process is SIGKILLed in the middle of a multi-process load (most of its
// time is spent inside SQLite calls, so the kill usually lands in or around a transaction). The
// file is then reopened and every invariant must hold: SQLite's WAL makes each commit all or nothing.
import { describe, expect, it } from 'vitest'
import { createScanAuth } from '@scanauth/core'
import { checkInvariants, halfAppliedWrites, RecordingQrProvider } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { dumpFile } from './support/files'
import { DAY, SECOND } from './support/fixture'
import { exitAll, expectSoundFile, range, runOnAll, sessionTokens, sum, useWorkerFleet } from './support/fleet'
import { SERVICE_SETTINGS, type Report, type WorkerHandle } from './workers/protocol'

const WORKERS = 4
const SHARED_SCENES = 200
const SHARED_OPENIDS = 10
const OWN_OPENIDS = 3
const PROGRESS_EVERY = 50
/** Operations every worker completes before the kill, and survivors complete after it. */
const OPS_BEFORE_KILL = 300
const OPS_AFTER_KILL = 300

const fleet = useWorkerFleet()

describe('SqliteStore crash safety', () => {
  it('keeps every invariant when a worker is killed with SIGKILL mid-load', { timeout: 120_000 }, async () => {
    const { filename, workers, clock, t0, parent, auth } = await fleet.start(WORKERS)
    const ownOpenids = range(WORKERS).map((w) => range(OWN_OPENIDS).map((j) => `crash-w${w}-u${j}`))

    // Setup at t0: each worker's own users scan two scenes each, so they have sessions.
    const ownScenes: string[][] = []
    for (const w of range(WORKERS)) {
      ownScenes.push([])
      for (const _ of range(OWN_OPENIDS * 2)) ownScenes[w]?.push((await auth.createScene({ deviceId: `own-${w}` })).sceneStr)
    }
    await runOnAll(workers, (w) => ({
      kind: 'scan',
      now: t0 + SECOND,
      tasks: (ownScenes[w] ?? []).map((sceneStr, i) => ({ sceneStr, openid: ownOpenids[w]?.[i % OWN_OPENIDS] as string })),
    }))
    const setup = dumpFile(filename)
    const ownTokens = ownOpenids.map((list) => list.flatMap((openid) => sessionTokens(setup, openid)))

    // The load, a day later (own users' free trials are over, so each consume spends one point).
    clock.set(t0 + DAY - 60 * SECOND)
    const sharedScenes: string[] = []
    for (const i of range(SHARED_SCENES)) sharedScenes.push((await auth.createScene({ deviceId: `shared-${i}` })).sceneStr)
    await parent.close()
    const sharedOpenids = range(SHARED_OPENIDS).map((i) => `crash-shared-${i}`)
    const loops = workers.map((worker, w) =>
      worker.run({ kind: 'loop', now: t0 + DAY, sharedScenes, sharedOpenids, ownOpenids: ownOpenids[w] ?? [], ownTokens: ownTokens[w] ?? [], progressEvery: PROGRESS_EVERY }),
    )
    const victim = workers[0] as WorkerHandle
    const survivors = workers.slice(1)
    await Promise.all(workers.map((w) => w.progressed(OPS_BEFORE_KILL)))
    const victimOps = victim.progress()
    victim.child.kill('SIGKILL')
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' })
    loops[0]?.catch(() => {}) // its report never comes
    // The others keep going on the file the victim left behind, then stop and report.
    await Promise.all(survivors.map((w) => w.progressed(w.progress() + OPS_AFTER_KILL)))
    for (const w of survivors) w.child.send({ kind: 'stop' })
    const reports = (await Promise.all(loops.slice(1))) as Report[]
    await exitAll(survivors)

    // --- Reopen and check.
    const snapshot = expectSoundFile(filename)
    const reopened = new SqliteStore({ filename })

    // The survivors' own users: every point granted is stored, every successful consume took one.
    for (const [i, report] of reports.entries()) {
      const ids = new Set(snapshot.users.filter((u) => ownOpenids[i + 1]?.includes(u.openid)).map((u) => u.id))
      const mine = snapshot.authorizations.filter((a) => ids.has(a.userId) && a.type === 'points')
      const granted = mine.reduce((t, a) => t + a.totalPoints, 0)
      const left = mine.reduce((t, a) => t + a.remainingPoints, 0)
      expect(granted).toBe(report.ownPointsGranted)
      expect(granted - left).toBe(report.consumes.ok)
    }

    // The reopened file serves the whole flow, including the victim's users.
    const after = createScanAuth({ store: reopened, qr: new RecordingQrProvider(), now: () => t0 + DAY + SECOND, ...SERVICE_SETTINGS })
    const { sceneStr } = await after.createScene({ deviceId: 'after-crash' })
    expect(await after.handleScan({ sceneStr, openid: ownOpenids[0]?.[0] as string })).toMatchObject({ userId: expect.any(Number) })
    expect((await after.getStatus(sceneStr)).status).toMatch(/^(authorized|need_purchase)$/)
    await after.grant({ openid: ownOpenids[0]?.[0] as string, type: 'points', points: 1 })
    expect(await after.consume({ sessionToken: ownTokens[0]?.[0] as string })).toMatchObject({ status: 'ok' })
    await reopened.close()
    const final = dumpFile(filename)
    expect(checkInvariants(final)).toEqual([])
    expect(halfAppliedWrites(final)).toEqual([])

    const total = (pick: (r: Report) => number) => sum(reports, pick)
    console.log(
      `[crash] victim killed after ${victimOps} reported ops; survivors: ${total((r) => r.scans)} scans, ${total((r) => r.polls)} polls, ` +
        `${total((r) => r.grants)} grants, ${total((r) => r.consumes.ok)} consumes ok, ${total((r) => r.commits)} commits, ` +
        `${total((r) => r.conflicts)} conflicts; file: ${snapshot.scenes.length} scenes, ${snapshot.users.length} users, ` +
        `${snapshot.authorizations.length} authorizations, ${snapshot.sessions.length} sessions`,
    )
  })
})
