/**
 * `halfAppliedWrites`: beside {@link checkInvariants}, the checks that no operation was applied in
 * part, for crash and multi-process tests of any store. Each write of scanauth touches several
 * records in one commit (a scan: the scene, the user, the trial, the session and the ledger; a keyed
 * grant: the user, the authorization, the ledger and the key), so a commit cut in the middle would
 * leave one of them without the others. One line per violation, so a failure names every problem.
 *
 * @module
 */
import type { StoreSnapshot } from './harness'

/** Every way the snapshot shows a commit applied in part (empty when there is none). */
export function halfAppliedWrites(snapshot: StoreSnapshot): string[] {
  return [...scansApplied(snapshot), ...usersApplied(snapshot), ...keysApplied(snapshot)]
}

/**
 * A processed scan (B-scan-8, B-scan-9, B-scan-atomic) wrote its session together with its scene,
 * authorized at the session's creation and bound to the session's user.
 */
function scansApplied(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  const scenes = new Map(snapshot.scenes.map((s) => [s.id, s]))
  for (const session of snapshot.sessions) {
    const scene = scenes.get(session.sceneId)
    if (scene === undefined) problems.push(`session ${session.id} names missing scene ${session.sceneId}`)
    else if (scene.status !== 'authorized' || scene.userId !== session.userId || scene.authorizedAt !== session.createdAt) {
      problems.push(`session ${session.id} of user ${session.userId} at ${session.createdAt}, but its scene is ${scene.status}, user ${scene.userId}, authorized at ${scene.authorizedAt}`)
    }
  }
  return problems
}

/**
 * A user exists only together with what created it: a first scan (its scene, session and free
 * trial, B-scan-4, B-scan-5) or a grant (its authorization). And the free trial comes only with
 * the scan that claimed it (B-free-1, B-free-4): a scene of that user authorized at the trial's creation.
 */
function usersApplied(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  for (const user of snapshot.users) {
    const owned = snapshot.authorizations.filter((a) => a.userId === user.id)
    if (owned.length === 0) problems.push(`user ${user.id} (${user.openid}) has no authorization: neither its scan nor its grant was applied with it`)
    const trial = owned.find((a) => a.source === 'free')
    if (trial !== undefined && !snapshot.scenes.some((s) => s.userId === user.id && s.status === 'authorized' && s.authorizedAt === trial.createdAt)) {
      problems.push(`user ${user.id} (${user.openid}) has a free trial from ${trial.createdAt} without the scan that claimed it`)
    }
  }
  return problems
}

/**
 * An idempotency key is recorded in the commit of the call it guards (B-idem-2): a grant's record
 * and the `grant` entry of the authorization it names carry the same key, and every ledger entry
 * written under a key has its record.
 */
function keysApplied(snapshot: StoreSnapshot): string[] {
  const problems: string[] = []
  const records = new Map(snapshot.idempotency.map((r) => [r.key, r]))
  for (const record of snapshot.idempotency) {
    if (record.authorizationId === null) continue
    const grant = snapshot.ledger.find((e) => e.authorizationId === record.authorizationId && e.kind === 'grant')
    if (grant?.idempotencyKey !== record.key) problems.push(`key ${record.key} names authorization ${record.authorizationId}, whose grant entry carries key ${grant?.idempotencyKey}`)
  }
  for (const entry of snapshot.ledger) {
    if (entry.idempotencyKey !== null && !records.has(entry.idempotencyKey)) problems.push(`ledger entry ${entry.id} carries key ${entry.idempotencyKey}, which has no record`)
  }
  return problems
}
