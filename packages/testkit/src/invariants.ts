/**
 * The invariants of docs/behaviour.md, checked over every stored record. Used by the contract suite
 * after concurrent load, by the model tests, and by the multi-process tests of each store.
 *
 * @module
 */
import type { StoreSnapshot } from './harness'

/**
 * Returns one line per violated invariant (empty when all hold):
 * - at most one `active` authorization per user;
 * - `has_claimed_free` is true exactly when the user has exactly one `free` authorization, and no
 *   user has more than one (the suites never grant with source `free` themselves; only a first
 *   scan grants it, docs/behaviour.md D-grant-free);
 * - no authorization has negative points;
 * - one user per openid;
 * - every `authorized` scene has a user and exactly one session (only the first scan is processed);
 *   a scene that is not authorized has no session.
 */
export function checkInvariants(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  const openids = new Map<string, number>()
  for (const user of snapshot.users) {
    const seen = openids.get(user.openid)
    if (seen !== undefined) problems.push(`openid ${user.openid} belongs to users ${seen} and ${user.id}`)
    openids.set(user.openid, user.id)
    const owned = snapshot.authorizations.filter((a) => a.userId === user.id)
    const active = owned.filter((a) => a.status === 'active').length
    if (active > 1) problems.push(`user ${user.id} has ${active} active authorizations`)
    const free = owned.filter((a) => a.source === 'free').length
    if (free > 1) problems.push(`user ${user.id} has ${free} free authorizations`)
    if (user.hasClaimedFree !== (free === 1)) {
      problems.push(`user ${user.id} has_claimed_free=${user.hasClaimedFree} with ${free} free authorizations`)
    }
  }
  for (const a of snapshot.authorizations) {
    if (a.remainingPoints < 0) problems.push(`authorization ${a.id} has ${a.remainingPoints} points`)
  }
  for (const scene of snapshot.scenes) {
    const sessions = snapshot.sessions.filter((s) => s.sceneId === scene.id).length
    if (scene.status === 'authorized') {
      if (scene.userId === null) problems.push(`authorized scene ${scene.id} has no user`)
      if (sessions !== 1) problems.push(`authorized scene ${scene.id} has ${sessions} sessions`)
    } else if (sessions !== 0) {
      problems.push(`${scene.status} scene ${scene.id} has ${sessions} sessions`)
    }
  }
  return problems
}
