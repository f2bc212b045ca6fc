// Four worker processes, each with its own createScanAuth and SqliteStore, on one file: concurrent
// scans of the same scenes, the same new openids on many scenes, grants, concurrent consumes.
// Afterwards every invariant is read straight from the tables.
import { describe, expect, it } from 'vitest'
import { pointsTotals } from './support/checks'
import { dumpFile } from './support/files'
import { DAY, SECOND } from './support/fixture'
import { exitAll, expectSoundFile, range, runOnAll, sessionTokens, sum, useWorkerFleet } from './support/fleet'

const WORKERS = 4
const SCENES = 120
const OPENIDS = 12
/** Openids that only ever receive grants: every worker creates them at once. */
const GRANT_ONLY = 8
/** Users 0..HOT-1 receive more consume attempts than they have points. */
const HOT = 4

const fleet = useWorkerFleet()

describe('SqliteStore across processes', () => {
  it(`keeps every invariant with ${WORKERS} processes scanning, granting and consuming at once`, { timeout: 120_000 }, async () => {
    // All workers open the brand-new file at the same moment: one of them migrates it.
    const { filename, workers, t0, parent, auth } = await fleet.start(WORKERS)
    const scenes: string[] = []
    for (const i of range(SCENES)) scenes.push((await auth.createScene({ deviceId: `device-${i}` })).sceneStr)
    const openids = range(OPENIDS).map((i) => `mp-user-${i}`)

    // Every worker scans every scene (4 scans per scene); each openid scans SCENES / OPENIDS scenes.
    const scanTasks = scenes.map((sceneStr, i) => ({ sceneStr, openid: openids[i % OPENIDS] as string }))
    const scans = await runOnAll(workers, { kind: 'scan', now: t0 + SECOND, tasks: scanTasks })

    // Every worker grants 2 × 5 points to every user, and 3 points to each grant-only openid.
    const grantTasks = [
      ...openids.flatMap((openid) => [{ openid, points: 5 }, { openid, points: 5 }]),
      ...range(GRANT_ONLY).map((j) => ({ openid: `mp-grant-only-${j}`, points: 3 })),
    ]
    const grants = await runOnAll(workers, { kind: 'grant', now: t0 + 2 * SECOND, tasks: grantTasks })

    // A day later (the free trials have ended) every worker consumes through every session of the
    // users: far more attempts than points on the hot users, fewer on the others.
    const afterGrants = dumpFile(filename)
    const tokensOf = (openid: string) => sessionTokens(afterGrants, openid)
    const perUser = SCENES / OPENIDS
    const consumeTokens = [
      ...range(100).map((i) => tokensOf(openids[i % HOT] as string)[i % perUser] as string),
      ...range(4 * OPENIDS).map((i) => tokensOf(openids[i % OPENIDS] as string)[Math.floor(i / OPENIDS) % perUser] as string),
    ]
    const consumes = await runOnAll(workers, { kind: 'consume', now: t0 + DAY, tokens: consumeTokens })

    await exitAll(workers)
    await parent.close()

    // --- Straight from the tables.
    const snapshot = expectSoundFile(filename, { readonly: true })

    // One processing per scene: exactly one of the 4 × SCENES scans of each scene was processed.
    const processed = scans.flatMap((r) => r.processed)
    expect(processed).toHaveLength(SCENES)
    expect(new Set(processed.map((p) => p.sceneStr)).size).toBe(SCENES)
    expect(sum(scans, (r) => r.invalid)).toBe(WORKERS * SCENES - SCENES)
    // One user per openid, the same id wherever it was seen, and it is the user bound to the scene.
    expect(snapshot.users).toHaveLength(OPENIDS + GRANT_ONLY)
    const userIdOf = new Map(snapshot.users.map((u) => [u.openid, u.id]))
    for (const p of processed) expect(p.userId).toBe(userIdOf.get(p.openid))
    for (const scene of snapshot.scenes) {
      expect(scene.status).toBe('authorized')
      expect(scene.userId).toBe(userIdOf.get(openids[scenes.indexOf(scene.sceneStr) % OPENIDS] as string))
    }
    // One free authorization per scanning user, none for grant-only users.
    expect(snapshot.authorizations.filter((a) => a.source === 'free')).toHaveLength(OPENIDS)

    // Points: everything granted is stored, and every successful consume took exactly one point.
    const points = pointsTotals(snapshot)
    const ok = sum(consumes, (r) => r.consumes.ok)
    expect(points.granted).toBe(sum(grants, (r) => r.pointsGranted))
    expect(points.consumed).toBe(ok)
    // Hot users spend all of their 40 points; the others spend one per attempt (4 workers × 4).
    expect(ok).toBe(HOT * WORKERS * 10 + (OPENIDS - HOT) * WORKERS * 4)
    expect(sum(consumes, (r) => r.consumes.need_purchase)).toBe(WORKERS * consumeTokens.length - ok)
    const hotIds = new Set(openids.slice(0, HOT).map((o) => userIdOf.get(o)))
    for (const a of snapshot.authorizations) if (hotIds.has(a.userId) && a.type === 'points') expect(a.remainingPoints).toBe(0)

    const all = [...scans, ...grants, ...consumes]
    console.log(
      `[multiprocess] ${WORKERS} processes: ${sum(scans, (r) => r.scans)} scans (${processed.length} processed, ` +
        `${sum(scans, (r) => r.invalid)} invalid), ${sum(scans, (r) => r.polls)} polls, ${sum(grants, (r) => r.grants)} grants ` +
        `(${points.granted} points), ${WORKERS * consumeTokens.length} consumes (${ok} ok, ` +
        `${sum(consumes, (r) => r.consumes.need_purchase)} need_purchase); ${sum(all, (r) => r.commits)} commits, ` +
        `${sum(all, (r) => r.conflicts)} conflicts retried`,
    )
  })
})
