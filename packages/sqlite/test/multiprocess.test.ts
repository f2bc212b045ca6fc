// Four worker processes, each with its own createScanAuth and SqliteStore, on one file: concurrent
// scans of the same scenes, the same new openids on many scenes, grants, concurrent consumes; the
// same idempotency key granted from every process; revocation racing consumption. Afterwards every
// invariant is read straight from the tables (the ledger included). And one counter incremented,
// and the same orders inserted and one order updated, from every process at once.
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { pointsTotals } from './support/checks'
import { dumpFile } from './support/files'
import { DAY, SECOND } from './support/fixture'
import { exitAll, expectSoundFile, range, runOnAll, sessionTokens, sum, useWorkerFleet } from './support/fleet'
import { openOrder } from './workers/protocol'

const WORKERS = 4
const SCENES = 120
const OPENIDS = 12
/** Openids that only ever receive grants: every worker creates them at once. */
const GRANT_ONLY = 8
/** Users 0..HOT-1 receive more consume attempts than they have points. */
const HOT = 4
/** Grants with one idempotency key, spread over the workers. */
const KEYED_GRANTS = 50
/** Points of the authorization that is revoked while it is being consumed. */
// More than every consumption together (4 workers × 60): only the revocation ends the points, so no
// worker's revocation can find them already spent, however the processes happen to be scheduled.
const REVOKED_POINTS = 300
/** Increments of one counter per process. */
const INCREMENTS = 250
/** Order keys every process tries to insert, and read-and-update attempts on one order per process. */
const ORDER_KEYS = 40
const ORDER_BUMPS = 100

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

  it(`grants once for one idempotency key sent ${KEYED_GRANTS} times from ${WORKERS} processes at once`, { timeout: 120_000 }, async () => {
    const { filename, workers, t0, parent } = await fleet.start(WORKERS)
    await parent.close()
    // A new openid: the processes race to create the user as well as to use the key.
    const openid = 'mp-keyed-buyer'
    const counts = range(WORKERS).map((i) => Math.floor(KEYED_GRANTS / WORKERS) + (i < KEYED_GRANTS % WORKERS ? 1 : 0))
    const reports = await runOnAll(workers, (i) => ({ kind: 'grant-keyed', now: t0 + SECOND, openid, points: 7, key: 'order-mp-1', count: counts[i] as number }))
    await exitAll(workers)

    const snapshot = expectSoundFile(filename, { readonly: true })
    const answered = reports.flatMap((r) => r.authorizationIds)
    expect(answered).toHaveLength(KEYED_GRANTS)
    expect(snapshot.users.filter((u) => u.openid === openid)).toHaveLength(1)
    expect(snapshot.authorizations).toHaveLength(1)
    const [only] = snapshot.authorizations
    expect(new Set(answered)).toEqual(new Set([only?.id]))
    expect(only).toMatchObject({ type: 'points', totalPoints: 7, remainingPoints: 7, status: 'active' })
    expect(snapshot.ledger.filter((e) => e.kind === 'grant')).toEqual([expect.objectContaining({ authorizationId: only?.id, points: 7, idempotencyKey: 'order-mp-1' })])
    expect(snapshot.idempotency).toEqual([expect.objectContaining({ key: 'order-mp-1', authorizationId: only?.id })])
    console.log(`[multiprocess] ${KEYED_GRANTS} keyed grants from ${WORKERS} processes: ${sum(reports, (r) => r.commits)} commits, ${sum(reports, (r) => r.conflicts)} conflicts retried`)
  })

  it(`keeps the ledger in step when a revocation races consumption across ${WORKERS} processes`, { timeout: 120_000 }, async () => {
    const { filename, workers, clock, t0, parent, auth } = await fleet.start(WORKERS)
    // One user with a session per worker; its free trial is over by t0 + DAY, so every consume
    // spends a point of the one points authorization.
    const openid = 'mp-refunded'
    clock.set(t0 + SECOND)
    for (const i of range(WORKERS)) {
      const { sceneStr } = await auth.createScene({ deviceId: `revoke-${i}` })
      await auth.handleScan({ sceneStr, openid })
    }
    const granted = await auth.grant({ openid, type: 'points', points: REVOKED_POINTS, source: 'purchase' })
    await parent.close()
    const tokens = sessionTokens(dumpFile(filename), openid)
    expect(tokens).toHaveLength(WORKERS)

    // Every worker consumes 60 times and revokes after its (10 + 5i)-th consume has started: the
    // first revocation lands while the points last, and the later ones race each other.
    const attempts = range(60).map((k) => tokens[k % WORKERS] as string)
    const reports = await runOnAll(workers, (i) => ({
      kind: 'consume-revoke', now: t0 + DAY, tokens: attempts, revokeAfter: 10 + 5 * i, authorizationId: granted.id, reason: 'refund',
    }))
    await exitAll(workers)

    const snapshot = expectSoundFile(filename, { readonly: true })
    const stored = snapshot.authorizations.find((a) => a.id === granted.id)
    expect(stored?.status).toBe('revoked')
    const ok = sum(reports, (r) => r.consumes.ok)
    expect(ok).toBeGreaterThan(0)
    // The revocation ended the points before the workers' consumptions ran out: some were refused.
    expect(ok).toBeLessThan(WORKERS * attempts.length)
    expect(ok + sum(reports, (r) => r.consumes.need_purchase)).toBe(WORKERS * attempts.length)
    expect(sum(reports, (r) => r.revokes)).toBe(WORKERS)
    // The ledger: one revocation, and its consume entries add up to exactly the points spent.
    const entries = snapshot.ledger.filter((e) => e.authorizationId === granted.id)
    expect(entries.filter((e) => e.kind === 'revoke')).toEqual([expect.objectContaining({ reason: 'refund', remainingPoints: stored?.remainingPoints })])
    const consumed = entries.filter((e) => e.kind === 'consume')
    expect(consumed).toHaveLength(ok)
    expect(-consumed.reduce((total, e) => total + e.points, 0)).toBe(REVOKED_POINTS - (stored?.remainingPoints ?? 0))
    expect(REVOKED_POINTS - (stored?.remainingPoints ?? 0)).toBe(ok)
    // Nothing was spent after the revocation: it is the authorization's last entry.
    expect(entries[entries.length - 1]?.kind).toBe('revoke')
    console.log(
      `[multiprocess] revoke racing consume: ${ok} of ${WORKERS * attempts.length} consumes ok before the revocation, ` +
        `${sum(reports, (r) => r.commits)} commits, ${sum(reports, (r) => r.conflicts)} conflicts retried`,
    )
  })

  it(`counts to ${WORKERS * INCREMENTS} when ${WORKERS} processes increment one counter ${INCREMENTS} times each at once`, { timeout: 120_000 }, async () => {
    const { filename, workers, t0, parent } = await fleet.start(WORKERS)
    await parent.close()
    const key = `rl:create:device:mp:${t0}`
    const reports = await runOnAll(workers, { kind: 'count', now: t0, key, expiresAt: t0 + 60 * SECOND, count: INCREMENTS })
    await exitAll(workers)

    // Every value from 1 to the total answered exactly once, and each process saw its own rise.
    const values = reports.flatMap((r) => r.counterValues)
    expect(values).toHaveLength(WORKERS * INCREMENTS)
    expect([...values].sort((a, b) => a - b)).toEqual(range(WORKERS * INCREMENTS).map((i) => i + 1))
    for (const r of reports) expect(r.counterValues).toEqual([...r.counterValues].sort((a, b) => a - b))
    const raw = new Database(filename, { readonly: true })
    try {
      expect(raw.prepare('SELECT count, expires_at FROM scanauth_counters WHERE key = ?').get(key)).toEqual({ count: WORKERS * INCREMENTS, expires_at: t0 + 60 * SECOND })
    } finally {
      raw.close()
    }
    // How much the processes interleaved: places where the next value came from another process.
    const owner = new Map(reports.flatMap((r, w) => r.counterValues.map((v) => [v, w] as const)))
    const switches = range(WORKERS * INCREMENTS - 1).filter((i) => owner.get(i + 1) !== owner.get(i + 2)).length
    console.log(`[multiprocess] one counter, ${WORKERS} × ${INCREMENTS} increments: ${switches} hand-overs between processes`)
  })

  it(`saves each order version once when ${WORKERS} processes insert the same orders and update one order at once`, { timeout: 120_000 }, async () => {
    const { filename, workers, t0, parent } = await fleet.start(WORKERS)
    const target = 'SA' + 'T'.repeat(26)
    await parent.saveOrder({ op: 'insert', order: openOrder(target, t0, 0) })
    await parent.close()
    const keys = range(ORDER_KEYS).map((i) => `SA${String(i).padStart(26, '0')}`)
    const reports = await runOnAll(workers, { kind: 'orders', now: t0 + SECOND, insert: keys, outTradeNo: target, bumps: ORDER_BUMPS })
    await exitAll(workers)

    // Each key inserted by exactly one process.
    expect(reports.flatMap((r) => r.ordersInserted).sort()).toEqual(keys)
    // Every version from 2 to the last written exactly once: no update was lost or doubled.
    const won = reports.flatMap((r) => r.orderVersionsWon)
    expect([...won].sort((a, b) => a - b)).toEqual(range(won.length).map((i) => i + 2))
    const raw = new Database(filename, { readonly: true })
    try {
      const stored = raw.prepare('SELECT version, transaction_id FROM scanauth_orders WHERE out_trade_no = ?').get(target) as { version: number; transaction_id: string }
      const last = won.length + 1
      const winner = reports.findIndex((r) => r.orderVersionsWon.includes(last))
      expect(stored).toEqual({ version: last, transaction_id: `w${winner}-v${last}` })
      expect(raw.prepare('SELECT COUNT(*) FROM scanauth_orders').pluck().get()).toBe(ORDER_KEYS + 1)
    } finally {
      raw.close()
    }
    const losers = WORKERS * ORDER_BUMPS - won.length
    console.log(`[multiprocess] one order, ${WORKERS} × ${ORDER_BUMPS} read-and-update attempts: ${won.length} written, ${losers} refused as stale`)
  })
})
