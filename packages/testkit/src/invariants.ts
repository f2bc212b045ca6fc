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
 *   a scene that is not authorized has no session;
 * - the ledger describes every authorization: replaying its entries in id order gives its status
 *   and its points (a grant first, then activate / consume / expire / exhaust / revoke), and every
 *   entry names an existing authorization of the same user;
 * - an idempotency record of a grant names an existing authorization.
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
  problems.push(...checkLedger(snapshot))
  const authorizationIds = new Set(snapshot.authorizations.map((a) => a.id))
  for (const record of snapshot.idempotency) {
    if (record.authorizationId !== null && !authorizationIds.has(record.authorizationId)) {
      problems.push(`idempotency key ${record.key} names missing authorization ${record.authorizationId}`)
    }
  }
  return problems
}

/** The status each ledger kind leaves an authorization in. */
const STATUS_AFTER: Record<string, string> = {
  grant: 'pending',
  activate: 'active',
  expire: 'expired',
  exhaust: 'exhausted',
  revoke: 'revoked',
}

/** Replays each authorization's ledger entries and compares the outcome with the stored record. */
function checkLedger(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  const byAuthorization = new Map<number, StoreSnapshot['ledger']>()
  for (const entry of [...snapshot.ledger].sort((a, b) => a.id - b.id)) {
    const list = byAuthorization.get(entry.authorizationId) ?? []
    list.push(entry)
    byAuthorization.set(entry.authorizationId, list)
  }
  for (const a of snapshot.authorizations) {
    const entries = byAuthorization.get(a.id) ?? []
    byAuthorization.delete(a.id)
    const first = entries[0]
    if (first === undefined || first.kind !== 'grant') {
      problems.push(`authorization ${a.id} has no grant entry first in the ledger`)
      continue
    }
    let status = 'pending'
    let points = 0
    for (const entry of entries) {
      if (entry.userId !== a.userId) problems.push(`ledger entry ${entry.id} names user ${entry.userId}, not the owner ${a.userId}`)
      if (entry !== first && entry.kind === 'grant') problems.push(`authorization ${a.id} has a second grant entry ${entry.id}`)
      points += entry.points
      if (entry.remainingPoints !== points && a.type === 'points') {
        problems.push(`ledger entry ${entry.id} says ${entry.remainingPoints} points left, the changes add up to ${points}`)
      }
      status = STATUS_AFTER[entry.kind] ?? status
    }
    if (status !== a.status) problems.push(`authorization ${a.id} is ${a.status}, its ledger ends at ${status}`)
    if (a.type === 'points' && points !== a.remainingPoints) problems.push(`authorization ${a.id} has ${a.remainingPoints} points, its ledger ${points}`)
  }
  for (const [id] of byAuthorization) problems.push(`ledger entries name missing authorization ${id}`)
  return problems
}
