/**
 * What the PostgreSQL multi-process tests count in a table snapshot (the checks that nothing was
 * applied in part are testkit's `halfAppliedWrites`).
 */
import type { StoreSnapshot } from '@scanauth/testkit'

/** Points stored for the users with these openids: granted (total) and spent (total minus left), over their points authorizations. */
export function pointsOf(snapshot: StoreSnapshot, openids: readonly string[]): { granted: number; spent: number } {
  const ids = new Set(snapshot.users.filter((u) => openids.includes(u.openid)).map((u) => u.id))
  let granted = 0
  let left = 0
  for (const a of snapshot.authorizations) {
    if (!ids.has(a.userId) || a.type !== 'points') continue
    granted += a.totalPoints
    left += a.remainingPoints
  }
  return { granted, spent: granted - left }
}

/** The tokens of the sessions of `openid`'s user, oldest first. */
export function sessionTokensOf(snapshot: StoreSnapshot, openid: string): string[] {
  const user = snapshot.users.find((u) => u.openid === openid)
  return snapshot.sessions.filter((s) => s.userId === user?.id).map((s) => s.token)
}
