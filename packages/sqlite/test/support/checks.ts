/**
 * The explicit checks the multi-process tests make on a dump of the file, next to testkit's
 * `checkInvariants`. Each returns one line per violation, so a failure names every problem.
 */
import type { StoreSnapshot } from '@scanauth/testkit'

/** Per-user counts, for the checks and for the test's summary line. */
export function pointsTotals(snapshot: StoreSnapshot): { granted: number; remaining: number; consumed: number } {
  let granted = 0
  let remaining = 0
  for (const a of snapshot.authorizations) {
    if (a.type !== 'points') continue
    granted += a.totalPoints
    remaining += a.remainingPoints
  }
  return { granted, remaining, consumed: granted - remaining }
}

/**
 * The checks the issue lists, read straight from the tables:
 * one processing per scene (authorized, one session, bound to a user), one user per openid, one
 * free authorization per user that has a processed scan (an authorized scene bound to it), none
 * for a user only ever granted to, at most one active authorization per user, no negative points.
 */
export function explicitChecks(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  const sessionsByScene = new Map<number, number>()
  for (const s of snapshot.sessions) sessionsByScene.set(s.sceneId, (sessionsByScene.get(s.sceneId) ?? 0) + 1)
  for (const scene of snapshot.scenes) {
    const sessions = sessionsByScene.get(scene.id) ?? 0
    if (scene.status === 'authorized' && (sessions !== 1 || scene.userId === null)) {
      problems.push(`scene ${scene.sceneStr}: authorized with ${sessions} sessions, user ${scene.userId}`)
    }
    if (scene.status !== 'authorized' && sessions !== 0) problems.push(`scene ${scene.sceneStr}: ${scene.status} with ${sessions} sessions`)
  }
  const byOpenid = new Map<string, number>()
  for (const u of snapshot.users) byOpenid.set(u.openid, (byOpenid.get(u.openid) ?? 0) + 1)
  for (const [openid, count] of byOpenid) if (count !== 1) problems.push(`openid ${openid}: ${count} users`)
  const scanners = new Set(snapshot.scenes.filter((s) => s.status === 'authorized').map((s) => s.userId))
  for (const user of snapshot.users) {
    const owned = snapshot.authorizations.filter((a) => a.userId === user.id)
    const free = owned.filter((a) => a.source === 'free').length
    const expectedFree = scanners.has(user.id) ? 1 : 0
    if (free !== expectedFree) problems.push(`user ${user.openid}: ${free} free authorizations, expected ${expectedFree}`)
    if (user.hasClaimedFree !== (expectedFree === 1)) problems.push(`user ${user.openid}: has_claimed_free ${user.hasClaimedFree}`)
    const active = owned.filter((a) => a.status === 'active').length
    if (active > 1) problems.push(`user ${user.openid}: ${active} active authorizations`)
  }
  for (const a of snapshot.authorizations) {
    if (a.remainingPoints < 0) problems.push(`authorization ${a.id}: ${a.remainingPoints} points`)
    if (a.remainingPoints > a.totalPoints) problems.push(`authorization ${a.id}: ${a.remainingPoints} of ${a.totalPoints} points left`)
  }
  return problems
}
